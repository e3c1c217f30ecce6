import type { FastifyBaseLogger } from 'fastify';
import { invalid, notFound } from '../errors.ts';
import type { ClusterCoordination } from '../storage/cluster-ports.ts';
import type { DeploymentStore } from '../storage/runtime-ports.ts';
import { compileAgent, type CompiledAgent, type ConfigurationSource } from './compiler.ts';
import { DeploymentError, type TaskRegistry } from './tasks.ts';
import type { AuthorizeReferenced, AuthorizeResource, CallerAccess, ResourceVisible } from '../security/access.ts';

export type DeploymentStatus = 'NOT_FOUND' | 'IN_PROGRESS' | 'READY' | 'ERROR';

export const ENVIRONMENTS = ['production', 'test'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** `production` and `test`; the older names `restricted` and `unrestricted` mean `production`. */
export function normalizeEnvironment(name: string | undefined): Environment {
  const value = (name ?? 'production').trim();
  if (value === 'production' || value === 'restricted' || value === 'unrestricted' || value === '') return 'production';
  if (value === 'test') return 'test';
  throw invalid(
    `Unknown environment '${name}'; use production or test (restricted and unrestricted mean production).`,
    { path: 'environment' },
  );
}

export interface DeploymentView {
  readonly environment: Environment;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly status: DeploymentStatus;
  readonly autoDeploy: boolean;
  readonly deployedOn: number;
  /** Why the deployment failed, for its author. */
  readonly error?: string;
}

interface Deployment {
  environment: Environment;
  agentId: string;
  agentVersion: number;
  status: Exclude<DeploymentStatus, 'NOT_FOUND'>;
  autoDeploy: boolean;
  deployedOn: number;
  error?: string;
  done: Promise<void>;
}

export interface DeploymentServiceOptions {
  readonly store: DeploymentStore;
  /** Tells the other instances about deployments and undeployments made here. */
  readonly cluster: ClusterCoordination;
  /** How often recorded deployments are compared with the local ones (a missed notification heals itself). */
  readonly reconcileMillis?: number;
  readonly read: ConfigurationSource;
  /** Checks a caller's level on the agent it deploys or undeploys (EDIT). */
  readonly authorize: AuthorizeResource;
  /** Checks that the caller may use everything the agent version references (`ResourceService.authorizeReferenced`). */
  readonly authorizeReferenced: AuthorizeReferenced;
  /** Which agents a caller sees: the deployments of the others are left out of what it reads. */
  readonly visible: ResourceVisible;
  readonly registry: TaskRegistry;
  readonly log: FastifyBaseLogger;
  readonly clock?: () => number;
}

const key = (environment: string, agentId: string, version: number) => `${environment}/${agentId}/${version}`;

const CHANNEL = 'svc_deployments';

interface DeploymentNotice {
  readonly op: 'deploy' | 'undeploy';
  readonly environment: Environment;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly autoDeploy: boolean;
}

/**
 * Deployment of agent versions to environments. Compiling happens once per agent version (shared by every
 * environment) and asynchronously; the status tells how it went. Deployments made with `autoDeploy` are recorded
 * in the store and compiled again at start-up.
 */
export class DeploymentService {
  readonly #options: DeploymentServiceOptions;
  readonly #clock: () => number;
  readonly #deployments = new Map<string, Deployment>();
  readonly #compiled = new Map<string, Promise<CompiledAgent>>();

  readonly #unsubscribe: () => void;
  readonly #reconciler: NodeJS.Timeout;

  constructor(options: DeploymentServiceOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.#unsubscribe = options.cluster.subscribe(CHANNEL, (payload) => this.#applyNotice(payload));
    this.#reconciler = setInterval(() => void this.#reconcile(), options.reconcileMillis ?? 10_000);
    this.#reconciler.unref();
  }

  async close(): Promise<void> {
    this.#unsubscribe();
    clearInterval(this.#reconciler);
  }

  /**
   * Starts deploying an existing agent version (404 when it does not exist). Deploying a version that is READY
   * or IN_PROGRESS changes nothing; one in ERROR is tried again. Resolves with the deployment as it is now;
   * `completion` resolves when compiling ended.
   */
  async deploy(
    environment: Environment,
    agentId: string,
    version: number,
    autoDeploy: boolean,
    caller?: CallerAccess,
  ): Promise<{ view: DeploymentView; completion: Promise<DeploymentView> }> {
    await this.#options.authorize(agentId, caller, 'EDIT');
    if ((await this.#options.read('agent', agentId, version)) === undefined) {
      throw notFound(`No agent with id ${agentId} and version ${version}.`);
    }
    await this.#options.authorizeReferenced('agent', agentId, version, caller, 'deployed');
    const id = key(environment, agentId, version);
    let deployment = this.#deployments.get(id);
    if (!deployment || deployment.status === 'ERROR') {
      if (deployment?.status === 'ERROR') this.#compiled.delete(`${agentId}/${version}`);
      const created: Deployment = {
        environment,
        agentId,
        agentVersion: version,
        status: 'IN_PROGRESS',
        autoDeploy,
        deployedOn: this.#clock(),
        done: Promise.resolve(),
      };
      created.done = this.#compile(created);
      this.#deployments.set(id, created);
      deployment = created;
    }
    if (autoDeploy && !deployment.autoDeploy) deployment.autoDeploy = true;
    if (deployment.autoDeploy) {
      await this.#options.store.put({ environment, agentId, agentVersion: version, deployedOn: deployment.deployedOn });
    }
    await this.#notify({
      op: 'deploy',
      environment,
      agentId,
      agentVersion: version,
      autoDeploy: deployment.autoDeploy,
    });
    const current = deployment;
    return { view: view(current), completion: current.done.then(() => view(current)) };
  }

  async #compile(deployment: Deployment): Promise<void> {
    try {
      await this.compiled(deployment.agentId, deployment.agentVersion);
      deployment.status = 'READY';
      this.#options.log.info(
        { agentId: deployment.agentId, agentVersion: deployment.agentVersion, environment: deployment.environment },
        'agent deployed',
      );
    } catch (error) {
      deployment.status = 'ERROR';
      deployment.error =
        error instanceof DeploymentError
          ? error.message
          : 'The agent could not be compiled because of an internal error; the details are in the service log.';
      this.#options.log.warn(
        {
          agentId: deployment.agentId,
          agentVersion: deployment.agentVersion,
          environment: deployment.environment,
          err: error instanceof DeploymentError ? undefined : error,
        },
        `deployment failed: ${deployment.error}`,
      );
    }
  }

  /**
   * The compiled agent version, compiling it when needed (a conversation of a version that is no longer
   * deployed still runs, on the version it started with). Rejects with a DeploymentError when it cannot compile.
   */
  compiled(agentId: string, version: number): Promise<CompiledAgent> {
    const id = `${agentId}/${version}`;
    let compiled = this.#compiled.get(id);
    if (!compiled) {
      compiled = compileAgent(agentId, version, this.#options.read, this.#options.registry);
      this.#compiled.set(id, compiled);
      compiled.catch(() => this.#compiled.delete(id));
    }
    return compiled;
  }

  status(environment: Environment, agentId: string, version: number): DeploymentView {
    const deployment = this.#deployments.get(key(environment, agentId, version));
    return deployment ? view(deployment) : notDeployed(environment, agentId, version);
  }

  /** The status as the caller may see it: NOT_FOUND, as for an agent never deployed, when it cannot see the agent. */
  async statusFor(
    environment: Environment,
    agentId: string,
    version: number,
    caller: CallerAccess | undefined,
  ): Promise<DeploymentView> {
    return (await this.#options.visible(agentId, caller))
      ? this.status(environment, agentId, version)
      : notDeployed(environment, agentId, version);
  }

  /** Removes a deployment (and its start-up record). False when it was not deployed. */
  async undeploy(environment: Environment, agentId: string, version: number, caller?: CallerAccess): Promise<boolean> {
    await this.#options.authorize(agentId, caller, 'EDIT');
    const existed = this.#deployments.delete(key(environment, agentId, version));
    const recorded = await this.#options.store.remove(environment, agentId, version);
    await this.#notify({ op: 'undeploy', environment, agentId, agentVersion: version, autoDeploy: false });
    if (existed || recorded)
      this.#options.log.info({ agentId, agentVersion: version, environment }, 'agent undeployed');
    return existed || recorded;
  }

  list(environment?: Environment): DeploymentView[] {
    return [...this.#deployments.values()]
      .filter((d) => environment === undefined || d.environment === environment)
      .sort(
        (a, b) => b.deployedOn - a.deployedOn || a.agentId.localeCompare(b.agentId) || b.agentVersion - a.agentVersion,
      )
      .map(view);
  }

  /** The deployments of the agents the caller sees (all of them while no checks apply to it), newest first. */
  async listFor(caller: CallerAccess | undefined, environment?: Environment): Promise<DeploymentView[]> {
    const all = this.list(environment);
    const agentIds = [...new Set(all.map((deployment) => deployment.agentId))];
    const visible = await Promise.all(agentIds.map((agentId) => this.#options.visible(agentId, caller)));
    const seen = new Set(agentIds.filter((_agentId, index) => visible[index]));
    return all.filter((deployment) => seen.has(deployment.agentId));
  }

  /** An agent's deployments in every environment; 404 when the caller cannot see the agent. */
  async ofAgent(agentId: string, caller: CallerAccess | undefined): Promise<Record<Environment, DeploymentView[]>> {
    if (!(await this.#options.visible(agentId, caller))) throw notFound(`No agent with id ${agentId}.`);
    const all = this.list();
    return Object.fromEntries(
      ENVIRONMENTS.map((environment) => [
        environment,
        all.filter((deployment) => deployment.environment === environment && deployment.agentId === agentId),
      ]),
    ) as Record<Environment, DeploymentView[]>;
  }

  /** The newest READY version of an agent in an environment, compiled. */
  latestReady(
    environment: Environment,
    agentId: string,
  ): { version: number; agent: Promise<CompiledAgent> } | undefined {
    let best: Deployment | undefined;
    for (const deployment of this.#deployments.values()) {
      if (
        deployment.environment === environment &&
        deployment.agentId === agentId &&
        deployment.status === 'READY' &&
        (!best || deployment.agentVersion > best.agentVersion)
      )
        best = deployment;
    }
    return best && { version: best.agentVersion, agent: this.compiled(agentId, best.agentVersion) };
  }

  /** Compiles every recorded deployment again (start-up). Resolves when all have finished, well or not. */
  async restore(): Promise<void> {
    const records = await this.#options.store.list();
    await Promise.all(
      records.map((record) =>
        this.#adopt(
          normalizeEnvironment(record.environment),
          record.agentId,
          record.agentVersion,
          true,
          record.deployedOn,
        ),
      ),
    );
  }

  /** Starts tracking a deployment made elsewhere (another instance, or before a restart), unless known already. */
  #adopt(
    environment: Environment,
    agentId: string,
    agentVersion: number,
    autoDeploy: boolean,
    deployedOn: number,
  ): Promise<void> {
    const id = key(environment, agentId, agentVersion);
    const known = this.#deployments.get(id);
    if (known) return known.done;
    const deployment: Deployment = {
      environment,
      agentId,
      agentVersion,
      status: 'IN_PROGRESS',
      autoDeploy,
      deployedOn,
      done: Promise.resolve(),
    };
    this.#deployments.set(id, deployment);
    deployment.done = this.#compile(deployment);
    return deployment.done;
  }

  async #notify(notice: DeploymentNotice): Promise<void> {
    try {
      await this.#options.cluster.publish(CHANNEL, JSON.stringify(notice));
    } catch (error) {
      this.#options.log.warn(
        { err: error },
        'could not tell the other instances about a deployment; they catch up within the reconciliation interval',
      );
    }
  }

  #applyNotice(payload: string): void {
    let notice: DeploymentNotice;
    try {
      notice = JSON.parse(payload) as DeploymentNotice;
    } catch {
      return;
    }
    if (notice.op === 'deploy')
      void this.#adopt(notice.environment, notice.agentId, notice.agentVersion, notice.autoDeploy, this.#clock());
    else this.#deployments.delete(key(notice.environment, notice.agentId, notice.agentVersion));
  }

  /** Recorded deployments missing here are adopted; recorded ones removed elsewhere are dropped. */
  async #reconcile(): Promise<void> {
    if (!this.#options.cluster.shared) return;
    try {
      const records = await this.#options.store.list();
      const recorded = new Set(records.map((r) => key(normalizeEnvironment(r.environment), r.agentId, r.agentVersion)));
      for (const record of records)
        void this.#adopt(
          normalizeEnvironment(record.environment),
          record.agentId,
          record.agentVersion,
          true,
          record.deployedOn,
        );
      const settled = this.#clock() - 5000; // a deployment being recorded right now is not yet in the list
      for (const [id, deployment] of this.#deployments) {
        if (deployment.autoDeploy && !recorded.has(id) && deployment.deployedOn < settled) this.#deployments.delete(id);
      }
    } catch (error) {
      this.#options.log.warn({ err: error }, 'deployment reconciliation failed');
    }
  }
}

function view(deployment: Deployment): DeploymentView {
  const { environment, agentId, agentVersion, status, autoDeploy, deployedOn, error } = deployment;
  return error === undefined || status !== 'ERROR'
    ? { environment, agentId, agentVersion, status, autoDeploy, deployedOn }
    : { environment, agentId, agentVersion, status, autoDeploy, deployedOn, error };
}

function notDeployed(environment: Environment, agentId: string, version: number): DeploymentView {
  return { environment, agentId, agentVersion: version, status: 'NOT_FOUND', autoDeploy: false, deployedOn: 0 };
}
