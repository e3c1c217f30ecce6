import type { BenchApi } from './api.ts';
import { expectStatus } from './api.ts';

/**
 * The W1 load through the OpenAI-compatible API: `count` chats started beforehand with one
 * `POST /v1/chat/completions` each; the answer is the request body of each chat's next user message, naming its
 * conversation (`conversation_id`) as OpenAI-style clients do after the first answer.
 *
 * Each chat has a user of its own (`user`): the same first message from the same user is one chat (a retry is
 * answered from the conversation it started), so without it every chat would be the first one, and the 64 chats
 * one conversation whose turns all wait for each other.
 */
export async function openAiChatBodies(api: BenchApi, agentId: string, count: number): Promise<string[]> {
  const bodies: string[] = [];
  for (let n = 0; n < count; n++) {
    const message = { model: agentId, messages: [{ role: 'user', content: 'hello' }], user: `bench-${n}` };
    const answer = expectStatus(await api.post('/v1/chat/completions', message), 200, 'start an OpenAI-style chat');
    bodies.push(JSON.stringify({ ...message, conversation_id: answer.json.conversation_id as string }));
  }
  if (new Set(bodies.map((body) => JSON.parse(body).conversation_id)).size !== count)
    throw new Error(`openAiChatBodies: the ${count} chats are not ${count} conversations`);
  return bodies;
}
