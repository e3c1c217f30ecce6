import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  blankForm,
  buildSimpleAgent,
  createBlankAgent,
  createSimpleAgent,
  exampleForm,
  slug,
  validateForm,
} from './agent-builder.ts';

describe('guided agent form -> resources', () => {
  it('accepts the example and refuses an empty form', () => {
    assert.deepEqual(validateForm(exampleForm()), []);
    const problems = validateForm(blankForm());
    assert.ok(problems.some((p) => p.field === 'name'));
    assert.ok(problems.some((p) => p.field === 'intents.0.intent'));
  });

  it('names the field of each problem', () => {
    const form = exampleForm();
    form.rules[0]!.intent = 'nothing';
    form.replies[1]!.action = 'unknown';
    form.intents[1]!.intent = 'bad name';
    const fields = validateForm(form).map((p) => p.field);
    assert.ok(fields.includes('rules.0.intent'));
    assert.ok(fields.includes('replies.1.action'));
    assert.ok(fields.includes('intents.1.intent'));
  });

  it('builds words, phrases, rules, outputs and quick replies', () => {
    const built = buildSimpleAgent(exampleForm());
    assert.deepEqual(built.dictionary.words, [
      { word: 'hello', expressions: 'greeting(hello)' },
      { word: 'hi', expressions: 'greeting(hi)' },
      { word: 'bye', expressions: 'goodbye(bye)' },
    ]);
    assert.deepEqual(built.dictionary.phrases, [
      { phrase: 'good morning', expressions: 'greeting(good_morning)' },
      { phrase: 'see you', expressions: 'goodbye(see_you)' },
    ]);
    const rules = built.behaviorSet.behaviorGroups[0]!.behaviorRules;
    assert.deepEqual(rules[0], {
      name: 'greeting -> greet',
      actions: ['greet'],
      conditions: [{ type: 'inputmatcher', configs: { expressions: 'greeting(*)' } }],
    });
    const outputs = built.outputSet.outputSet;
    assert.equal(outputs[0]!.action, 'CONVERSATION_START');
    assert.deepEqual(outputs[1]!.quickReplies, [{ value: 'bye', expressions: 'goodbye(bye)' }]);
    assert.equal(outputs[2]!.quickReplies, undefined);
  });

  it('orders the workflow parser -> behavior -> output -> templating', () => {
    const form = exampleForm();
    form.typoDistance = 2;
    const workflow = buildSimpleAgent(form).workflow({ dictionary: 'd', behaviorSet: 'b', outputSet: 'o' });
    assert.deepEqual(
      workflow.packageExtensions.map((e) => e.type),
      ['svc://ai.svc.parser', 'svc://ai.svc.behavior', 'svc://ai.svc.output', 'svc://ai.svc.templating'],
    );
    assert.deepEqual(workflow.packageExtensions[0]!.extensions, {
      dictionaries: [{ type: 'svc://ai.svc.parser.dictionaries.regular', config: { uri: 'd' } }],
      corrections: [{ type: 'svc://ai.svc.parser.corrections.levenshtein', config: { distance: 2 } }],
    });
  });

  it('gives unknown quick replies their own expression', () => {
    const form = exampleForm();
    form.replies[0]!.quickReplies = 'Tell me more!';
    assert.deepEqual(buildSimpleAgent(form).outputSet.outputSet[1]!.quickReplies, [
      { value: 'Tell me more!', expressions: 'quickReply(tell_me_more)' },
    ]);
    assert.equal(slug('  '), 'value');
  });

  it('creates the resources in dependency order and names them', async () => {
    const calls: string[] = [];
    let n = 0;
    const ports = {
      create: async (kind: string, body: unknown) => {
        calls.push(`POST ${kind} ${JSON.stringify(body).includes('svc://x/') ? 'refs' : ''}`.trim());
        return `svc://x/${kind}/${++n}`;
      },
      describe: async (uri: string, name: string) => {
        calls.push(`name ${uri.split('/').pop()} ${name}`);
      },
    };
    const result = await createSimpleAgent(exampleForm(), ports);
    assert.equal(result.agentUri, 'svc://x/agent/5');
    assert.deepEqual(
      calls.filter((c) => c.startsWith('POST')),
      ['POST dictionary', 'POST behavior', 'POST output', 'POST workflow refs', 'POST agent refs'],
    );
    assert.ok(calls.includes('name 5 Greeter'));
    const blank = await createBlankAgent('Empty', '', ports);
    assert.equal(blank.created.length, 2);
  });
});
