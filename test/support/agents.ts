import assert from 'node:assert/strict';
import type { client } from './http.ts';

type Api = ReturnType<typeof client>;

export function idFromLocation(location: string | null): string {
  const match = /\/([0-9a-f]{24})(\?version=\d+)?$/.exec(location ?? '');
  assert.ok(match, `Location ${location} ends in an id`);
  return match[1]!;
}

async function create(api: Api, path: string, body: unknown): Promise<string> {
  const answer = await api.post(path, { json: body });
  assert.equal(answer.status, 201, answer.text);
  return answer.headers.get('location')!;
}

/**
 * Builds an agent through the REST API: one workflow of the given extensions (an output set, when given, is
 * created and referenced by an output extension placed last). Returns the agent id (version 1).
 */
export async function createAgent(api: Api, options: { outputSet?: unknown; extensions?: unknown[] } = {}): Promise<string> {
  const extensions: unknown[] = [...(options.extensions ?? [])];
  if (options.outputSet !== undefined) {
    const outputUri = await create(api, '/outputstore/outputsets', options.outputSet);
    extensions.push({ type: 'svc://ai.svc.output', config: { uri: outputUri } });
  }
  const workflowUri = await create(api, '/packagestore/packages', { packageExtensions: extensions });
  return idFromLocation(await create(api, '/agentstore/agents', { packages: [workflowUri] }));
}

export async function deploy(api: Api, agentId: string, version = 1, environment = 'production', autoDeploy = true): Promise<void> {
  const answer = await api.post(`/administration/${environment}/deploy/${agentId}?version=${version}&autoDeploy=${autoDeploy}&waitForCompletion=true`);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.json.status, 'READY', answer.text);
}

/** An output set answering `CONVERSATION_START` with a welcome text. */
export const welcomeOutputs = {
  outputSet: [
    { action: 'CONVERSATION_START', timesOccurred: 0, outputs: [{ valueAlternatives: [{ type: 'text', text: 'Welcome!' }] }], quickReplies: [{ value: 'Hi', expressions: 'greeting(hi)' }] },
  ],
};

/** A context entry that makes the output task say `text` (upstream's context-supplied output). */
export function sayContext(text: string) {
  return { output: { type: 'object', value: [{ valueAlternatives: [{ type: 'text', text }] }] } };
}
