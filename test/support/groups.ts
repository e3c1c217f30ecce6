import assert from 'node:assert/strict';
import { controlExtension } from './control-task.ts';
import type { client } from './http.ts';
import { idFromLocation } from './agents.ts';
import { deploy } from './agents.ts';

/** Agents for group tests: each answers `<name>: <the message it got>` through the echo task (a real pipeline). */

type Api = ReturnType<typeof client>;

/** A deployed agent answering every message with `<name>: <message>`; `gated` agents stop at a test's gate first. */
export async function memberAgent(api: Api, name: string, options: { gated?: boolean; deployed?: boolean } = {}) {
  const extensions = [
    ...(options.gated ? [controlExtension] : []),
    { type: 'svc://ai.svc.test.echo', config: { prefix: `${name}: ` } },
  ];
  const workflow = await api.post('/packagestore/packages', { json: { packageExtensions: extensions } });
  assert.equal(workflow.status, 201, workflow.text);
  const agent = await api.post('/agentstore/agents', { json: { packages: [workflow.headers.get('location')] } });
  assert.equal(agent.status, 201, agent.text);
  const agentId = idFromLocation(agent.headers.get('location'));
  if (options.deployed !== false) await deploy(api, agentId);
  return agentId;
}

/** Server-sent events of a response body: `{event, data}` in order. */
export function sseEvents(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) };
    });
}

/** `[phase, speaker, status]` of every contribution, in order. */
export function transcriptOf(discussion: {
  contributions: { phase: string; speaker: { displayName: string }; status: string; about?: string }[];
}) {
  return discussion.contributions.map((c) => [
    c.phase,
    c.about ? `${c.speaker.displayName} on ${c.about}` : c.speaker.displayName,
    c.status,
  ]);
}
