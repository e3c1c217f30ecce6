import type { FastifyBaseLogger } from 'fastify';
import { notFound } from '../../errors.ts';
import type { AuthorizeResource, CallerAccess } from '../../security/access.ts';
import type { Settings } from '../../settings.ts';
import type { AgentDirectory } from './agent-directory.ts';
import type { AgentChat } from './agent-chat.ts';
import { A2ATasks, type A2ACall } from './a2a-tasks.ts';
import { agentCard, capabilities, skillNames, tokenEndpoint, type AgentCard, type CapabilityMatch } from './cards.ts';
import { answerJsonRpc, type JsonRpcResponse } from './json-rpc.ts';

type A2ASettings = Pick<
  Settings,
  | 'svc.a2a.capabilities.enabled'
  | 'svc.a2a.capabilities.public'
  | 'svc.a2a.public-token-endpoint'
  | 'svc.oidc.public-url'
  | 'svc.oidc.auth-server-url'
>;

/** The 404 of an agent that is not exposed over agent-to-agent. */
export const notExposed = (agentId: string) =>
  notFound(
    `No agent-to-agent exposed agent with id ${agentId} (it must have a2aEnabled: true and be deployed READY in production).`,
  );

/**
 * The agent-to-agent surface: cards of the exposed agents (A2A-enabled and deployed READY in production), the
 * capability discovery documents, and each exposed agent's JSON-RPC task endpoint.
 */
export class A2AService {
  readonly #directory: AgentDirectory;
  readonly #authorize: AuthorizeResource;
  readonly #tasks: A2ATasks;
  readonly #settings: A2ASettings;
  readonly #log: FastifyBaseLogger;

  constructor(options: {
    directory: AgentDirectory;
    chat: AgentChat;
    authorize: AuthorizeResource;
    settings: A2ASettings;
    log: FastifyBaseLogger;
    taskCapacity?: number;
  }) {
    this.#directory = options.directory;
    this.#authorize = options.authorize;
    this.#settings = options.settings;
    this.#log = options.log;
    this.#tasks = new A2ATasks(
      options.taskCapacity === undefined
        ? { chat: options.chat }
        : { chat: options.chat, capacity: options.taskCapacity },
    );
  }

  /** The card of an exposed agent; undefined when the agent is unknown, not deployed or not A2A-enabled. */
  async card(agentId: string, publicBase: string): Promise<AgentCard | undefined> {
    const agent = await this.#directory.exposed(agentId);
    return agent && agentCard(agent, publicBase, tokenEndpoint(this.#settings));
  }

  /** The default card (`/.well-known/agent.json`): the card of the oldest exposed agent; undefined when none is. */
  async defaultCard(publicBase: string): Promise<AgentCard | undefined> {
    return (await this.roster(publicBase))[0];
  }

  /** Cards of every exposed agent, oldest agent first. */
  async roster(publicBase: string): Promise<AgentCard[]> {
    const token = tokenEndpoint(this.#settings);
    return (await this.#directory.listExposed()).map((agent) => agentCard(agent, publicBase, token));
  }

  /** Capability discovery answers only when both `svc.a2a.capabilities.enabled` and `.public` are on. */
  get capabilitiesPublished(): boolean {
    return this.#settings['svc.a2a.capabilities.enabled'] && this.#settings['svc.a2a.capabilities.public'];
  }

  async capabilities(query: { skill?: string | undefined; strategy?: string | undefined }): Promise<CapabilityMatch[]> {
    return capabilities(await this.#directory.listExposed(), query);
  }

  async skills(): Promise<string[]> {
    return skillNames(await this.#directory.listExposed());
  }

  /**
   * Answers one JSON-RPC request (the raw body text) addressed to an exposed agent; 404 when the agent is not
   * exposed, or not visible to a caller whom access checks apply to (USE needed).
   */
  async answer(call: A2ACall, body: string, caller?: CallerAccess): Promise<JsonRpcResponse> {
    await this.#authorize(call.agentId, caller, 'USE');
    if ((await this.#directory.exposed(call.agentId)) === undefined) throw notExposed(call.agentId);
    return answerJsonRpc(body, this.#tasks.methods(call), (error) =>
      this.#log.error({ err: error, agentId: call.agentId }, 'an A2A request failed unexpectedly'),
    );
  }
}
