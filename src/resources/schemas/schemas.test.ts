import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ValidateFunction } from 'ajv';
import { AppError } from '../../errors.ts';
import type { ResourceKindDefinition, SemanticProblem } from '../kinds.ts';
import { compileBodyValidator, describeSchemaError } from '../validation.ts';
import { agentKind } from './agent.ts';
import { behaviorKind } from './behavior.ts';
import { dictionaryKind } from './dictionary.ts';
import { httpCallsKind } from './httpcalls.ts';
import { llmKind } from './llm.ts';
import { outputKind } from './output.ts';
import { propertyKind } from './property.ts';
import { builtInTasks } from '../../tasks/index.ts';
import { workflowKindFor } from './workflow.ts';

const workflowKind = workflowKindFor(builtInTasks);

// ---------------------------------------------------------------------------------------------------------------
// Harness: rename aliases, validate with the strict body validator, run the semantic checks
// ---------------------------------------------------------------------------------------------------------------

const validators = new Map<string, ValidateFunction>();

function validatorOf(kind: ResourceKindDefinition): ValidateFunction {
  let validate = validators.get(kind.name);
  if (!validate) {
    validate = compileBodyValidator(kind.schema);
    validators.set(kind.name, validate);
  }
  return validate;
}

/** The translated body; throws the 400 the store would answer when the schema refuses it. */
function accept(kind: ResourceKindDefinition, body: unknown): unknown {
  const renamed = kind.renameAliases(body);
  const validate = validatorOf(kind);
  if (!validate(renamed)) throw describeSchemaError(validate.errors![0]!, kind.title);
  return renamed;
}

function problems(kind: ResourceKindDefinition, body: unknown): readonly SemanticProblem[] {
  return kind.checkSemantics(accept(kind, body));
}

function assertValid(kind: ResourceKindDefinition, body: unknown): void {
  assert.deepEqual(problems(kind, body), []);
}

function schemaError(kind: ResourceKindDefinition, body: unknown): AppError {
  try {
    accept(kind, body);
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.kind, 'invalid');
    return error;
  }
  assert.fail('the schema accepted the body');
}

function assertUnknownField(kind: ResourceKindDefinition, body: unknown, field: string, path: string): void {
  const error = schemaError(kind, body);
  assert.equal(error.details.field, field);
  assert.equal(error.details.path, path);
  assert.match(error.message, new RegExp(`Unknown field '${field}'`));
}

function assertProblem(kind: ResourceKindDefinition, body: unknown, path: string, pattern?: RegExp): void {
  const found = problems(kind, body);
  assert.ok(
    found.some((p) => p.path === path && (!pattern || pattern.test(p.message))),
    `expected a problem at ${path}${pattern ? ` matching ${pattern}` : ''}, got ${JSON.stringify(found)}`,
  );
}

function assertAliasConflict(kind: ResourceKindDefinition, body: unknown, a: string, b: string, path: string): void {
  assert.throws(
    () => kind.renameAliases(body),
    (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.kind, 'invalid');
      assert.ok(error.message.includes(`'${a}'`) && error.message.includes(`'${b}'`), error.message);
      assert.equal(error.details.path, path);
      return true;
    },
  );
}

const clone = <T>(value: T): T => structuredClone(value);

const ID1 = '0000018f2a1b2c3d4e5f6071';
const ID2 = '0000018f2a1b2c3d4e5f6072';
const ID3 = '0000018f2a1b2c3d4e5f6073';
const ID4 = '0000018f2a1b2c3d4e5f6074';

// ---------------------------------------------------------------------------------------------------------------
// Examples (BEHAVIOUR Appendix C and §§ 4.1, 5.1, 7.1, 8.1, 9.1)
// ---------------------------------------------------------------------------------------------------------------

const basicDictionary = {
  language: 'en',
  words: [
    { word: 'hello', expressions: 'greeting(hello)', frequency: 0 },
    { word: 'hi', expressions: 'greeting(hi)' },
    { word: 'bye', expressions: 'goodbye(bye)' },
    { word: 'question', expressions: 'two_options_question(question)' },
    { word: 'property', expressions: 'property(someMeaning(someValue))' },
  ],
  phrases: [
    { phrase: 'good afternoon', expressions: 'greeting(good_afternoon)' },
    { phrase: 'see you', expressions: 'goodbye(see_you)' },
  ],
  regExs: [{ regEx: '[A-Z]{3}\\d{3}', expressions: 'flight(number)' }],
};

const basicRules = {
  behaviorGroups: [
    {
      name: 'Smalltalk',
      executionStrategy: 'executeUntilFirstSuccess',
      behaviorRules: [
        {
          name: 'Welcome',
          actions: ['welcome'],
          conditions: [{ type: 'occurrence', configs: { maxTimesOccurred: '0', behaviorRuleName: 'Welcome' } }],
        },
        {
          name: 'Personal_Greeting',
          actions: ['greet_personally'],
          conditions: [
            { type: 'inputmatcher', configs: { expressions: 'greeting(*)', occurrence: 'currentStep' } },
            {
              type: 'contextmatcher',
              configs: { contextKey: 'userInfo', contextType: 'object', objectKeyPath: 'username' },
            },
          ],
        },
        {
          name: 'Greeting',
          actions: ['greet'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
        },
        {
          name: 'Goodbye',
          actions: ['say_goodbye', 'CONVERSATION_END'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'goodbye(*)' } }],
        },
        {
          name: 'Multiple_Choice',
          actions: ['giving_two_options'],
          conditions: [{ type: 'inputmatcher', configs: { expressions: 'two_options_question(*)' } }],
        },
      ],
    },
    {
      name: 'ContextStuff',
      executionStrategy: 'executeAll',
      behaviorRules: [
        {
          name: 'ContextString',
          actions: ['context_string'],
          conditions: [
            {
              type: 'contextmatcher',
              configs: { contextKey: 'someContextKeyString', contextType: 'string', string: 'someContextValue' },
            },
          ],
        },
        {
          name: 'ContextExpressions',
          actions: ['context_expressions'],
          conditions: [
            {
              type: 'contextmatcher',
              configs: { contextKey: 'k', contextType: 'expressions', expressions: 'expression(someValue)' },
            },
          ],
        },
        {
          name: 'ContextObject',
          actions: ['context_object'],
          conditions: [
            {
              type: 'contextmatcher',
              configs: {
                contextKey: 'userInfo',
                contextType: 'object',
                objectKeyPath: 'username',
                objectValue: 'John',
              },
            },
          ],
        },
      ],
    },
    {
      name: 'ComplexRulesGroup',
      behaviorRules: [
        {
          name: 'FullGreeting',
          actions: ['full_greeting'],
          conditions: [
            {
              type: 'connector',
              configs: { operator: 'AND' },
              conditions: [
                { type: 'inputmatcher', configs: { expressions: 'greeting(*)' } },
                {
                  type: 'contextmatcher',
                  configs: { contextKey: 'userInfo', contextType: 'object', objectKeyPath: 'username' },
                },
              ],
            },
          ],
        },
        {
          name: 'NotGreetedYet',
          actions: ['not_greeted'],
          conditions: [
            {
              type: 'negation',
              conditions: [{ type: 'occurrence', configs: { minTimesOccurred: '1', behaviorRuleName: 'Greeting' } }],
            },
            { type: 'inputmatcher', configs: { expressions: 'status_check(*)' } },
          ],
        },
        {
          name: 'Others',
          actions: ['others'],
          conditions: [
            { type: 'actionmatcher', configs: { actions: 'greet, welcome', occurrence: 'lastStep' } },
            { type: 'dynamicvaluematcher', configs: { valuePath: 'memory.current.input', equals: 'Vienna' } },
            { type: 'sizematcher', configs: { valuePath: 'memory.current.input', min: '1', max: '-1' } },
            { type: 'dependency', configs: { reference: 'Greeting' } },
          ],
        },
        { name: 'Always', actions: ['always'] },
      ],
    },
  ],
  appendActions: true,
  expressionsAsActions: false,
};

const basicOutputs = {
  language: 'en',
  outputSet: [
    {
      action: 'welcome',
      timesOccurred: 0,
      outputs: [{ valueAlternatives: [{ type: 'text', text: 'Welcome! I am <product>.' }] }],
    },
    {
      action: 'greet',
      timesOccurred: 0,
      outputs: [
        { valueAlternatives: [{ type: 'text', text: 'Hi there! Nice to meet up! :-)', delay: 0 }, 'Hello there!'] },
      ],
    },
    {
      action: 'greet',
      timesOccurred: 1,
      outputs: [
        {
          valueAlternatives: [
            { type: 'text', text: 'Did we already say hi ?! Well, twice is better than not at all! ;-)' },
          ],
        },
      ],
    },
    {
      action: 'greet_personally',
      outputs: [{ valueAlternatives: [{ type: 'text', text: 'Hello {userInfo.username}! Nice to meet you! :-)' }] }],
    },
    {
      action: 'say_goodbye',
      outputs: [{ valueAlternatives: [{ type: 'text', text: 'See you soon!' }] }],
      quickReplies: [{ value: 'Bye, bye {userInfo.username}!!', expressions: 'goodbye(bye)', isDefault: true }],
    },
    {
      action: 'giving_two_options',
      outputs: [
        {
          valueAlternatives: [
            { type: 'text', text: 'Here is your multiple choice question...' },
            { type: 'image', uri: 'https://example.com/q.png', alt: 'question' },
            { type: 'agentFace', uri: 'https://example.com/face.png', delay: 200 },
            { type: 'quickReply', value: 'Maybe', expressions: 'quickReply(maybe)', isDefault: false },
            {
              type: 'inputField',
              subType: 'text',
              placeholder: 'Your answer',
              label: 'Answer',
              defaultValue: '',
              validation: { minLength: 1, maxLength: 100, validationErrorMessage: 'Too long' },
            },
            { type: 'applicationLink', path: '/help', label: 'Help', delay: 0 },
            { type: 'button', buttonType: 'primary', label: 'OK', onPress: 'ok' },
            { type: 'other', anything: 'goes', count: 2, flag: true },
          ],
        },
      ],
      quickReplies: [
        { value: 'Option 1', expressions: 'quickReply(option1)' },
        { value: 'Option 2', expressions: 'quickReply(option2)' },
      ],
    },
  ],
};

const dictionaryRef = `svc://ai.svc.regulardictionary/regulardictionarystore/regulardictionaries/${ID1}?version=1`;
const behaviorRef = `svc://ai.svc.behavior/behaviorstore/behaviorsets/${ID2}?version=1`;
const outputRef = `svc://ai.svc.output/outputstore/outputsets/${ID3}?version=1`;
const httpCallsRef = `svc://ai.svc.httpcalls/httpcallsstore/httpcalls/${ID4}?version=2`;
const llmRef = `svc://ai.svc.llm/langchainstore/langchains/${ID4}?version=1`;
const propertyRef = `svc://ai.svc.property/propertysetterstore/propertysetters/${ID1}?version=3`;
const workflowRef = `svc://ai.svc.package/packagestore/packages/${ID1}?version=1`;

const inlineSetOnActions = [
  {
    actions: ['CONVERSATION_START'],
    setProperties: [{ name: 'count', valueInt: 0, scope: 'longTerm', override: false }],
  },
  { actions: ['*'], setProperties: [{ name: 'count', fromObjectPath: 'properties.count+1', scope: 'longTerm' }] },
  {
    actions: ['current_weather_in_city'],
    setProperties: [
      { name: 'chosenCity', fromObjectPath: 'memory.current.input', scope: 'conversation' },
      {
        name: 'currentWeather',
        fromObjectPath: 'memory.current.httpCalls.currentWeather.weather[0].description',
        scope: 'step',
      },
      {
        name: 'currentTemperature',
        fromObjectPath: 'memory.current.httpCalls.currentWeather.main.temp',
        scope: 'step',
      },
    ],
  },
];

const weatherWorkflow = {
  packageExtensions: [
    {
      type: 'svc://ai.svc.parser',
      extensions: {
        normalizer: [{ type: 'svc://ai.svc.parser.normalizers.punctuation', config: { removePunctuation: true } }],
        dictionaries: [
          { type: 'svc://ai.svc.parser.dictionaries.integer' },
          { type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionaryRef } },
        ],
        corrections: [
          { type: 'svc://ai.svc.parser.corrections.levenshtein', config: { distance: 2 } },
          { type: 'svc://ai.svc.parser.corrections.stemming', config: { language: 'english', lookupIfKnown: false } },
          { type: 'svc://ai.svc.parser.corrections.mergedTerms' },
        ],
      },
      config: { includeUnknown: true, maxInputTokens: 200 },
    },
    { type: 'svc://ai.svc.behavior', config: { uri: behaviorRef, appendActions: true, expressionsAsActions: false } },
    { type: 'svc://ai.svc.httpcalls', config: { uri: httpCallsRef } },
    { type: 'svc://ai.svc.property', config: { setOnActions: inlineSetOnActions } },
    { type: 'svc://ai.svc.property', config: { uri: propertyRef } },
    { type: 'svc://ai.svc.llm', extensions: { uri: llmRef }, config: {} },
    { type: 'svc://ai.svc.output', config: { uri: outputRef } },
    { type: 'svc://ai.svc.templating', config: {} },
  ],
};

const basicAgent = {
  packages: [workflowRef],
  channels: [
    {
      type: 'svc://ai.svc.channel.messenger',
      config: { appSecret: '${vault:APP_SECRET}', verificationToken: '${vault:VERIFY}', pageAccessToken: '' },
    },
  ],
  description: 'Says hello.',
  a2aEnabled: true,
  a2aSkills: ['greeting', 'weather'],
};

const propertySetter = {
  setOnActions: inlineSetOnActions,
  propertyInstructions: [
    { name: 'lastInput', fromObjectPath: 'memory.current.input', scope: 'conversation' },
    { name: 'profile', valueObject: { a: 1 }, scope: 'longTerm', visibility: 'global' },
    { name: 'tags', valueList: ['x', 2], scope: 'step' },
    { name: 'ratio', valueFloat: 0.5, valueBoolean: true, valueString: 'x', scope: 'secret' },
  ],
};

const weatherCalls = {
  targetServerUrl: 'https://api.openweathermap.org/data/2.5',
  httpCalls: [
    {
      name: 'currentWeather',
      description: 'Current weather in a city',
      actions: ['current_weather_in_city'],
      saveResponse: true,
      responseObjectName: 'currentWeather',
      responseHeaderObjectName: 'currentWeatherHeaders',
      fireAndForget: false,
      isBatchCalls: false,
      iterationObjectName: 'obj',
      timeoutInMillis: 5000,
      maxResponseSizeInBytes: 100000,
      parameters: { city: 'name of the city (used when exposed as an LLM tool)' },
      preRequest: {
        propertyInstructions: [{ name: 'city', fromObjectPath: 'memory.current.input', scope: 'step' }],
        batchRequests: {
          pathToTargetArray: 'cities',
          iterationObjectName: 'city',
          templateFilterExpression: 'true',
          executeCallsSequentially: true,
        },
        delayBeforeExecutingInMillis: 0,
      },
      request: {
        path: '/weather',
        method: 'get',
        headers: { 'X-Api-Key': '${vault:OWM_KEY}' },
        queryParams: { q: '{memory.current.input}', units: 'metric', APPID: '${vault:OWM_KEY}' },
        contentType: '',
        body: '',
      },
      postResponse: {
        propertyInstructions: [
          {
            name: 'weatherText',
            fromObjectPath: 'currentWeather',
            scope: 'conversation',
            convertToObject: false,
            runOnValidationError: false,
            httpCodeValidator: { runOnHttpCode: [200, 201], skipOnHttpCode: [404] },
          },
        ],
        outputBuildInstructions: [
          {
            pathToTargetArray: 'currentWeather.weather',
            iterationObjectName: 'w',
            outputType: 'text',
            outputValue: '{w.description}',
          },
        ],
        qrBuildInstruction: {
          pathToTargetArray: 'currentWeather.weather',
          iterationObjectName: 'w',
          quickReplyValue: '{w.main}',
          quickReplyExpressions: 'weather({w.main})',
        },
        retryApiCallInstruction: {
          maxRetries: 3,
          exponentialBackoffDelayInMillis: 1000,
          maxBackoffDelayInMillis: 30000,
          retryOnHttpCodes: [502, 503],
          responseValuePathMatchers: [{ valuePath: 'cod', equals: '200', trueIfNoMatch: true }],
        },
      },
    },
    { name: 'fetch', actions: ['httpcall(fetch)'], request: { path: '/api/data', method: 'GET' } },
  ],
};

const llmConfig = {
  tasks: [
    {
      id: 'assistant',
      type: 'openai',
      description: 'General assistant',
      actions: ['ask_llm', '*'],
      parameters: {
        apiKey: '${vault:OPENAI_KEY}',
        modelName: 'gpt-4o-mini',
        temperature: '0.3',
        systemMessage: 'You are helpful.',
        sendConversation: 'true',
        addToOutput: 'true',
      },
      preRequest: { propertyInstructions: [{ name: 'q', fromObjectPath: 'memory.current.input', scope: 'step' }] },
      postResponse: { propertyInstructions: [{ name: 'answer', fromObjectPath: 'assistant', scope: 'conversation' }] },
      responseObjectName: 'assistant',
      responseMetadataObjectName: 'assistantMeta',
      tools: [httpCallsRef],
      enableBuiltInTools: true,
      builtInToolsWhitelist: ['calculator', 'datetime'],
      enableHttpCallTools: true,
      enableMcpCallTools: false,
      conversationHistoryLimit: 10,
      maxContextTokens: -1,
      anchorFirstSteps: 2,
      retry: { maxAttempts: 3, backoffDelayMs: 1000, backoffMultiplier: 2.0, maxBackoffDelayMs: 10000 },
      streamingTimeoutSeconds: 120,
    },
    {
      id: 'local',
      type: 'ollama',
      actions: ['ask_local'],
      parameters: { model: 'llama3', baseUrl: 'http://localhost:11434' },
    },
  ],
};

// ---------------------------------------------------------------------------------------------------------------
// Kind metadata
// ---------------------------------------------------------------------------------------------------------------

describe('kind definitions', () => {
  const expected: [ResourceKindDefinition, string, string, string, string[], string, string[]][] = [
    [
      dictionaryKind,
      'dictionary',
      'dictionary',
      'regulardictionary',
      ['dictionary'],
      '/regulardictionarystore/regulardictionaries',
      ['/dictionarystore/dictionaries'],
    ],
    [
      behaviorKind,
      'behavior',
      'behavior set',
      'behavior',
      ['rules'],
      '/behaviorstore/behaviorsets',
      ['/rulestore/rulesets'],
    ],
    [outputKind, 'output', 'output set', 'output', [], '/outputstore/outputsets', []],
    [
      workflowKind,
      'workflow',
      'workflow',
      'package',
      ['workflow'],
      '/packagestore/packages',
      ['/workflowstore/workflows'],
    ],
    [agentKind, 'agent', 'agent', 'agent', ['bot'], '/agentstore/agents', ['/botstore/bots']],
    [propertyKind, 'property', 'property setter', 'property', [], '/propertysetterstore/propertysetters', []],
    [
      httpCallsKind,
      'httpcalls',
      'HTTP-call set',
      'httpcalls',
      ['apicalls'],
      '/httpcallsstore/httpcalls',
      ['/apicallstore/apicalls'],
    ],
    [llmKind, 'llm', 'LLM configuration', 'llm', ['langchain'], '/langchainstore/langchains', ['/llmstore/llms']],
  ];
  for (const [kind, name, title, uriType, aliases, storePath, legacy] of expected) {
    it(`${name} is described as the contract says`, () => {
      assert.equal(kind.name, name);
      assert.equal(kind.title, title);
      assert.equal(kind.uriType, uriType);
      assert.deepEqual([...kind.uriTypeAliases], aliases);
      assert.equal(kind.storePath, storePath);
      assert.deepEqual([...kind.legacyStorePaths], legacy);
      const schema = kind.schema as Record<string, unknown>;
      assert.equal(typeof schema.title, 'string');
      assert.equal(schema.$id, undefined);
      assert.doesNotMatch(JSON.stringify(schema), /"(\$id|\$ref|format)"/);
    });
  }

  it('every object schema is closed unless it is a declared free map', () => {
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) {
        for (const [i, n] of node.entries()) walk(n, `${path}[${i}]`);
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Record<string, unknown>;
      if (schema.type === 'object' && schema.properties && !schema.allOf) {
        assert.notEqual(schema.additionalProperties, undefined, `open object at ${path}`);
        assert.notEqual(schema.additionalProperties, true, `open object at ${path}`);
      }
      for (const [key, value] of Object.entries(schema)) if (key !== 'if') walk(value, `${path}.${key}`);
    };
    for (const kind of [
      dictionaryKind,
      behaviorKind,
      outputKind,
      workflowKind,
      agentKind,
      propertyKind,
      httpCallsKind,
      llmKind,
    ])
      walk(kind.schema, kind.name);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Dictionary
// ---------------------------------------------------------------------------------------------------------------

describe('dictionary', () => {
  it('accepts the basic agent dictionary', () => assertValid(dictionaryKind, basicDictionary));
  it('accepts an empty dictionary', () => assertValid(dictionaryKind, {}));

  it('reports an unknown field with its JSON path', () => {
    const body = clone(basicDictionary) as Record<string, unknown>;
    (body.phrases as Record<string, unknown>[])[1]!.exprs = 'x';
    assertUnknownField(dictionaryKind, body, 'exprs', '$.phrases[1].exprs');
  });

  it('refuses a word with a space and a missing word', () => {
    assert.match(schemaError(dictionaryKind, { words: [{ word: 'two words' }] }).message, /\$\.words\[0\]\.word/);
    assert.equal(schemaError(dictionaryKind, { words: [{ expressions: 'a(b)' }] }).details.path, '$.words[0].word');
  });

  it('translates lang, exp and exps', () => {
    const upstream = {
      lang: 'de',
      words: [{ word: 'hallo', exp: 'greeting(hallo)' }],
      phrases: [{ phrase: 'guten tag', exps: 'greeting(guten_tag)' }],
      regExs: [{ regEx: '\\d+', exp: 'number(x)' }],
    };
    const frozen = clone(upstream);
    assert.deepEqual(accept(dictionaryKind, upstream), {
      language: 'de',
      words: [{ word: 'hallo', expressions: 'greeting(hallo)' }],
      phrases: [{ phrase: 'guten tag', expressions: 'greeting(guten_tag)' }],
      regExs: [{ regEx: '\\d+', expressions: 'number(x)' }],
    });
    assert.deepEqual(upstream, frozen, 'the input is not modified');
  });

  it('refuses a name together with its alias', () => {
    assertAliasConflict(dictionaryKind, { lang: 'de', language: 'en' }, 'lang', 'language', '$');
    assertAliasConflict(
      dictionaryKind,
      { words: [{ word: 'a' }, { word: 'b', exp: 'x', expressions: 'y' }] },
      'exp',
      'expressions',
      '$.words[1]',
    );
    assertAliasConflict(dictionaryKind, { words: [{ word: 'b', exp: 'x', exps: 'y' }] }, 'exp', 'exps', '$.words[0]');
  });

  it('drops nulls given for optional fields, keeps them elsewhere', () => {
    assert.deepEqual(
      accept(dictionaryKind, { lang: null, words: [{ word: 'a', expressions: null, frequency: null }] }),
      {
        words: [{ word: 'a' }],
      },
    );
    assert.equal(schemaError(dictionaryKind, { words: [{ word: null }] }).details.path, '$.words[0].word');
    assertUnknownField(dictionaryKind, { words: [{ word: 'a', bogus: null }] }, 'bogus', '$.words[0].bogus');
  });

  it('treats __proto__ and constructor as ordinary unknown fields', () => {
    assertUnknownField(
      dictionaryKind,
      JSON.parse('{"__proto__": {"words": 1}, "words": []}'),
      '__proto__',
      '$.__proto__',
    );
    assertUnknownField(
      dictionaryKind,
      { words: [{ word: 'a', constructor: 'x' }] },
      'constructor',
      '$.words[0].constructor',
    );
    const renamed = dictionaryKind.renameAliases(JSON.parse('{"__proto__": {"lang": "x"}}')) as object;
    assert.equal(Object.getPrototypeOf(renamed), Object.prototype);
    assert.ok(Object.hasOwn(renamed, '__proto__'));
  });

  it('checks that regular expressions compile', () => {
    assertProblem(
      dictionaryKind,
      { regExs: [{ regEx: 'a+' }, { regEx: '(unclosed' }] },
      '$.regExs[1].regEx',
      /does not compile/,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Behavior set
// ---------------------------------------------------------------------------------------------------------------

describe('behavior set', () => {
  it('accepts the basic and complex rule sets', () => assertValid(behaviorKind, basicRules));

  it('reports an unknown field in a nested condition with its JSON path', () => {
    const body = clone(basicRules) as unknown as {
      behaviorGroups: { behaviorRules: { conditions: { conditions: Record<string, unknown>[] }[] }[] }[];
    };
    body.behaviorGroups[2]!.behaviorRules[0]!.conditions[0]!.conditions[1]!.config = {};
    assertUnknownField(
      behaviorKind,
      body,
      'config',
      '$.behaviorGroups[2].behaviorRules[0].conditions[0].conditions[1].config',
    );
  });

  it('refuses non-string configs and an unknown execution strategy', () => {
    const numeric = {
      behaviorGroups: [
        {
          behaviorRules: [
            {
              name: 'r',
              conditions: [{ type: 'occurrence', configs: { behaviorRuleName: 'r', maxTimesOccurred: 0 } }],
            },
          ],
        },
      ],
    };
    assert.equal(
      schemaError(behaviorKind, numeric).details.path,
      '$.behaviorGroups[0].behaviorRules[0].conditions[0].configs.maxTimesOccurred',
    );
    assert.equal(
      schemaError(behaviorKind, { behaviorGroups: [{ executionStrategy: 'all' }] }).details.path,
      '$.behaviorGroups[0].executionStrategy',
    );
  });

  it('translates ruleGroups and rules', () => {
    const upstream = { ruleGroups: [{ name: 'g', rules: [{ name: 'r', actions: ['a'], conditions: [] }] }] };
    assert.deepEqual(accept(behaviorKind, upstream), {
      behaviorGroups: [{ name: 'g', behaviorRules: [{ name: 'r', actions: ['a'], conditions: [] }] }],
    });
  });

  it('refuses a name together with its alias', () => {
    assertAliasConflict(behaviorKind, { ruleGroups: [], behaviorGroups: [] }, 'ruleGroups', 'behaviorGroups', '$');
    assertAliasConflict(
      behaviorKind,
      { behaviorGroups: [{ rules: [], behaviorRules: [] }] },
      'rules',
      'behaviorRules',
      '$.behaviorGroups[0]',
    );
  });

  const withCondition = (condition: unknown, extraRules: unknown[] = []) => ({
    behaviorGroups: [
      { name: 'g', behaviorRules: [{ name: 'R', actions: ['a'], conditions: [condition] }, ...extraRules] },
    ],
  });
  const at = '$.behaviorGroups[0].behaviorRules[0].conditions[0]';

  it('refuses an unknown condition type', () => {
    assertProblem(
      behaviorKind,
      withCondition({ type: 'regexmatcher', configs: {} }),
      `${at}.type`,
      /Unknown condition type 'regexmatcher'/,
    );
  });

  it('inputmatcher needs expressions and a legal occurrence', () => {
    assertValid(
      behaviorKind,
      withCondition({ type: 'inputmatcher', configs: { expressions: 'a(*)', occurrence: 'anyStep' } }),
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'inputmatcher', configs: { expressions: '  ' } }),
      `${at}.configs.expressions`,
      /'R'/,
    );
    assertProblem(behaviorKind, withCondition({ type: 'inputmatcher' }), `${at}.configs.expressions`);
    assertProblem(
      behaviorKind,
      withCondition({ type: 'inputmatcher', configs: { expressions: 'a', occurrence: 'sometimes' } }),
      `${at}.configs.occurrence`,
    );
  });

  it('actionmatcher needs actions and a legal occurrence', () => {
    assertValid(
      behaviorKind,
      withCondition({ type: 'actionmatcher', configs: { actions: 'greet', occurrence: 'never' } }),
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'actionmatcher', configs: { occurrence: 'never' } }),
      `${at}.configs.actions`,
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'actionmatcher', configs: { actions: 'x', occurrence: 'always' } }),
      `${at}.configs.occurrence`,
    );
  });

  it('occurrence needs a rule name and an integer bound', () => {
    assertValid(
      behaviorKind,
      withCondition({
        type: 'occurrence',
        configs: { behaviorRuleName: 'R', minTimesOccurred: '1', maxTimesOccurred: '-1' },
      }),
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'occurrence', configs: { maxTimesOccurred: '0' } }),
      `${at}.configs.behaviorRuleName`,
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'occurrence', configs: { behaviorRuleName: 'R' } }),
      `${at}.configs`,
      /minTimesOccurred/,
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'occurrence', configs: { behaviorRuleName: 'R', maxTimesOccurred: 'one' } }),
      `${at}.configs.maxTimesOccurred`,
    );
  });

  it('contextmatcher needs a key and a legal type', () => {
    assertValid(
      behaviorKind,
      withCondition({ type: 'contextmatcher', configs: { contextKey: 'k', contextType: 'string', string: 'v' } }),
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'contextmatcher', configs: { contextType: 'string' } }),
      `${at}.configs.contextKey`,
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'contextmatcher', configs: { contextKey: 'k' } }),
      `${at}.configs.contextType`,
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'contextmatcher', configs: { contextKey: 'k', contextType: 'array' } }),
      `${at}.configs.contextType`,
    );
  });

  it('negation and connector need nested conditions, checked recursively', () => {
    const child = { type: 'inputmatcher', configs: { expressions: 'a' } };
    assertValid(behaviorKind, withCondition({ type: 'negation', conditions: [child] }));
    assertValid(
      behaviorKind,
      withCondition({ type: 'connector', configs: { operator: 'OR' }, conditions: [child, child] }),
    );
    assertProblem(behaviorKind, withCondition({ type: 'negation' }), `${at}.conditions`);
    assertProblem(behaviorKind, withCondition({ type: 'connector', conditions: [] }), `${at}.conditions`);
    assertProblem(
      behaviorKind,
      withCondition({ type: 'connector', configs: { operator: 'XOR' }, conditions: [child] }),
      `${at}.configs.operator`,
    );
    assertProblem(
      behaviorKind,
      withCondition({
        type: 'negation',
        conditions: [{ type: 'connector', conditions: [{ type: 'inputmatcher', configs: {} }] }],
      }),
      `${at}.conditions[0].conditions[0].configs.expressions`,
    );
  });

  it('refuses conditions nested deeper than the schema describes', () => {
    let condition: Record<string, unknown> = { type: 'inputmatcher', configs: { expressions: 'a' } };
    for (let i = 0; i < 7; i++) condition = { type: 'negation', conditions: [condition] };
    assertValid(behaviorKind, withCondition(condition));
    condition = { type: 'negation', conditions: [condition] };
    const found = problems(behaviorKind, withCondition(condition));
    assert.ok(
      found.some((p) => /nested at most/.test(p.message)),
      JSON.stringify(found),
    );
  });

  it('dependency needs the name of a rule of the set', () => {
    assertValid(
      behaviorKind,
      withCondition({ type: 'dependency', configs: { reference: 'Other' } }, [{ name: 'Other', actions: ['o'] }]),
    );
    assertProblem(behaviorKind, withCondition({ type: 'dependency', configs: {} }), `${at}.configs.reference`);
    assertProblem(
      behaviorKind,
      withCondition({ type: 'dependency', configs: { reference: 'Missing' } }),
      `${at}.configs.reference`,
      /Missing/,
    );
    const cycle = withCondition({ type: 'dependency', configs: { reference: 'Other' } }, [
      { name: 'Other', conditions: [{ type: 'dependency', configs: { reference: 'R' } }] },
    ]);
    assertProblem(
      behaviorKind,
      cycle,
      '$.behaviorGroups[0].behaviorRules[1].conditions[0].configs.reference',
      /cycle: 'R' -> 'Other' -> 'R'/,
    );
  });

  it('checks what only compiling finds: expressions that do not parse, paths that are not paths', () => {
    assertProblem(
      behaviorKind,
      withCondition({ type: 'inputmatcher', configs: { expressions: 'greeting(' } }),
      `${at}.configs.expressions`,
      /does not parse/,
    );
    assertProblem(
      behaviorKind,
      withCondition({ type: 'dynamicvaluematcher', configs: { valuePath: 'a..b' } }),
      `${at}.configs.valuePath`,
      /not a valid path/,
    );
  });

  it('sizematcher bounds are integers', () => {
    assertValid(behaviorKind, withCondition({ type: 'sizematcher', configs: { valuePath: 'x', equal: '3' } }));
    assertProblem(
      behaviorKind,
      withCondition({ type: 'sizematcher', configs: { valuePath: 'x', min: '1.5' } }),
      `${at}.configs.min`,
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Output set
// ---------------------------------------------------------------------------------------------------------------

describe('output set', () => {
  it('accepts the basic agent outputs with every item type and plain strings', () =>
    assertValid(outputKind, basicOutputs));

  it('reports an unknown field of a typed item against that item type', () => {
    const body = clone(basicOutputs);
    (body.outputSet[5]!.outputs[0]!.valueAlternatives[1] as Record<string, unknown>).caption = 'x';
    assertUnknownField(outputKind, body, 'caption', '$.outputSet[5].outputs[0].valueAlternatives[1].caption');
    const nested = clone(basicOutputs);
    (
      (nested.outputSet[5]!.outputs[0]!.valueAlternatives[4] as Record<string, unknown>).validation as Record<
        string,
        unknown
      >
    ).pattern = '.*';
    assertUnknownField(
      outputKind,
      nested,
      'pattern',
      '$.outputSet[5].outputs[0].valueAlternatives[4].validation.pattern',
    );
    assertUnknownField(
      outputKind,
      { outputSet: [{ action: 'a', quickReplies: [{ value: 'v', label: 'l' }] }] },
      'label',
      '$.outputSet[0].quickReplies[0].label',
    );
  });

  it('refuses an unknown item type and a text item without text', () => {
    const unknownType = {
      outputSet: [{ action: 'a', outputs: [{ valueAlternatives: [{ type: 'video', uri: 'x' }] }] }],
    };
    assert.equal(
      schemaError(outputKind, unknownType).details.path,
      '$.outputSet[0].outputs[0].valueAlternatives[0].type',
    );
    const noText = { outputSet: [{ action: 'a', outputs: [{ valueAlternatives: [{ type: 'text' }] }] }] };
    assert.equal(schemaError(outputKind, noText).details.path, '$.outputSet[0].outputs[0].valueAlternatives[0].text');
  });

  it('translates lang', () => {
    assert.deepEqual(accept(outputKind, { lang: 'en', outputSet: [] }), { language: 'en', outputSet: [] });
    assertAliasConflict(outputKind, { lang: 'en', language: 'en' }, 'lang', 'language', '$');
  });

  it('drops nulls inside typed items', () => {
    const body = {
      outputSet: [
        {
          action: 'a',
          timesOccurred: null,
          outputs: [{ valueAlternatives: [{ type: 'image', uri: 'u', alt: null }] }],
        },
      ],
    };
    assert.deepEqual(accept(outputKind, body), {
      outputSet: [{ action: 'a', outputs: [{ valueAlternatives: [{ type: 'image', uri: 'u' }] }] }],
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Workflow
// ---------------------------------------------------------------------------------------------------------------

describe('workflow', () => {
  it('accepts the weather workflow', () => assertValid(workflowKind, weatherWorkflow));

  it('reports unknown fields at depth with their JSON path', () => {
    const body = clone(weatherWorkflow) as { packageExtensions: Record<string, unknown>[] };
    (body.packageExtensions[3]!.config as { setOnActions: { setProperties: Record<string, unknown>[] }[] })
      .setOnActions[2]!.setProperties[1]!.value = 1;
    assertUnknownField(
      workflowKind,
      body,
      'value',
      '$.packageExtensions[3].config.setOnActions[2].setProperties[1].value',
    );
    assertUnknownField(
      workflowKind,
      { packageExtensions: [{ type: 'svc://ai.svc.output', config: { url: 'x' } }] },
      'url',
      '$.packageExtensions[0].config.url',
    );
    assertUnknownField(
      workflowKind,
      {
        packageExtensions: [
          {
            type: 'svc://ai.svc.parser',
            extensions: { dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.integer', configs: {} }] },
          },
        ],
      },
      'configs',
      '$.packageExtensions[0].extensions.dictionaries[0].configs',
    );
  });

  it('requires packageExtensions and the extension type', () => {
    assert.equal(schemaError(workflowKind, {}).details.path, '$.packageExtensions');
    assert.equal(
      schemaError(workflowKind, { packageExtensions: [{ config: {} }] }).details.path,
      '$.packageExtensions[0].type',
    );
  });

  it('translates workflowSteps, workflowExtensions, extension types and 6.x references', () => {
    const upstream = {
      workflowSteps: [
        {
          type: 'svc://ai.svc.parser',
          extensions: {
            dictionaries: [
              {
                type: 'svc://ai.svc.parser.dictionaries.regular',
                config: { uri: `svc://ai.svc.dictionary/dictionarystore/dictionaries/${ID1}?version=1` },
              },
            ],
          },
        },
        { type: 'svc://ai.svc.rules', config: { uri: `svc://ai.svc.rules/rulestore/rulesets/${ID2}?version=1` } },
        {
          type: 'svc://ai.svc.apicalls',
          config: { uri: `svc://ai.svc.apicalls/apicallstore/apicalls/${ID4}?version=2` },
        },
        { type: 'svc://ai.svc.llm', extensions: { uri: `svc://ai.svc.llm/llmstore/llms/${ID4}?version=1` } },
        { type: 'svc://ai.svc.output', config: { uri: outputRef } },
      ],
    };
    const frozen = clone(upstream);
    const renamed = accept(workflowKind, upstream);
    assert.deepEqual(renamed, {
      packageExtensions: [
        {
          type: 'svc://ai.svc.parser',
          extensions: {
            dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: dictionaryRef } }],
          },
        },
        { type: 'svc://ai.svc.behavior', config: { uri: behaviorRef } },
        { type: 'svc://ai.svc.httpcalls', config: { uri: httpCallsRef } },
        { type: 'svc://ai.svc.llm', extensions: { uri: llmRef } },
        { type: 'svc://ai.svc.output', config: { uri: outputRef } },
      ],
    });
    assert.deepEqual(upstream, frozen, 'the input is not modified');
    assert.deepEqual(workflowKind.checkSemantics(renamed), []);
    assert.deepEqual(accept(workflowKind, { workflowExtensions: [] }), { packageExtensions: [] });
  });

  it('refuses a name together with its alias', () => {
    assertAliasConflict(
      workflowKind,
      { workflowSteps: [], packageExtensions: [] },
      'workflowSteps',
      'packageExtensions',
      '$',
    );
    assertAliasConflict(
      workflowKind,
      { workflowSteps: [], workflowExtensions: [] },
      'workflowSteps',
      'workflowExtensions',
      '$',
    );
  });

  it('checks the form of extension types, also of parser sub-extensions', () => {
    assertValid(workflowKind, { packageExtensions: [{ type: 'svc://ai.svc.somethingnew', config: {} }] });
    assertProblem(workflowKind, { packageExtensions: [{ type: 'ai.svc.output' }] }, '$.packageExtensions[0].type');
    assertProblem(
      workflowKind,
      { packageExtensions: [{ type: 'http://ai.svc.output/x' }] },
      '$.packageExtensions[0].type',
    );
    assertProblem(
      workflowKind,
      { packageExtensions: [{ type: 'svc://ai.svc.parser', extensions: { corrections: [{ type: 'levenshtein' }] } }] },
      '$.packageExtensions[0].extensions.corrections[0].type',
    );
  });

  it('does not trip over extension types named like Object members', () => {
    assertProblem(
      workflowKind,
      { packageExtensions: [{ type: 'constructor', config: {} }] },
      '$.packageExtensions[0].type',
    );
    assert.deepEqual(accept(workflowKind, { packageExtensions: [{ type: 'toString' }] }), {
      packageExtensions: [{ type: 'toString' }],
    });
  });

  it('checks references in config, extensions and dictionaries', () => {
    const bad = `svc://ai.svc.behavior/behaviorstore/behaviorsets/xyz?version=1`;
    assertProblem(
      workflowKind,
      { packageExtensions: [{ type: 'svc://ai.svc.behavior', config: { uri: bad } }] },
      '$.packageExtensions[0].config.uri',
    );
    assertProblem(
      workflowKind,
      { packageExtensions: [{ type: 'svc://ai.svc.output', extensions: { uri: `${outputRef.split('?')[0]}` } }] },
      '$.packageExtensions[0].extensions.uri',
    );
    assertProblem(
      workflowKind,
      {
        packageExtensions: [
          {
            type: 'svc://ai.svc.somethingnew',
            config: { uri: `svc://ai.svc.conversation/conversationstore/conversations/${ID1}?version=1` },
          },
        ],
      },
      '$.packageExtensions[0].config.uri',
      /not a configuration kind/,
    );
    assertProblem(
      workflowKind,
      {
        packageExtensions: [
          {
            type: 'svc://ai.svc.parser',
            extensions: {
              dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: outputRef } }],
            },
          },
        ],
      },
      '$.packageExtensions[0].extensions.dictionaries[0].config.uri',
      /regulardictionary/,
    );
    assertProblem(
      workflowKind,
      { packageExtensions: [{ type: 'svc://ai.svc.behavior', config: { uri: outputRef } }] },
      '$.packageExtensions[0].config.uri',
      /ai\.svc\.behavior/,
    );
    assertProblem(
      workflowKind,
      {
        packageExtensions: [
          {
            type: 'svc://ai.svc.output',
            config: { uri: outputRef },
            extensions: { uri: outputRef.replace('version=1', 'version=2') },
          },
        ],
      },
      '$.packageExtensions[0].extensions.uri',
    );
  });

  it('refuses config fields the extension type does not read, by the schema of its task', () => {
    assertUnknownField(
      workflowKind,
      { packageExtensions: [{ type: 'svc://ai.svc.output', config: { uri: outputRef, appendActions: true } }] },
      'appendActions',
      '$.packageExtensions[0].config.appendActions',
    );
    assertUnknownField(
      workflowKind,
      { packageExtensions: [{ type: 'svc://ai.svc.parser', extensions: { uri: dictionaryRef } }] },
      'uri',
      '$.packageExtensions[0].extensions.uri',
    );
    assertUnknownField(
      workflowKind,
      { packageExtensions: [{ type: 'svc://ai.svc.rules', config: { uri: behaviorRef, includeUnused: true } }] },
      'includeUnused',
      '$.packageExtensions[0].config.includeUnused',
    );
  });

  it('checks inline property instructions', () => {
    assertProblem(
      workflowKind,
      {
        packageExtensions: [
          {
            type: 'svc://ai.svc.property',
            config: { setOnActions: [{ actions: 'a', setProperties: [{ valueInt: 1 }] }] },
          },
        ],
      },
      '$.packageExtensions[0].config.setOnActions[0].setProperties[0].name',
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Agent
// ---------------------------------------------------------------------------------------------------------------

describe('agent', () => {
  it('accepts the basic agent', () => assertValid(agentKind, basicAgent));

  it('reports an unknown field with its JSON path', () => {
    assertUnknownField(
      agentKind,
      { packages: [], channels: [{ type: 't', settings: {} }] },
      'settings',
      '$.channels[0].settings',
    );
    assertUnknownField(agentKind, { packages: [], name: 'x' }, 'name', '$.name');
  });

  it('translates workflows and 6.x workflow references', () => {
    const upstream = {
      workflows: [`svc://ai.svc.workflow/workflowstore/workflows/${ID1}?version=1`],
      a2aEnabled: false,
    };
    assert.deepEqual(accept(agentKind, upstream), { packages: [workflowRef], a2aEnabled: false });
    assertAliasConflict(agentKind, { workflows: [], packages: [] }, 'workflows', 'packages', '$');
  });

  it('checks that every package is a workflow reference', () => {
    assertValid(agentKind, {
      packages: [workflowRef, `svc://ai.svc.workflow/workflowstore/workflows/${ID2}?version=4`],
    });
    assertProblem(agentKind, { packages: [workflowRef, 'not a uri'] }, '$.packages[1]');
    assertProblem(agentKind, { packages: [behaviorRef] }, '$.packages[0]', /ai\.svc\.package/);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Property setter
// ---------------------------------------------------------------------------------------------------------------

describe('property setter', () => {
  it('accepts setOnActions and propertyInstructions', () => assertValid(propertyKind, propertySetter));

  it('reports an unknown field with its JSON path', () => {
    assertUnknownField(
      propertyKind,
      { setOnActions: [{ actions: ['a'], setProperties: [{ name: 'n', httpCodeValidator: { runOn: [] } }] }] },
      'runOn',
      '$.setOnActions[0].setProperties[0].httpCodeValidator.runOn',
    );
  });

  it("accepts the long-term visibility 'global' and refuses narrower ones it cannot honour", () => {
    assertValid(propertyKind, { propertyInstructions: [{ name: 'n', scope: 'longTerm', visibility: 'global' }] });
    assert.equal(
      schemaError(propertyKind, { propertyInstructions: [{ name: 'n', scope: 'longTerm', visibility: 'self' }] })
        .details.path,
      '$.propertyInstructions[0].visibility',
    );
  });

  it('refuses an unknown scope', () => {
    assert.equal(
      schemaError(propertyKind, { propertyInstructions: [{ name: 'n', scope: 'forever' }] }).details.path,
      '$.propertyInstructions[0].scope',
    );
  });

  it('needs a name or a toObjectPath', () => {
    assertValid(propertyKind, { propertyInstructions: [{ fromObjectPath: 'a', toObjectPath: 'b' }] });
    assertProblem(propertyKind, { propertyInstructions: [{ fromObjectPath: 'a' }] }, '$.propertyInstructions[0].name');
    assertProblem(
      propertyKind,
      { setOnActions: [{ actions: ['*'], setProperties: [{ valueInt: 1 }] }] },
      '$.setOnActions[0].setProperties[0].name',
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// HTTP-call set
// ---------------------------------------------------------------------------------------------------------------

describe('HTTP-call set', () => {
  it('accepts the weather calls', () => assertValid(httpCallsKind, weatherCalls));

  it('reports an unknown field at depth with its JSON path', () => {
    const body = clone(weatherCalls) as { httpCalls: Record<string, unknown>[] };
    (
      (body.httpCalls[0]!.postResponse as Record<string, unknown>).retryApiCallInstruction as Record<string, unknown>
    ).jitter = 1;
    assertUnknownField(httpCallsKind, body, 'jitter', '$.httpCalls[0].postResponse.retryApiCallInstruction.jitter');
    const qr = clone(weatherCalls) as { httpCalls: Record<string, unknown>[] };
    ((qr.httpCalls[0]!.postResponse as Record<string, unknown>).qrBuildInstruction as Record<string, unknown>).value =
      'x';
    assertUnknownField(httpCallsKind, qr, 'value', '$.httpCalls[0].postResponse.qrBuildInstruction.value');
  });

  it('requires targetServerUrl and call names', () => {
    assert.equal(schemaError(httpCallsKind, { httpCalls: [] }).details.path, '$.targetServerUrl');
    assert.equal(
      schemaError(httpCallsKind, { targetServerUrl: 'http://x', httpCalls: [{ actions: [] }] }).details.path,
      '$.httpCalls[0].name',
    );
  });

  it('translates apiCalls, qrBuildInstructions and retryHttpCallInstruction, and upstream nulls', () => {
    const upstream = {
      targetServerUrl: 'http://x',
      apiCalls: [
        {
          name: 'a',
          responseHeaderObjectName: null,
          timeoutInMillis: null,
          preRequest: { propertyInstructions: [], batchRequests: null, delayBeforeExecutingInMillis: 0 },
          postResponse: {
            qrBuildInstructions: [{ pathToTargetArray: 'p', quickReplyValue: 'v' }],
            retryHttpCallInstruction: { maxRetries: 1 },
            outputBuildInstructions: [],
          },
        },
        {
          name: 'b',
          postResponse: {
            qrBuildInstructions: [{ quickReplyValue: '1' }, { quickReplyValue: '2' }],
            retryApiCallInstruction: null,
          },
        },
        { name: 'c', postResponse: { qrBuildInstructions: [] } },
      ],
    };
    const frozen = clone(upstream);
    assert.deepEqual(accept(httpCallsKind, upstream), {
      targetServerUrl: 'http://x',
      httpCalls: [
        {
          name: 'a',
          preRequest: { propertyInstructions: [], delayBeforeExecutingInMillis: 0 },
          postResponse: {
            qrBuildInstruction: { pathToTargetArray: 'p', quickReplyValue: 'v' },
            retryApiCallInstruction: { maxRetries: 1 },
            outputBuildInstructions: [],
          },
        },
        { name: 'b', postResponse: { qrBuildInstruction: [{ quickReplyValue: '1' }, { quickReplyValue: '2' }] } },
        { name: 'c', postResponse: {} },
      ],
    });
    assert.deepEqual(upstream, frozen, 'the input is not modified');
  });

  it('reports an unknown field inside a list of quick-reply instructions', () => {
    const body = {
      targetServerUrl: 'http://x',
      httpCalls: [{ name: 'a', postResponse: { qrBuildInstruction: [{ quickReplyValue: '1' }, { foo: 1 }] } }],
    };
    assertUnknownField(httpCallsKind, body, 'foo', '$.httpCalls[0].postResponse.qrBuildInstruction[1].foo');
  });

  it('refuses a name together with its alias', () => {
    assertAliasConflict(
      httpCallsKind,
      { targetServerUrl: 'x', apiCalls: [], httpCalls: [] },
      'apiCalls',
      'httpCalls',
      '$',
    );
    assertAliasConflict(
      httpCallsKind,
      {
        targetServerUrl: 'x',
        httpCalls: [{ name: 'a', postResponse: { qrBuildInstruction: {}, qrBuildInstructions: [] } }],
      },
      'qrBuildInstruction',
      'qrBuildInstructions',
      '$.httpCalls[0].postResponse',
    );
    assertAliasConflict(
      httpCallsKind,
      {
        targetServerUrl: 'x',
        httpCalls: [{ name: 'a', postResponse: { retryHttpCallInstruction: {}, retryApiCallInstruction: {} } }],
      },
      'retryHttpCallInstruction',
      'retryApiCallInstruction',
      '$.httpCalls[0].postResponse',
    );
  });

  it('call names are unique', () => {
    assertProblem(
      httpCallsKind,
      { targetServerUrl: 'x', httpCalls: [{ name: 'a' }, { name: 'b' }, { name: 'a' }] },
      '$.httpCalls[2].name',
      /\$\.httpCalls\[0\]/,
    );
  });

  it('methods are checked case-insensitively', () => {
    assertValid(httpCallsKind, {
      targetServerUrl: 'x',
      httpCalls: [
        { name: 'a', request: { method: 'patch' } },
        { name: 'b', request: { method: 'Options' } },
      ],
    });
    assertProblem(
      httpCallsKind,
      { targetServerUrl: 'x', httpCalls: [{ name: 'a', request: { method: 'FETCH' } }] },
      '$.httpCalls[0].request.method',
    );
  });

  it('checks pre- and post-response property instructions', () => {
    assertProblem(
      httpCallsKind,
      {
        targetServerUrl: 'x',
        httpCalls: [{ name: 'a', postResponse: { propertyInstructions: [{ fromObjectPath: 'x' }] } }],
      },
      '$.httpCalls[0].postResponse.propertyInstructions[0].name',
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// LLM configuration
// ---------------------------------------------------------------------------------------------------------------

describe('LLM configuration', () => {
  // What preRequest / postResponse / responseObjectName do is tested end to end in test/llm.test.ts.
  it('accepts a task with every field the kind defines', () => assertValid(llmKind, llmConfig));

  it('reports an unknown field with its JSON path', () => {
    assertUnknownField(
      llmKind,
      { tasks: [{ type: 'openai', retry: { attempts: 2 } }] },
      'attempts',
      '$.tasks[0].retry.attempts',
    );
  });

  it('parameters are text', () => {
    assert.equal(
      schemaError(llmKind, { tasks: [{ type: 'openai', parameters: { temperature: 0.3 } }] }).details.path,
      '$.tasks[0].parameters.temperature',
    );
  });

  it('task ids are unique', () => {
    assertProblem(
      llmKind,
      {
        tasks: [
          { id: 'a', type: 'openai' },
          { id: 'a', type: 'anthropic' },
        ],
      },
      '$.tasks[1].id',
    );
  });

  it('task types are not blank', () => {
    assertProblem(llmKind, { tasks: [{ id: 'a', type: ' ' }] }, '$.tasks[0].type');
    assert.equal(schemaError(llmKind, { tasks: [{ id: 'a' }] }).details.path, '$.tasks[0].type');
  });
});
