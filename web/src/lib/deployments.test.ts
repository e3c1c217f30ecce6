import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeploymentStatus } from '../api/types.ts';
import { startableDeployments } from './deployments.ts';

const d = (agentId: string, agentVersion: number, status: DeploymentStatus['status'], environment = 'production') =>
  ({ agentId, agentVersion, status, environment }) as DeploymentStatus;

describe('deployments a conversation can start with', () => {
  it('offers each agent once per environment, with the newest READY version (the one a start runs)', () => {
    const startable = startableDeployments([
      d('a', 1, 'READY'),
      d('a', 3, 'READY'),
      d('a', 4, 'ERROR'),
      d('a', 2, 'READY'),
      d('a', 1, 'READY', 'test'),
      d('b', 1, 'IN_PROGRESS'),
    ]);
    assert.deepEqual(
      startable.map((s) => `${s.agentId} v${s.agentVersion} ${s.environment}`),
      ['a v3 production', 'a v1 test'],
    );
  });
});
