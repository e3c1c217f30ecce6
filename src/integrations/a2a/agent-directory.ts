import { AppError } from '../../errors.ts';
import type { Agent } from '../../resources/schemas/agent.ts';
import type { ResourceService } from '../../resources/service.ts';
import type { CallerAccess } from '../../security/access.ts';
import type { DeploymentService } from '../../runtime/deployments.ts';

/** An agent deployed READY in production, as its latest stored version and descriptor describe it. */
export interface DeployedAgent {
  readonly id: string;
  /** The descriptor's name ('' when unnamed). */
  readonly name: string;
  /** The agent's own `description`, else the descriptor's ('' when neither is set). */
  readonly description: string;
  /** The newest READY version in production (the one a new conversation runs). */
  readonly deployedVersion: number;
  /** The latest stored configuration (which decides `a2aEnabled` and the skills). */
  readonly config: Agent;
}

/**
 * Which agents can be talked to from outside: deployed agents (MCP) and, among them, the agent-to-agent exposed
 * ones (`a2aEnabled: true` in the latest stored version). Only the `production` environment counts.
 */
export class AgentDirectory {
  readonly #resources: ResourceService;
  readonly #deployments: DeploymentService;

  constructor(options: { resources: ResourceService; deployments: DeploymentService }) {
    this.#resources = options.resources;
    this.#deployments = options.deployments;
  }

  /** The agent when it is deployed READY in production and still stored; undefined otherwise (also for a malformed id). */
  async deployed(agentId: string): Promise<DeployedAgent | undefined> {
    const ready = this.#deployments.latestReady('production', agentId);
    if (!ready) return undefined;
    try {
      const version = await this.#resources.currentVersion('agent', agentId);
      const config = JSON.parse(await this.#resources.read('agent', agentId, version)) as Agent;
      const descriptor = await this.#resources.descriptor(agentId);
      return {
        id: agentId,
        name: descriptor.name,
        description: config.description || descriptor.description,
        deployedVersion: ready.version,
        config,
      };
    } catch (error) {
      if (error instanceof AppError) return undefined; // deleted or not an id: not reachable
      throw error;
    }
  }

  /** The agent when it is deployed and A2A-enabled. */
  async exposed(agentId: string): Promise<DeployedAgent | undefined> {
    const agent = await this.deployed(agentId);
    return agent?.config.a2aEnabled === true ? agent : undefined;
  }

  /** Every deployed agent the caller sees (all of them without a caller), oldest first (ids are time-ordered). */
  async listDeployed(caller?: CallerAccess): Promise<DeployedAgent[]> {
    const ids = new Set(
      this.#deployments
        .list('production')
        .filter((d) => d.status === 'READY')
        .map((d) => d.agentId),
    );
    const agents = await Promise.all(
      [...ids].sort().map(async (id) => ((await this.#resources.visible(id, caller)) ? this.deployed(id) : undefined)),
    );
    return agents.filter((agent): agent is DeployedAgent => agent !== undefined);
  }

  /** Every A2A-exposed agent, oldest first. */
  async listExposed(): Promise<DeployedAgent[]> {
    return (await this.listDeployed()).filter((agent) => agent.config.a2aEnabled === true);
  }
}
