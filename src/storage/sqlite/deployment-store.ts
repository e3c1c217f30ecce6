import type { DatabaseSync } from 'node:sqlite';
import type { DeploymentRecord, DeploymentStore } from '../runtime-ports.ts';
import { toDeploymentRecord } from '../runtime-rows.ts';
import type { GroupCommit } from './group-commit.ts';
import { SqliteStore } from './sqlite-store.ts';

const STATEMENTS = {
  put: `INSERT INTO deployments (environment, agent_id, agent_version, deployed_on) VALUES (?, ?, ?, ?)
    ON CONFLICT (environment, agent_id, agent_version) DO UPDATE SET deployed_on = excluded.deployed_on`,
  remove: 'DELETE FROM deployments WHERE environment = ? AND agent_id = ? AND agent_version = ?',
  list: 'SELECT * FROM deployments ORDER BY environment, agent_id, agent_version',
};

/** Recorded deployments in SQLite; every method is one statement. */
export class SqliteDeploymentStore extends SqliteStore<keyof typeof STATEMENTS> implements DeploymentStore {
  constructor(db: DatabaseSync, writes: GroupCommit) {
    super(db, STATEMENTS, writes);
  }

  async put(record: DeploymentRecord): Promise<void> {
    this.sql.put.run(record.environment, record.agentId, record.agentVersion, record.deployedOn);
  }

  async remove(environment: string, agentId: string, agentVersion: number): Promise<boolean> {
    return Number(this.sql.remove.run(environment, agentId, agentVersion).changes) > 0;
  }

  async list(): Promise<DeploymentRecord[]> {
    return this.sql.list.all().map(toDeploymentRecord);
  }
}
