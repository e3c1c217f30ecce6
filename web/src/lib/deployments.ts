/** Deployments as the chat can use them. Pure. */
import type { DeploymentStatus } from '../api/types.ts';

/**
 * What a conversation can be started with: one entry per agent and environment, READY, with the version a start
 * runs (the newest READY one: `POST /agents/<id>/start` takes no version), in the given order of first appearance.
 */
export function startableDeployments(deployments: readonly DeploymentStatus[]): DeploymentStatus[] {
  const newest = new Map<string, DeploymentStatus>();
  for (const d of deployments) {
    if (d.status !== 'READY') continue;
    const key = `${d.environment}|${d.agentId}`;
    const known = newest.get(key);
    if (!known || d.agentVersion > known.agentVersion) newest.set(key, d);
  }
  return [...newest.values()];
}
