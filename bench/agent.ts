import { expectStatus, idFromLocation, type BenchApi } from './api.ts';

/**
 * The agent every workload talks to, built through the REST API like a user would: one workflow whose only
 * extension is the output task, answering CONVERSATION_START with a welcome text (and a quick reply).
 *
 * This is the one place that shapes the benchmark agent; later issues extend it (a 10,000-word dictionary and
 * 500 rules once the rule engine exists) so every workload measures a realistically sized agent.
 * Returns the agent id (version 1), not yet deployed.
 */
export async function buildBenchmarkAgent(api: BenchApi): Promise<string> {
  const create = async (path: string, body: unknown): Promise<string> => {
    const answer = expectStatus(await api.post(path, body), 201, `POST ${path}`);
    return answer.headers.get('location')!;
  };

  const outputSetUri = await create('/outputstore/outputsets', {
    outputSet: [
      {
        action: 'CONVERSATION_START',
        timesOccurred: 0,
        outputs: [{ valueAlternatives: [{ type: 'text', text: 'Welcome! How can I help?' }] }],
        quickReplies: [{ value: 'Hi', expressions: 'greeting(hi)' }],
      },
    ],
  });
  const workflowUri = await create('/packagestore/packages', {
    packageExtensions: [{ type: 'svc://ai.svc.output', config: { uri: outputSetUri } }],
  });
  return idFromLocation(await create('/agentstore/agents', { packages: [workflowUri] }));
}

/** Deploys the agent to production and waits until it is READY. */
export async function deployAgent(api: BenchApi, agentId: string, version = 1): Promise<void> {
  const path = `/administration/production/deploy/${agentId}?version=${version}&autoDeploy=true&waitForCompletion=true`;
  const answer = expectStatus(await api.post(path), 200, 'deploy');
  if (answer.json?.status !== 'READY') throw new Error(`deploy: agent not READY: ${answer.text}`);
}
