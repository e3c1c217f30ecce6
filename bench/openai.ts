import type { BenchApi } from './api.ts';
import { expectStatus } from './api.ts';

/**
 * The W1 load through the OpenAI-compatible API: `count` chats started beforehand with one
 * `POST /v1/chat/completions` each; the answer is the request body of each chat's next user message, naming its
 * conversation (`conversation_id`) as OpenAI-style clients do after the first answer.
 */
export async function openAiChatBodies(api: BenchApi, agentId: string, count: number): Promise<string[]> {
  const bodies: string[] = [];
  const message = { model: agentId, messages: [{ role: 'user', content: 'hello' }] };
  for (let n = 0; n < count; n++) {
    const answer = expectStatus(await api.post('/v1/chat/completions', message), 200, 'start an OpenAI-style chat');
    bodies.push(JSON.stringify({ ...message, conversation_id: answer.json.conversation_id as string }));
  }
  return bodies;
}
