import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderTemplate } from '../templating/engine.ts';
import { builtInTasks } from '../tasks/index.ts';
import { ResourceCatalogue } from './catalogue.ts';
import { kindNamed } from './kinds.ts';
import { ResourceService } from './service.ts';
import type { ConfigResourceStore } from '../storage/ports.ts';
import {
  convertTextScalars,
  dropGitBackupSettings,
  migrateBehaviorSet,
  migrateConcatenation,
  migrateHttpCallSet,
  migrateLegacyCondition,
  migrateOutputSet,
  migratePropertySetter,
  migrateQuickReplyDefault,
  migrateTemplateHelpers,
  migrateText,
  migrateUntypedPropertyValue,
  typeLegacyOutputItem,
} from './upstream-migrations.ts';

/** Validation only: the store is never reached. */
const resources = new ResourceService({} as ConfigResourceStore, new ResourceCatalogue(builtInTasks));
const validate = (kind: string, body: unknown) => resources.validate(kindNamed(kind), body);

test('agents: gitBackupSettings (releases 4.x) is dropped', () => {
  const agent = { packages: [], gitBackupSettings: { isAutoPush: false, repositoryUrl: null } };
  assert.deepEqual(dropGitBackupSettings(agent), { packages: [] });
  assert.deepEqual(validate('agent', agent), { packages: [] });
});

test('output sets: the type of an output position is dropped, quick replies carry isDefault', () => {
  const set = {
    outputSet: [
      {
        action: 'welcome',
        outputs: [{ type: 'textInput', valueAlternatives: ['Hi'] }],
        quickReplies: [{ value: 'Yes', expressions: 'confirmation(yes)', default: false }],
      },
    ],
  };
  const expected = {
    outputSet: [
      {
        action: 'welcome',
        outputs: [{ valueAlternatives: ['Hi'] }],
        quickReplies: [{ value: 'Yes', expressions: 'confirmation(yes)', isDefault: false }],
      },
    ],
  };
  assert.deepEqual(migrateOutputSet(set), expected);
  assert.deepEqual(validate('output', set), expected);
});

test('quick replies: default becomes isDefault; both given is left for the schema to refuse', () => {
  assert.deepEqual(migrateQuickReplyDefault({ value: 'a', default: true }), { value: 'a', isDefault: true });
  assert.deepEqual(migrateQuickReplyDefault({ value: 'a', default: true, isDefault: false }), {
    value: 'a',
    default: true,
    isDefault: false,
  });
  assert.throws(
    () =>
      validate('output', {
        outputSet: [{ action: 'a', quickReplies: [{ value: 'a', default: true, isDefault: false }] }],
      }),
    /default/,
  );
});

test('output items without a type are typed from their fields, as the original does', () => {
  assert.deepEqual(typeLegacyOutputItem({ text: 'Hi', delay: 100, extra: 1 }), {
    text: 'Hi',
    delay: 100,
    type: 'text',
  });
  assert.deepEqual(typeLegacyOutputItem({ uri: 'https://x/y.png', alt: 'y', text: '' }), {
    uri: 'https://x/y.png',
    alt: 'y',
    type: 'image',
  });
  assert.deepEqual(typeLegacyOutputItem({ placeholder: 'pin', isPassword: 'true' }), {
    placeholder: 'pin',
    type: 'inputField',
    subType: 'password',
  });
  assert.deepEqual(typeLegacyOutputItem({ onPress: 'go', label: 'Go' }), {
    onPress: 'go',
    label: 'Go',
    type: 'button',
  });
  assert.deepEqual(typeLegacyOutputItem({ type: 'other', colour: 'red', size: 3 }), { type: 'other', colour: 'red' });
  assert.deepEqual(typeLegacyOutputItem({ type: 'botFace', imageUri: 'x' }), { type: 'agentFace', imageUri: 'x' });
  const typed = { type: 'text', text: 'Hi', unknown: 1 };
  assert.equal(typeLegacyOutputItem(typed), typed, 'a typed item is left for the schema');
  assert.equal(typeLegacyOutputItem('plain'), 'plain');
});

test('behavior sets: rule children and condition values/children (releases 4.x) become conditions and configs', () => {
  const condition = {
    type: 'negation',
    values: {},
    children: [{ type: 'occurrence', values: { maxTimesOccurred: 0, behaviorRuleName: 'Welcome' } }],
  };
  assert.deepEqual(migrateLegacyCondition(condition), {
    type: 'negation',
    configs: {},
    conditions: [{ type: 'occurrence', configs: { maxTimesOccurred: '0', behaviorRuleName: 'Welcome' } }],
  });
  const set = {
    behaviorGroups: [{ name: 'g', behaviorRules: [{ name: 'r', actions: ['a'], children: [condition] }] }],
  };
  const migrated = migrateBehaviorSet(set);
  assert.deepEqual(migrated, {
    behaviorGroups: [
      { name: 'g', behaviorRules: [{ name: 'r', actions: ['a'], conditions: [migrateLegacyCondition(condition)] }] },
    ],
  });
  assert.deepEqual(validate('behavior', set), migrated);
});

test('property instructions: an untyped value moves to the field of its type', () => {
  const cases: [unknown, Record<string, unknown>][] = [
    ['text', { valueString: 'text' }],
    [{ a: 1 }, { valueObject: { a: 1 } }],
    [[1, 2], { valueList: [1, 2] }],
    [true, { valueBoolean: true }],
    [3, { valueInt: 3 }],
    [2.5, { valueFloat: 2.5 }],
    [null, {}],
    ['[[${@java.util.UUID@randomUUID()}]]', { valueString: '{uuidUtils:generateUUID()}' }],
  ];
  for (const [value, fields] of cases) {
    assert.deepEqual(
      migrateUntypedPropertyValue({ name: 'p', value }),
      { name: 'p', ...fields },
      JSON.stringify(value),
    );
  }
  const both = { name: 'p', value: 'a', valueString: 'b' };
  assert.equal(migrateUntypedPropertyValue(both), both, 'value besides a typed field is left for the schema');
  const setter = {
    setOnActions: [{ actions: ['*'], setProperties: [{ name: 'p', value: 'x', scope: 'conversation' }] }],
  };
  const expected = {
    setOnActions: [{ actions: ['*'], setProperties: [{ name: 'p', scope: 'conversation', valueString: 'x' }] }],
  };
  assert.deepEqual(migratePropertySetter(setter), expected);
  assert.deepEqual(validate('property', setter), {
    setOnActions: [{ actions: ['*'], setProperties: [{ name: 'p', scope: 'conversation', valueString: 'x' }] }],
  });
});

test('HTTP-call sets: targetServer / targetServerUri become targetServerUrl; instructions lose value', () => {
  const call = {
    name: 'c',
    actions: ['a'],
    request: { path: '/x', method: 'get' },
    postResponse: { propertyInstructions: [{ name: 'n', value: 'v' }] },
  };
  for (const old of ['targetServer', 'targetServerUri']) {
    const migrated = migrateHttpCallSet({ [old]: 'https://api.example.org', httpCalls: [call] });
    assert.deepEqual(migrated, {
      targetServerUrl: 'https://api.example.org',
      httpCalls: [{ ...call, postResponse: { propertyInstructions: [{ name: 'n', valueString: 'v' }] } }],
    });
  }
  const mine = { targetServerUrl: 'https://a', httpCalls: [] };
  assert.deepEqual(migrateHttpCallSet(mine), mine);
});

test('templates: Thymeleaf inline expressions, blocks, utility objects and vault prefixes', () => {
  const cases: [string, string][] = [
    ['[[${memory.current.input}]]', '{memory.current.input}'],
    ['Hi [[${ properties.name }]] and [(${context.x})]!', 'Hi {properties.name} and {context.x}!'],
    ['[# th:each="city : ${properties.cities}"][[${city}]], [/]', '{#for city in properties.cities}{city}, {/for}'],
    ['[# th:each="c, stat : ${list}"][# th:if="${c.ok}"]ok[/][/]', '{#for c in list}{#if c.ok}ok{/if}{/for}'],
    ['[# th:unless="${done}"]todo[/]', '{#if !(done)}todo{/if}'],
    ['${eddivault:openai} and ${svcvault:tenant/key}', '${vault:openai} and ${vault:tenant/key}'],
    ['${vault:kept} {already.brace} plain [/] [[ x ]]', '${vault:kept} {already.brace} plain [/] [[ x ]]'],
    ['[[${#strings.substring(properties.name, 0, 3)}]]', '{properties.name.substring(0, 3)}'],
    // A cut of the original's location by position (upstream-locations.ts).
    ['[[${#strings.substring(properties.botLocation, 33, 57)}]]', '{uuidUtils:extractId(properties.botLocation)}'],
    [
      "[[${#strings.toLowerCase(#strings.replace(properties.botName, ' ', '-'))}]]-x",
      "{properties.botName.replace(' ', '-').toLowerCase()}-x",
    ],
    ['[[${#strings.length(memory.current.input)}]]', '{memory.current.input.length()}'],
    ['[[${#uuidUtils.generateUUID()}]]', '{uuidUtils:generateUUID()}'],
    [
      '{#uuidUtils.generateUUID()} {#json.serialize(properties.x)}',
      '{uuidUtils:generateUUID()} {json:serialize(properties.x)}',
    ],
    ['{#strings.toUpperCase(properties.name)}', '{properties.name.toUpperCase()}'],
    ['{#if properties.x}#hashtag{/if}', '{#if properties.x}#hashtag{/if}'],
    ['[[${@java.util.UUID@randomUUID()}]]', '{uuidUtils:generateUUID()}'],
    ['{|[[${x}]] #strings.trim(y)|} [[${z}]] {|a|}', '{|[[${x}]] #strings.trim(y)|} {z} {|a|}'],
  ];
  for (const [legacy, migrated] of cases) assert.equal(migrateText(legacy), migrated, legacy);
  assert.equal(migrateTemplateHelpers('no helpers here'), 'no helpers here');
});

test('templates: Thymeleaf string concatenation becomes text and expressions', () => {
  const cases: [string, string][] = [
    ["[[${properties.a + '/' + properties.b}]]", '{properties.a}/{properties.b}'],
    ["x [(${'id-' + memory.current.input})] y", 'x id-{memory.current.input} y'],
    ["[[${properties.a + '}' + properties.b}]]", "[[${properties.a + '}' + properties.b}]]"],
    ["[[${properties.a + 'it\\'s'}]]", "{properties.a}it's"],
    ['[[${properties.count + 1}]]', '[[${properties.count + 1}]]'],
    ['no expression + here', 'no expression + here'],
  ];
  for (const [legacy, migrated] of cases) assert.equal(migrateConcatenation(legacy), migrated, legacy);
  assert.equal(
    renderTemplate(migrateText("[[${properties.a + '/' + properties.b}]]"), { properties: { a: 'x', b: 'y' } }),
    'x/y',
  );
});

test("templates: literals spelling a template (the Bot Fathers' way to write one) become raw text, migrated", () => {
  const data = { properties: { api: 'https://api.example.org', token: 't' } };
  const cases: [string, string, string][] = [
    ["[['[[${'+'properties.api'+'}]]']]", '{|{properties.api}|}', '{properties.api}'],
    ["Bearer [['[(${'+'properties.token'+'})]']]", 'Bearer {|{properties.token}|}', 'Bearer {properties.token}'],
    [
      "[['[(${'+'#strings.substring(properties.log,1)'+'})]']]",
      '{|{properties.log.substring(1)}|}',
      '{properties.log.substring(1)}',
    ],
  ];
  for (const [legacy, migrated, rendered] of cases) {
    assert.equal(migrateText(legacy), migrated, legacy);
    assert.equal(renderTemplate(migrateText(legacy), data), rendered, legacy);
    assert.equal(migrateText(rendered), rendered, 'what it writes is already migrated');
  }
  assert.equal(migrateText("[['plain'+' text']]"), "[['plain'+' text']]", 'literals that spell no template');
});

test('templates: migrated helpers render with the engine', () => {
  const data = { properties: { botName: 'My Bot', loc: 'svc://ai.svc.agent/agentstore/agents/abc?version=2' } };
  const render = (text: string) => renderTemplate(migrateText(text), data);
  assert.equal(render("[[${#strings.toLowerCase(#strings.replace(properties.botName, ' ', '-'))}]]"), 'my-bot');
  assert.equal(render('[[${#strings.substring(properties.loc, 37, 40)}]]'), 'abc');
  assert.match(render('{#uuidUtils.generateUUID()}'), /^[0-9a-f-]{36}$/);
});

test('templates: #strings calls among arguments, arithmetic and json.serialize without # (Bot Father 1.0)', () => {
  const cases: Array<[string, string]> = [
    [
      '[(${#strings.substring(properties.log,1,#strings.length(properties.log)-2)})]',
      '{properties.log.substring(1, properties.log.length()-2)}',
    ],
    ["[[${#strings.length('ab' + properties.x)}]]", "{('ab' + properties.x).length()}"],
    [
      '[(${json.serialize(conversationLog.generate().toObject())})]',
      '{json:serialize(conversationLog.generate().toObject())}',
    ],
    ['[[${properties.json.serialize}]]', '{properties.json.serialize}'],
    ['[[${#strings.substring(properties.x, 1}]]', '{#strings.substring(properties.x, 1}'], // unclosed: left
  ];
  for (const [original, migrated] of cases) assert.equal(migrateText(original), migrated, original);
  const data = { properties: { log: '[ {"a" : 1}, {"b" : 2} ]' } };
  assert.equal(renderTemplate(migrateText(cases[0]![0]), data), ' {"a" : 1}, {"b" : 2}');
});

test('booleans and numbers written as text are converted where the schema wants them', () => {
  const schema = {
    type: 'object',
    properties: {
      flag: { type: 'boolean' },
      count: { type: 'integer' },
      ratio: { type: 'number' },
      name: { type: 'string' },
      list: { type: 'array', items: { type: 'integer' } },
    },
  };
  assert.deepEqual(
    convertTextScalars(schema, { flag: 'false', count: '2', ratio: '0.5', name: 'true', list: ['1', 'x'] }),
    { flag: false, count: 2, ratio: 0.5, name: 'true', list: [1, 'x'] },
  );
  assert.deepEqual(convertTextScalars(schema, { flag: 'yes', count: '2.5', ratio: 'Infinity' }), {
    flag: 'yes',
    count: '2.5',
    ratio: 'Infinity',
  });
});

test('the original\'s parser corrections (lookupIfKnown "false", distance "2") are accepted as typed values', () => {
  const workflow = {
    packageExtensions: [
      {
        type: 'svc://ai.svc.parser',
        extensions: {
          corrections: [
            {
              type: 'svc://ai.svc.parser.corrections.stemming',
              config: { language: 'english', lookupIfKnown: 'false' },
            },
            { type: 'svc://ai.svc.parser.corrections.levenshtein', config: { distance: '2' } },
          ],
        },
        config: {},
      },
    ],
  };
  const body = validate('workflow', workflow) as typeof workflow;
  const corrections = body.packageExtensions[0]!.extensions.corrections;
  assert.deepEqual(corrections[0]!.config, { language: 'english', lookupIfKnown: false });
  assert.deepEqual(corrections[1]!.config, { distance: 2 });
  assert.throws(
    () =>
      validate('workflow', {
        packageExtensions: [
          {
            type: 'svc://ai.svc.parser',
            extensions: {
              corrections: [{ type: 'svc://ai.svc.parser.corrections.levenshtein', config: { distance: 'two' } }],
            },
          },
        ],
      }),
    /distance/,
  );
});

test('our own format stays strict: an unknown field is still refused', () => {
  assert.throws(() => validate('agent', { packages: [], surprise: 1 }), /surprise/);
  assert.throws(
    () => validate('output', { outputSet: [{ action: 'a', outputs: [{ valueAlternatives: [], kind: 'x' }] }] }),
    /kind/,
  );
});
