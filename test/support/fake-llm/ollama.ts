import { defaultUsage, deltas, FakeProvider, jsonReply, ndjsonReply, type Encoder } from './fake-server.ts';

/** Ollama chat (`POST /api/chat`), JSON (`stream: false`) and NDJSON streaming, with tool_calls. */

export const encodeOllama: Encoder = (script, request) => {
  if ('hang' in script) throw new Error('a hanging reply has no body');
  if ('status' in script)
    return jsonReply(script.status, { error: script.message ?? `scripted failure ${script.status}` });
  const usage = script.usage ?? defaultUsage;
  const model = typeof request.body?.model === 'string' ? request.body.model : 'llama-fake';
  const head = { model, created_at: '2024-01-01T00:00:00Z' };
  const toolCalls =
    'toolCalls' in script
      ? script.toolCalls.map((call) => ({ function: { name: call.name, arguments: call.args } }))
      : [];
  const done = {
    done: true,
    done_reason: 'stop',
    total_duration: 1,
    prompt_eval_count: usage.input,
    eval_count: usage.output,
  };
  const text = 'text' in script ? script.text : '';
  if (request.body?.stream === false) {
    return jsonReply(200, {
      ...head,
      message: { role: 'assistant', content: text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
      ...done,
    });
  }
  const lines: unknown[] =
    text === ''
      ? []
      : deltas(text).map((piece) => ({ ...head, message: { role: 'assistant', content: piece }, done: false }));
  if (toolCalls.length > 0)
    lines.push({ ...head, message: { role: 'assistant', content: '', tool_calls: toolCalls }, done: false });
  lines.push({ ...head, message: { role: 'assistant', content: '' }, ...done });
  return ndjsonReply(lines);
};

export function startFakeOllama(): Promise<FakeProvider> {
  return new FakeProvider(encodeOllama).start();
}
