import type { BenchApi } from './api.ts';
import { expectStatus } from './api.ts';
import type { LoadSpec, Measurement } from './measure.ts';

/**
 * `openai-chat-step`: the `step-throughput` load through the OpenAI-compatible API. 64 chats started beforehand
 * with one `POST /v1/chat/completions` each; then 16 connections post the next user message of one of them
 * (round-robin), naming its conversation (`conversation_id`) as OpenAI-style clients do after the first answer.
 * Reported against the echo server and against the native `step-throughput` figure of the same run (1 = the
 * OpenAI wire format and its conversation mapping cost nothing).
 */

const CHATS = 64;
const CONNECTIONS = 16;

interface Compared {
  readonly service: Measurement;
}

export async function openAiChatStep<C extends Compared>(options: {
  readonly api: BenchApi;
  readonly agentId: string;
  /** The run's comparison of a load against the echo server and the service. */
  readonly compare: (
    name: string,
    spec: Omit<LoadSpec, 'path'> & { path: (target: 'echo' | 'service') => LoadSpec['path'] },
  ) => Promise<C>;
  readonly steps: Compared;
  readonly duration: number;
  readonly warmupSeconds: number;
}) {
  const { api, agentId } = options;
  const ids: string[] = [];
  for (let n = 0; n < CHATS; n++) {
    const answer = expectStatus(
      await api.post('/v1/chat/completions', { model: agentId, messages: [{ role: 'user', content: 'hello' }] }),
      200,
      'start an OpenAI-style chat',
    );
    ids.push(answer.json.conversation_id as string);
  }
  const nextBody = () => {
    let next = 0;
    return () =>
      JSON.stringify({
        model: agentId,
        messages: [{ role: 'user', content: 'hello' }],
        conversation_id: ids[next++ % ids.length],
      });
  };
  const body = nextBody();
  const comparison = await options.compare('openai-chat-step', {
    connections: CONNECTIONS,
    duration: options.duration,
    warmupSeconds: options.warmupSeconds,
    body,
    path: () => '/v1/chat/completions',
  });
  return {
    conversations: CHATS,
    ...comparison,
    /** openai-chat-step service req/s ÷ step-throughput service req/s of this run. */
    ratioToStepThroughput: comparison.service.reqPerSec / options.steps.service.reqPerSec,
  };
}
