import { randomUUID } from 'node:crypto';
import { Role, type AgentCard, type SendMessageResult } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { LRUCache } from 'lru-cache';
import type { SecretValues } from '../tasks/httpcalls/field-template.ts';
import type { SecretResolver } from '../security/secret-references.ts';
import { linkedSignal } from '../shared/abort.ts';
import { ToolFailure, stringArgument, toolName, type ToolDefinition } from './tool-definitions.ts';

/**
 * Peer agents as tools (`a2aAgents` of an LLM task): each skill on a peer's agent card becomes a tool
 * `<name>_<skill id>` taking a `message`, sent with the A2A protocol through the official SDK client (JSON-RPC; v0.3
 * peers through its compatibility layer) over the service's guarded outbound fetch. Each call is a new task on
 * the peer. Cards are cached for five minutes per URL and key.
 */

export interface A2aAgentConfig {
  /** The peer's agent card (`…/agent.json`) or its base URL (the card is then `<url>/agent.json`). */
  readonly url: string;
  readonly name?: string;
  /** Sent as `Authorization: Bearer …`; a `${vault:NAME}` reference, resolved per turn. */
  readonly apiKey?: string;
  readonly timeoutMs?: number;
  /** Only these skills (by id or name); default all. */
  readonly skillsFilter?: readonly string[];
}

export const DEFAULT_A2A_TIMEOUT_MS = 30_000;
const CARD_TTL_MS = 5 * 60_000;

interface Peer {
  readonly card: AgentCard;
  readonly client: Client;
}

export class A2aPeers {
  readonly #fetch: typeof globalThis.fetch;
  readonly #peers = new LRUCache<string, Promise<Peer>>({ max: 500, ttl: CARD_TTL_MS });

  constructor(fetch: typeof globalThis.fetch) {
    this.#fetch = fetch;
  }

  /** The tools of one peer; `apiKey` is the resolved key. Throws when the card cannot be read. */
  async tools(config: A2aAgentConfig, apiKey: string | undefined, signal: AbortSignal): Promise<ToolDefinition[]> {
    const timeoutMs = config.timeoutMs ?? DEFAULT_A2A_TIMEOUT_MS;
    const peer = await this.#peer(config.url, apiKey).catch((error: unknown) => {
      throw new Error(`the agent card of the A2A agent at ${config.url} cannot be read: ${withCauses(error)}`);
    });
    const wanted = config.skillsFilter && config.skillsFilter.length > 0 ? new Set(config.skillsFilter) : undefined;
    const skills = peer.card.skills.filter((skill) => !wanted || wanted.has(skill.id) || wanted.has(skill.name));
    const agentName = config.name?.trim() || peer.card.name;
    return skills.map((skill) => ({
      name: toolName(`${agentName}_${skill.id}`),
      description: `Ask the agent '${agentName}' (${peer.card.description || 'an A2A agent'}) to use its skill '${skill.name}'${skill.description ? `: ${skill.description}` : ''}.`,
      inputSchema: {
        type: 'object',
        properties: { message: { type: 'string', description: 'What to ask the agent, in plain words' } },
        required: ['message'],
      },
      cacheable: false,
      async run(args, context) {
        const text = stringArgument(args, 'message')!;
        const call = linkedSignal([context.signal, signal], timeoutMs);
        try {
          const result = await peer.client.sendMessage(messageRequest(text), { signal: call.signal });
          return answerText(result);
        } catch (error) {
          if (context.signal.aborted) throw error;
          throw new ToolFailure(`The A2A agent '${agentName}' did not answer: ${withCauses(error)}`);
        } finally {
          call.release();
        }
      },
    }));
  }

  #peer(url: string, apiKey: string | undefined): Promise<Peer> {
    const key = `${url}\u0000${apiKey ?? ''}`;
    let peer = this.#peers.get(key);
    if (peer === undefined) {
      peer = this.#connect(url, apiKey);
      peer.catch(() => this.#peers.delete(key));
      this.#peers.set(key, peer);
    }
    return peer;
  }

  async #connect(url: string, apiKey: string | undefined): Promise<Peer> {
    const base = this.#fetch;
    const fetchImpl: typeof globalThis.fetch =
      apiKey === undefined
        ? base
        : (input, init) => {
            const headers = new Headers(init?.headers);
            headers.set('authorization', `Bearer ${apiKey}`);
            return base(input, { ...init, headers });
          };
    const cardResolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat: { enabled: true } });
    const isCard = new URL(url).pathname.endsWith('.json');
    const card = await cardResolver.resolve(url, isCard ? '' : '/agent.json');
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } })],
      cardResolver,
    });
    return { card, client: await factory.createFromAgentCard(card) };
  }
}

/** The tools of every peer of a task, their keys read from the vault (and added to the values to mask). */
export async function peerTools(
  peers: A2aPeers,
  configs: readonly A2aAgentConfig[],
  resolver: SecretResolver,
  secrets: SecretValues,
  signal: AbortSignal,
): Promise<ToolDefinition[]> {
  const tools: ToolDefinition[] = [];
  for (const config of configs) {
    let apiKey: string | undefined;
    if (config.apiKey !== undefined) {
      const resolved = await resolver.resolve(config.apiKey);
      for (const value of [resolved.text, ...resolved.secretValues]) secrets.add(value);
      apiKey = resolved.text;
    }
    tools.push(...(await peers.tools(config, apiKey, signal)));
  }
  return tools;
}

/** An error's message with those of its causes (`fetch failed` alone does not say that the URL guard refused). */
function withCauses(error: unknown): string {
  const messages: string[] = [];
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth++) {
    messages.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return messages.join(': ');
}

function messageRequest(text: string) {
  return {
    tenant: '',
    configuration: undefined,
    metadata: undefined,
    message: {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: '' }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
  };
}

type Part = { readonly content?: { readonly $case: string; readonly value?: unknown } };

function partsText(parts: readonly Part[] | undefined): string {
  return (parts ?? [])
    .map((part) => (part.content?.$case === 'text' ? String(part.content.value ?? '') : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/** The text of a peer's answer: a task's artifacts (else its status message), or a message's parts. */
function answerText(result: SendMessageResult): string {
  const answer = result as {
    artifacts?: ReadonlyArray<{ parts?: readonly Part[] }>;
    status?: { message?: { parts?: readonly Part[] }; state?: unknown };
    parts?: readonly Part[];
  };
  const fromArtifacts = (answer.artifacts ?? []).map((artifact) => partsText(artifact.parts)).join('\n');
  const text = fromArtifacts || partsText(answer.status?.message?.parts) || partsText(answer.parts);
  if (text === '') throw new ToolFailure('The A2A agent answered without any text.');
  return text;
}
