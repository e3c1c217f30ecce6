import { AppError, conflict, invalid, notFound } from '../../errors.ts';
import { isId } from '../../ids.ts';
import { parseContext } from '../../runtime/context.ts';
import type { ConversationService, Message } from '../../runtime/conversations.ts';
import { normalizeEnvironment, type Environment } from '../../runtime/deployments.ts';
import type { ContextValue, Conversation } from '../../runtime/memory.ts';
import type { ResourceService } from '../../resources/service.ts';
import {
  grantsToStore,
  parseGrants,
  type AccessLevel,
  type CallerAccess,
  type StoredGrant,
  type Visibility,
} from '../../security/access.ts';
import type { TriggerRecord, TriggerStore } from '../../storage/runtime-ports.ts';

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

/** Who may use, edit or own a trigger, as its owner sees it. */
export interface TriggerAccessView {
  readonly intent: string;
  readonly ownerId?: string;
  readonly spaceId?: string;
  readonly visibility: string;
  readonly grants: readonly StoredGrant[];
}

/**
 * Triggers and managed conversations. A trigger has an owner, a space, a visibility and grants like a
 * configuration resource (`CallerAccess.levelOf`): while access checks apply to the caller, reading it and
 * conversing through it need USE, replacing it EDIT, deleting it and changing who may use it OWN; a trigger the
 * caller has no level on is a 404 and left out of the list. A trigger it writes may reference only agents it can
 * use, and it reaches only its own managed conversations (the path's userId is the caller).
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

  /** `space` (optional): one of the caller's spaces, where the trigger is recorded (the caller's own by default). */
  async create(body: unknown, caller?: CallerAccess, space?: string): Promise<BotTrigger> {
    const trigger = parseTrigger(body);
    await this.#checkReferences(trigger, caller);
    if ((await this.#store.get(trigger.intent)) !== undefined) {
      throw conflict(`A trigger for intent '${trigger.intent}' exists already; update it with PUT.`);
    }
    await this.#store.put(trigger.intent, JSON.stringify(trigger), this.#clock(), caller?.origin(space));
    return trigger;
  }

  /** Replaces the trigger of an intent (EDIT), or creates it as `create` does when the intent has none. */
  async replace(intent: string, body: unknown, caller?: CallerAccess, space?: string): Promise<BotTrigger> {
    const trigger = parseTrigger(body, intent);
    const existing = await this.#store.get(intent);
    if (existing !== undefined) checkLevel(existing, caller, 'EDIT');
    await this.#checkReferences(trigger, caller);
    await this.#store.put(intent, JSON.stringify(trigger), this.#clock(), caller?.origin(space));
    return trigger;
  }

  async get(intent: string, caller?: CallerAccess): Promise<BotTrigger> {
    return JSON.parse((await this.#record(intent, caller, 'USE')).bodyJson) as BotTrigger;
  }

  /** The triggers the caller has a level on (all of them while no checks apply to it). */
  async list(caller?: CallerAccess): Promise<BotTrigger[]> {
    return (await this.#store.list())
      .filter((record) => !caller?.restricted || caller.levelOf(record) !== undefined)
      .map(({ bodyJson }) => JSON.parse(bodyJson) as BotTrigger);
  }

  async delete(intent: string, caller?: CallerAccess): Promise<void> {
    await this.#record(intent, caller, 'OWN');
    if (!(await this.#store.delete(intent))) throw notFound(`No trigger for intent '${intent}'.`);
  }

  /** Owner, space, visibility and grants of a trigger (owner level). */
  async access(intent: string, caller?: CallerAccess): Promise<TriggerAccessView> {
    return accessView(await this.#record(intent, caller, 'OWN'));
  }

  /** Replaces the grant list (owner level), read as for configuration resources (`grantsToStore`). */
  async setGrants(intent: string, list: unknown, caller?: CallerAccess): Promise<TriggerAccessView> {
    const record = await this.#record(intent, caller, 'OWN');
    return this.#setAccess(intent, { grants: grantsToStore(list, record.ownerId) });
  }

  /** Sets who besides the grantees may use a trigger and, optionally, moves it to one of the caller's spaces (owner level). */
  async setVisibility(
    intent: string,
    change: { visibility: Visibility; spaceId?: string | undefined },
    caller?: CallerAccess,
  ): Promise<TriggerAccessView> {
    await this.#record(intent, caller, 'OWN');
    const spaceId =
      change.spaceId === undefined || caller === undefined ? change.spaceId : caller.origin(change.spaceId).spaceId;
    return this.#setAccess(intent, { visibility: change.visibility, spaceId });
  }

  async #setAccess(intent: string, change: Parameters<TriggerStore['setAccess']>[1]): Promise<TriggerAccessView> {
    const changed = await this.#store.setAccess(intent, change);
    if (changed === undefined) throw notFound(`No trigger for intent '${intent}'.`);
    return accessView(changed);
  }

  /** The stored trigger after the caller's level on it was checked; 404 when unknown (or invisible to the caller). */
  async #record(intent: string, caller: CallerAccess | undefined, level: AccessLevel): Promise<TriggerRecord> {
    const record = await this.#store.get(intent);
    if (record === undefined) throw notFound(`No trigger for intent '${intent}'.`);
    checkLevel(record, caller, level);
    return record;
  }

  /** The user's conversation for the intent, started (with a deployment picked at random) when there is none or it ended. */
  async conversation(intent: string, userId: string, caller?: CallerAccess): Promise<Conversation> {
    caller?.requireSelf(userId);
    const trigger = await this.get(intent, caller);
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
    await this.get(intent, caller);
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

/** 404 (as for an unknown intent) when the caller has no level on the trigger, 403 when too low. */
function checkLevel(record: TriggerRecord, caller: CallerAccess | undefined, level: AccessLevel): void {
  if (!caller?.restricted) return;
  if (caller.levelOf(record) === undefined) throw notFound(`No trigger for intent '${record.intent}'.`);
  caller.require({ ...record, id: `'${record.intent}'` }, level, 'trigger');
}

function accessView(record: TriggerRecord): TriggerAccessView {
  return {
    intent: record.intent,
    ...(record.ownerId === undefined ? {} : { ownerId: record.ownerId }),
    ...(record.spaceId === undefined ? {} : { spaceId: record.spaceId }),
    visibility: record.visibility ?? 'private',
    grants: parseGrants(record.grants),
  };
}
