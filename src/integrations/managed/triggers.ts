import { AppError, conflict, invalid, notFound } from '../../errors.ts';
import { isId } from '../../ids.ts';
import { parseContext } from '../../runtime/context.ts';
import type { ConversationService, Message } from '../../runtime/conversations.ts';
import { normalizeEnvironment, type Environment } from '../../runtime/deployments.ts';
import type { ContextValue, Conversation } from '../../runtime/memory.ts';
import type { ResourceService } from '../../resources/service.ts';
import type { CallerAccess } from '../../security/access.ts';
import type { TriggerStore } from '../../storage/runtime-ports.ts';

/**
 * Managed agents: a trigger maps an intent to one or more agent deployments; `/managedbots/{intent}/{userId}`
 * keeps one conversation per user and intent, started with a deployment picked at random.
 */
export interface BotDeployment {
  readonly environment: Environment;
  readonly botId: string;
  /** Handed to the first step (the conversation start) only. */
  readonly initialContext: Readonly<Record<string, ContextValue>>;
}

export interface BotTrigger {
  readonly intent: string;
  readonly botDeployments: readonly BotDeployment[];
}

/**
 * Reads a trigger body (lenient: unknown fields are ignored), accepting upstream's `agentDeployments`/`agentId`.
 * The intent in the path wins; a different one in the body is a mistake.
 */
export function parseTrigger(body: unknown, intentFromPath?: string): BotTrigger {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw invalid('A bot trigger must be a JSON object.', { path: '$' });
  const raw = body as { intent?: unknown; botDeployments?: unknown; agentDeployments?: unknown };
  const intent = intentFromPath ?? raw.intent;
  if (typeof intent !== 'string' || intent.trim() === '')
    throw invalid('intent must be a non-empty text.', { path: '$.intent' });
  if (intentFromPath !== undefined && raw.intent !== undefined && raw.intent !== intentFromPath) {
    throw invalid(`The body names intent '${String(raw.intent)}' but the path names '${intentFromPath}'.`, {
      path: '$.intent',
    });
  }
  const deployments = raw.botDeployments ?? raw.agentDeployments;
  if (!Array.isArray(deployments) || deployments.length === 0) {
    throw invalid('botDeployments must list at least one {environment, botId}.', { path: '$.botDeployments' });
  }
  const botDeployments = deployments.map((entry: unknown, index): BotDeployment => {
    const path = `$.botDeployments[${index}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
      throw invalid(`${path} must be an object.`, { path });
    const { environment, botId, agentId, initialContext } = entry as Record<string, unknown>;
    const id = botId ?? agentId;
    if (typeof id !== 'string' || !isId(id))
      throw invalid(`${path}.botId must be an agent id.`, { path: `${path}.botId` });
    if (environment !== undefined && typeof environment !== 'string')
      throw invalid(`${path}.environment must be a text.`, { path: `${path}.environment` });
    return {
      environment: normalizeEnvironment(environment),
      botId: id,
      initialContext: parseContext(initialContext, `${path}.initialContext`),
    };
  });
  return { intent, botDeployments };
}

/**
 * Triggers and managed conversations. While access checks apply to the caller, a trigger it writes may reference
 * only agents it can use, and it reaches only its own managed conversations (the path's userId is the caller).
 */
export class TriggerService {
  readonly #store: TriggerStore;
  readonly #conversations: ConversationService;
  readonly #resources: Pick<ResourceService, 'record'>;
  readonly #clock: () => number;
  readonly #random: () => number;

  constructor(
    store: TriggerStore,
    conversations: ConversationService,
    resources: Pick<ResourceService, 'record'>,
    clock: () => number = Date.now,
    random: () => number = Math.random,
  ) {
    this.#store = store;
    this.#conversations = conversations;
    this.#resources = resources;
    this.#clock = clock;
    this.#random = random;
  }

  async create(body: unknown, caller?: CallerAccess): Promise<BotTrigger> {
    const trigger = parseTrigger(body);
    await this.#checkReferences(trigger, caller);
    if ((await this.#store.get(trigger.intent)) !== undefined) {
      throw conflict(`A trigger for intent '${trigger.intent}' exists already; update it with PUT.`);
    }
    await this.#store.put(trigger.intent, JSON.stringify(trigger), this.#clock());
    return trigger;
  }

  async replace(intent: string, body: unknown, caller?: CallerAccess): Promise<BotTrigger> {
    const trigger = parseTrigger(body, intent);
    await this.#checkReferences(trigger, caller);
    await this.#store.put(intent, JSON.stringify(trigger), this.#clock());
    return trigger;
  }

  async get(intent: string): Promise<BotTrigger> {
    const json = await this.#store.get(intent);
    if (json === undefined) throw notFound(`No trigger for intent '${intent}'.`);
    return JSON.parse(json) as BotTrigger;
  }

  async list(): Promise<BotTrigger[]> {
    return (await this.#store.list()).map(({ bodyJson }) => JSON.parse(bodyJson) as BotTrigger);
  }

  async delete(intent: string): Promise<void> {
    if (!(await this.#store.delete(intent))) throw notFound(`No trigger for intent '${intent}'.`);
  }

  /** The user's conversation for the intent, started (with a deployment picked at random) when there is none or it ended. */
  async conversation(intent: string, userId: string, caller?: CallerAccess): Promise<Conversation> {
    caller?.requireSelf(userId);
    const trigger = await this.get(intent);
    const kept = await this.#store.managedConversation(intent, userId);
    if (kept !== undefined) {
      const existing = await this.#conversations.get(kept).catch(() => undefined);
      if (existing && existing.state !== 'ENDED') return existing;
      await this.#store.clearManagedConversation(intent, userId, kept);
    }
    const deployment = trigger.botDeployments[Math.floor(this.#random() * trigger.botDeployments.length)]!;
    const started = await this.#conversations.start(deployment.botId, deployment.environment, {
      userId,
      context: deployment.initialContext,
    });
    await this.#store.setManagedConversation(intent, userId, started.id);
    return started;
  }

  async say(intent: string, userId: string, message: Message, caller?: CallerAccess): Promise<Conversation> {
    const conversation = await this.conversation(intent, userId, caller);
    return this.#conversations.say(conversation.id, message);
  }

  async end(intent: string, userId: string, caller?: CallerAccess): Promise<void> {
    caller?.requireSelf(userId);
    await this.get(intent);
    const kept = await this.#store.managedConversation(intent, userId);
    if (kept === undefined) throw notFound(`User ${userId} has no conversation for intent '${intent}'.`);
    await this.#conversations.end(kept);
    await this.#store.clearManagedConversation(intent, userId, kept);
  }

  /** Every agent the trigger references must be usable by the caller (an agent it cannot see at all is a 403 here). */
  async #checkReferences(trigger: BotTrigger, caller: CallerAccess | undefined): Promise<void> {
    if (!caller?.restricted) return;
    for (const agentId of new Set(trigger.botDeployments.map((deployment) => deployment.botId))) {
      const record = await this.#resources.record(agentId);
      if (record !== undefined && caller.levelOf(record) === undefined) {
        throw new AppError(
          'forbidden',
          `The trigger references agent ${agentId}, which ${caller.principal.name} cannot use (USE access needed).`,
        );
      }
    }
  }
}
