import { defaultUsage, deltas, FakeProvider, jsonReply, sseReply, type Encoder, type Script } from './fake-server.ts';

/** OpenAI chat completions (`POST /v1/chat/completions`), JSON and SSE (`stream: true`), with tool_calls. */

const base = { id: 'chatcmpl-fake', created: 1_700_000_000, model: 'gpt-fake' };

function toolCallsOf(script: Script) {
  return 'toolCalls' in script
    ? script.toolCalls.map((call, index) => ({
        id: call.id ?? `call_${index + 1}`,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.args) },
      }))
    : [];
}

export const encodeOpenAi: Encoder = (script, request) => {
  if ('hang' in script) throw new Error('a hanging reply has no body');
  if ('status' in script) {
    return jsonReply(script.status, {
      error: { message: script.message ?? `scripted failure ${script.status}`, type: 'server_error', code: null },
    });
  }
  const usage = script.usage ?? defaultUsage;
  const usageBody = {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
  };
  const toolCalls = toolCallsOf(script);
  const finish = toolCalls.length > 0 ? 'tool_calls' : 'stop';
  if (request.body?.stream !== true) {
    const message = {
      role: 'assistant',
      content: 'text' in script ? script.text : null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    };
    return jsonReply(200, {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message, finish_reason: finish }],
      usage: usageBody,
    });
  }
  const chunk = (delta: unknown, finishReason: string | null = null) => ({
    data: { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] },
  });
  const events: Array<{ data: unknown }> = [chunk({ role: 'assistant', content: '' })];
  if ('text' in script) for (const piece of deltas(script.text)) events.push(chunk({ content: piece }));
  for (const [index, call] of toolCalls.entries()) events.push(chunk({ tool_calls: [{ index, ...call }] }));
  events.push(chunk({}, finish));
  events.push({ data: { ...base, object: 'chat.completion.chunk', choices: [], usage: usageBody } });
  return sseReply([...events, { data: '[DONE]' }]);
};

export function startFakeOpenAi(): Promise<FakeProvider> {
  return new FakeProvider(encodeOpenAi).start();
}
