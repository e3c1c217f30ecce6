import type pg from 'pg';
import type { DeploymentRecord, DeploymentStore } from '../runtime-ports.ts';
import { toDeploymentRecord } from '../runtime-rows.ts';

/** Recorded deployments in PostgreSQL; every method is one statement. */
export class PostgresDeploymentStore implements DeploymentStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async put(record: DeploymentRecord): Promise<void> {
    await this.#pool.query(
      `INSERT INTO deployments (environment, agent_id, agent_version, deployed_on) VALUES ($1, $2, $3, $4)
       ON CONFLICT (environment, agent_id, agent_version) DO UPDATE SET deployed_on = excluded.deployed_on`,
      [record.environment, record.agentId, record.agentVersion, record.deployedOn],
    );
  }

  async remove(environment: string, agentId: string, agentVersion: number): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      'DELETE FROM deployments WHERE environment = $1 AND agent_id = $2 AND agent_version = $3',
      [environment, agentId, agentVersion],
    );
    return rowCount === 1;
  }

  async list(): Promise<DeploymentRecord[]> {
    const { rows } = await this.#pool.query('SELECT * FROM deployments ORDER BY environment, agent_id, agent_version');
    return rows.map(toDeploymentRecord);
  }
}
