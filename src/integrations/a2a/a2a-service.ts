import type { FastifyBaseLogger } from 'fastify';
import type { Settings } from '../../settings.ts';
import type { AgentDirectory } from './agent-directory.ts';
import type { AgentChat } from './agent-chat.ts';
import { A2ATasks, type A2ACall } from './a2a-tasks.ts';
import { agentCard, capabilities, skillNames, tokenEndpoint, type AgentCard, type CapabilityMatch } from './cards.ts';
import { answerJsonRpc, type JsonRpcResponse } from './json-rpc.ts';

type A2ASettings = Pick<Settings,
  'svc.a2a.capabilities.enabled' | 'svc.a2a.capabilities.public' | 'svc.a2a.public-token-endpoint' | 'svc.oidc.public-url' | 'svc.oidc.auth-server-url'>;

/**
 * The agent-to-agent surface: cards of the exposed agents (A2A-enabled and deployed READY in production), the
 * capability discovery documents, and each exposed agent's JSON-RPC task endpoint.
 */
export class A2AService {
  readonly #directory: AgentDirectory;
  readonly #tasks: A2ATasks;
  readonly #settings: A2ASettings;
  readonly #log: FastifyBaseLogger;

  constructor(options: { directory: AgentDirectory; chat: AgentChat; settings: A2ASettings; log: FastifyBaseLogger; taskCapacity?: number }) {
    this.#directory = options.directory;
    this.#settings = options.settings;
    this.#log = options.log;
    this.#tasks = new A2ATasks(options.taskCapacity === undefined ? { chat: options.chat } : { chat: options.chat, capacity: options.taskCapacity });
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

  async isExposed(agentId: string): Promise<boolean> {
    return (await this.#directory.exposed(agentId)) !== undefined;
  }

  /** Answers one JSON-RPC request (the raw body text) addressed to an exposed agent. */
  async answer(call: A2ACall, body: string): Promise<JsonRpcResponse> {
    return answerJsonRpc(body, this.#tasks.methods(call), (error) =>
      this.#log.error({ err: error, agentId: call.agentId }, 'an A2A request failed unexpectedly'));
  }
}
