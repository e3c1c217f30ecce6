import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFakeAnthropic, startFakeOpenAi, type FakeProvider } from '../../../test/support/fake-llm/index.ts';
import { BUILT_IN_TOOL_NAMES } from '../../llm/built-in-tools.ts';
import { ToolHistory } from '../../llm/tool-history.ts';
import { emptyTallies, type Conversation } from '../../runtime/memory.ts';
import type { CompiledTask } from '../../runtime/tasks.ts';
import { Turn, type TurnEvent } from '../../runtime/turn.ts';
import { MissingSecretError, VAULT_REFERENCE, type SecretResolver } from '../../security/secret-references.ts';
import { createLlmServices, llmTask } from './llm-task.ts';
import { compileStep } from '../../../test/support/tasks.ts';

const VAULT_KEY = 'sk-from-the-vault-42';

const vault: SecretResolver = {
  async resolve(text) {
    const secretValues: string[] = [];
    const resolved = text.replace(new RegExp(VAULT_REFERENCE.source, 'g'), (_, name: string) => {
      if (name !== 'openai-key') throw new MissingSecretError(name, 'does not exist');
      secretValues.push(VAULT_KEY);
      return VAULT_KEY;
    });
    return { text: resolved, secretValues };
  },
};

const conversation: Conversation = {
  id: 'c0ffee000000000000000001',
  agentId: 'a',
  agentVersion: 1,
  userId: 'ada',
  environment: 'production',
  state: 'READY',
  createdOn: 0,
  lastModifiedOn: 0,
  revision: 1,
  steps: [],
  redo: [],
  properties: {},
  tallies: emptyTallies,
};

function turnOf(input: string, options: { listener?: (event: TurnEvent) => void; signal?: AbortSignal } = {}): Turn {
  const turn = new Turn({
    conversation,
    input,
    context: {},
    signal: options.signal ?? new AbortController().signal,
    onEvent: options.listener,
  });
  turn.setActions(['ask']);
  return turn;
}

async function compile(
  tasks: unknown[],
  history = new ToolHistory({ defaultRateLimitPerMinute: 100, knownTools: BUILT_IN_TOOL_NAMES }),
): Promise<CompiledTask> {
  return compileStep(
    llmTask,
    { config: { uri: 'svc://ai.svc.llm/langchainstore/langchains/x?version=1' } },
    async () => ({ tasks }),
    {
      llm: createLlmServices({ secrets: vault, tools: history }),
    },
  );
}

describe('LLM task', () => {
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  before(async () => {
    openai = await startFakeOpenAi();
    anthropic = await startFakeAnthropic();
  });
  after(async () => {
    await openai.close();
    await anthropic.close();
  });

  const task = (fake: FakeProvider, type = 'openai', extra: Record<string, unknown> = {}) => ({
    id: 't',
    type,
    actions: ['ask'],
    retry: { maxAttempts: 1 },
    ...extra,
    parameters: {
      apiKey: '${vault:openai-key}',
      baseUrl: `${fake.url}/v1`,
      addToOutput: 'true',
      ...(extra.parameters as object),
    },
  });

  it('streams the answer token by token to a live listener, with tool calls, and keeps the vault value out of memory', async () => {
    for (const [fake, type] of [
      [openai, 'openai'],
      [anthropic, 'anthropic'],
    ] as const) {
      fake.reset();
      const events: TurnEvent[] = [];
      const compiled = await compile([task(fake, type, { enableBuiltInTools: true })]);
      fake.reply(
        { toolCalls: [{ name: 'calculator', args: { expression: '2 ^ 10' } }] },
        { text: 'It is 1024 exactly.' },
      );
      const turn = turnOf('What is 2^10?', { listener: (event) => events.push(event) });
      await compiled.execute(turn);

      assert.equal(fake.requests.length, 2);
      assert.equal(fake.requests[0]!.body.stream, true, `${type} streams`);
      const tokens = events.filter((event) => event.type === 'token').map((event) => (event as { text: string }).text);
      assert.ok(tokens.length > 1, 'several deltas');
      assert.equal(tokens.join(''), 'It is 1024 exactly.');
      assert.deepEqual(
        events.filter((event) => event.type === 'tool_call'),
        [{ type: 'tool_call', tool: 'calculator', arguments: { expression: '2 ^ 10' } }],
      );
      assert.deepEqual(turn.output.output, [{ type: 'text', text: 'It is 1024 exactly.', delay: 0 }]);
      const header =
        type === 'openai' ? fake.requests[0]!.headers.authorization : fake.requests[0]!.headers['x-api-key'];
      assert.ok(String(header).includes(VAULT_KEY), 'the vault value reaches the provider');
      const { step } = turn.finish();
      assert.ok(!JSON.stringify(step).includes(VAULT_KEY), 'but not the memory');
    }
  });

  it('does not stream without a listener', async () => {
    openai.reset();
    const compiled = await compile([task(openai)]);
    openai.reply({ text: 'plain' });
    const turn = turnOf('hi');
    await compiled.execute(turn);
    assert.notEqual(openai.requests[0]!.body.stream, true);
    assert.equal(turn.get('langchain:openai:t'), 'plain');
  });

  it('fires only on its actions, or on every step with *', async () => {
    openai.reset();
    const compiled = await compile([
      task(openai, 'openai', { actions: ['other'] }),
      task(openai, 'openai', { id: 'any', actions: ['*'] }),
    ]);
    openai.reply({ text: 'from any' });
    const turn = turnOf('hi');
    await compiled.execute(turn);
    assert.equal(openai.requests.length, 1);
    assert.equal(turn.get('langchain:openai:any'), 'from any');
    assert.equal(turn.get('langchain:openai:t'), undefined);
  });

  it('fails the turn on a missing secret, naming it and not calling the provider', async () => {
    openai.reset();
    const compiled = await compile([task(openai, 'openai', { parameters: { apiKey: '${vault:nope}' } })]);
    await assert.rejects(
      async () => compiled.execute(turnOf('hi')),
      /parameter 'apiKey' refers to a secret that cannot be read: Secret 'nope' does not exist/,
    );
    assert.equal(openai.requests.length, 0);
  });

  it('does not call the provider when the turn is already aborted', async () => {
    openai.reset();
    const compiled = await compile([task(openai)]);
    const controller = new AbortController();
    controller.abort(new Error('turn timed out'));
    await assert.rejects(async () => compiled.execute(turnOf('hi', { signal: controller.signal })), /turn timed out/);
    assert.equal(openai.requests.length, 0);
  });

  it('aborts the provider call when the turn is aborted', async () => {
    openai.reset();
    const compiled = await compile([task(openai)]);
    openai.reply({ hang: true });
    const controller = new AbortController();
    const arrived = openai.nextRequest();
    const running = compiled.execute(turnOf('hi', { signal: controller.signal }));
    await arrived;
    controller.abort(new Error('turn timed out'));
    await assert.rejects(async () => running, /turn timed out/);
  });

  it('uses the prompt parameter instead of the input, templated', async () => {
    openai.reset();
    const compiled = await compile([
      task(openai, 'openai', { parameters: { prompt: 'Translate for {userInfo.userId}: {memory.current.input}' } }),
    ]);
    openai.reply({ text: 'ok' });
    const turn = turnOf('Hallo');
    turn.setOutput('input', 'Hallo');
    await compiled.execute(turn);
    assert.deepEqual(openai.requests[0]!.body.messages, [{ role: 'user', content: 'Translate for ada: Hallo' }]);
  });
});
