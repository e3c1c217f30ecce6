import type { Queryable } from './transaction.ts';
import type { DeploymentRecord, DeploymentStore } from '../runtime-ports.ts';
import { toDeploymentRecord } from '../runtime-rows.ts';

/** Recorded deployments in PostgreSQL; every method is one statement. */
export class PostgresDeploymentStore implements DeploymentStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async put(record: DeploymentRecord): Promise<void> {
    await this.#db.query(
      `INSERT INTO deployments (environment, agent_id, agent_version, deployed_on) VALUES ($1, $2, $3, $4)
       ON CONFLICT (environment, agent_id, agent_version) DO UPDATE SET deployed_on = excluded.deployed_on`,
      [record.environment, record.agentId, record.agentVersion, record.deployedOn],
    );
  }

  async remove(environment: string, agentId: string, agentVersion: number): Promise<boolean> {
    const { rowCount } = await this.#db.query(
      'DELETE FROM deployments WHERE environment = $1 AND agent_id = $2 AND agent_version = $3',
      [environment, agentId, agentVersion],
    );
    return rowCount === 1;
  }

  async list(): Promise<DeploymentRecord[]> {
    const { rows } = await this.#db.query('SELECT * FROM deployments ORDER BY environment, agent_id, agent_version');
    return rows.map(toDeploymentRecord);
  }
}
