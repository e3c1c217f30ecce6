import { defaultUsage, deltas, FakeProvider, jsonReply, sseReply, type Encoder } from './fake-server.ts';

/** Anthropic messages (`POST /v1/messages`), JSON and SSE events (`stream: true`), with tool_use blocks. */

export const encodeAnthropic: Encoder = (script, request) => {
  if ('hang' in script) throw new Error('a hanging reply has no body');
  if ('status' in script) {
    return jsonReply(script.status, {
      type: 'error',
      error: { type: 'api_error', message: script.message ?? `scripted failure ${script.status}` },
    });
  }
  const usage = script.usage ?? defaultUsage;
  const blocks: Array<Record<string, unknown>> =
    'text' in script
      ? [{ type: 'text', text: script.text }]
      : script.toolCalls.map((call, index) => ({
          type: 'tool_use',
          id: call.id ?? `toolu_${index + 1}`,
          name: call.name,
          input: call.args,
        }));
  const stopReason = 'text' in script ? 'end_turn' : 'tool_use';
  const message = { id: 'msg_fake', type: 'message', role: 'assistant', model: 'claude-fake' };
  if (request.body?.stream !== true) {
    return jsonReply(200, {
      ...message,
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: usage.input, output_tokens: usage.output },
    });
  }
  const events: Array<{ event: string; data: unknown }> = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          ...message,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input, output_tokens: 0 },
        },
      },
    },
  ];
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      });
      for (const piece of deltas(String(block.text))) {
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } },
        });
      }
    } else {
      const { input, ...start } = block;
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { ...start, input: {} } },
      });
      events.push({
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) },
        },
      });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output },
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return sseReply(events);
};

export function startFakeAnthropic(): Promise<FakeProvider> {
  return new FakeProvider(encodeAnthropic).start();
}
