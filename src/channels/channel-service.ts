import type { FastifyBaseLogger } from 'fastify';
import { AppError, notFound } from '../errors.ts';
import { isId, newId } from '../ids.ts';
import type { Agent } from '../resources/schemas/agent.ts';
import type { ResourceService } from '../resources/service.ts';
import type { ConversationService } from '../runtime/conversations.ts';
import type { DeploymentService } from '../runtime/deployments.ts';
import { outputTexts } from '../runtime/snapshot.ts';
import type { CallerAccess } from '../security/access.ts';
import type { SecretResolver } from '../security/secret-references.ts';
import type { ChannelMessageRecord, ChannelMessageStore } from '../storage/channel-message-ports.ts';
import type { ClusterCoordination } from '../storage/cluster-ports.ts';
import { PLATFORMS, type ChannelPlatform, type InboundMessage, type PlatformApi, type Reply } from './platforms.ts';

/**
 * Messaging channels (issue 18). A webhook delivery is checked, its messages are persisted (a message id seen
 * before is a platform retry and is dropped), and only then is the platform answered; the messages are processed
 * right after, each sender's in order. Processing claims a message for the turn timeout plus the claim margin: an
 * instance that dies after acknowledging a message or while processing it leaves it to the others, which pick it up
 * every `svc.channels.retry-interval-millis`. The turn is sent with the platform's message id as idempotency key,
 * so a message taken over is never answered by a second turn. Each sender has one conversation per agent (on the
 * agent's production deployment); replies go back through the platform's API.
 */

const MAX_LISTED = 100;
const STRANDED_BATCH = 50;

export interface ChannelServiceOptions {
  readonly store: ChannelMessageStore;
  readonly resources: ResourceService;
  readonly deployments: DeploymentService;
  readonly conversations: ConversationService;
  readonly cluster: ClusterCoordination;
  readonly secrets: SecretResolver;
  readonly api: (platform: ChannelPlatform) => PlatformApi;
  /** How long a message is claimed for (turn timeout plus claim margin). */
  readonly leaseMillis: number;
  readonly log: FastifyBaseLogger;
  readonly clock?: () => number;
}

export class ChannelService {
  readonly #options: ChannelServiceOptions;
  readonly #clock: () => number;
  /** The processing of each sender's messages on this instance, chained so that they run in order. */
  readonly #senders = new Map<string, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(options: ChannelServiceOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** Picks up stranded messages every `intervalMillis` (0: never) until `close`. */
  start(intervalMillis: number): void {
    if (intervalMillis <= 0) return;
    this.#timer = setInterval(() => {
      this.#sweeping ??= this.sweep(intervalMillis).finally(() => {
        this.#sweeping = undefined;
      });
    }, intervalMillis);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping;
    await Promise.all(this.#senders.values());
  }

  /**
   * The channel settings of the agent's production deployment for a platform, secrets resolved from the vault.
   * 404 when the agent is not deployed or has no such channel; 503 when a secret cannot be read.
   */
  async config(platform: ChannelPlatform, agentId: string): Promise<Record<string, string>> {
    const deployed = isId(agentId) ? this.#options.deployments.latestReady('production', agentId) : undefined;
    if (!deployed) throw notFound(`Agent ${agentId} is not deployed in production.`);
    const agent = JSON.parse(await this.#options.resources.read('agent', agentId, deployed.version)) as Agent;
    const channel = agent.channels?.find((candidate) => candidate.type === platform.channelType);
    if (!channel)
      throw notFound(`Agent ${agentId} (version ${deployed.version}) has no ${platform.channelType} channel.`);
    const config: Record<string, string> = {};
    for (const name of platform.settings) {
      const reference = channel.config?.[name];
      if (reference === undefined)
        throw new AppError('unavailable', `The ${platform.name} channel of agent ${agentId} has no ${name}.`);
      config[name] = await this.#options.secrets.resolve(reference).then(
        (resolved) => resolved.text,
        (error: Error) => {
          throw new AppError('unavailable', `The ${platform.name} channel's ${name} cannot be read: ${error.message}`);
        },
      );
    }
    return config;
  }

  /** Persists the messages of a delivery (retries dropped), then processes them after the caller answered. */
  async accept(platform: ChannelPlatform, agentId: string, messages: readonly InboundMessage[]): Promise<void> {
    const now = this.#clock();
    const accepted: ChannelMessageRecord[] = [];
    for (const message of messages) {
      const record: ChannelMessageRecord = {
        id: newId(now),
        platform: platform.name,
        agentId,
        messageKey: message.messageKey,
        senderKey: message.senderKey,
        userId: message.userId,
        replyTo: JSON.stringify(message.replyTo),
        input: message.input,
        receivedOn: now,
        state: 'PENDING',
      };
      if (await this.#options.store.accept(record)) accepted.push(record);
    }
    setImmediate(() => {
      for (const record of accepted) this.#processInOrder(record.platform, record.agentId, record.senderKey, record.id);
    });
  }

  /** Processes messages whose instance died after acknowledging them (or while processing them). */
  async sweep(pendingForMillis: number): Promise<void> {
    const now = this.#clock();
    const ids = await this.#options.store.stranded(now, now - pendingForMillis, STRANDED_BATCH).catch(() => []);
    await Promise.all(ids.map((id) => this.#process(id)));
  }

  /** The latest messages of an agent's channels (USE on the agent). */
  async list(agentId: string, caller?: CallerAccess): Promise<ChannelMessageRecord[]> {
    await this.#options.resources.currentVersion('agent', agentId, caller);
    return this.#options.store.list(agentId, MAX_LISTED);
  }

  #processInOrder(platform: string, agentId: string, senderKey: string, id: string): void {
    const key = `${platform}:${agentId}:${senderKey}`;
    const next = (this.#senders.get(key) ?? Promise.resolve()).then(() => this.#process(id));
    this.#senders.set(key, next);
    void next.finally(() => {
      if (this.#senders.get(key) === next) this.#senders.delete(key);
    });
  }

  async #process(id: string): Promise<void> {
    const { store, leaseMillis, log } = this.#options;
    const now = this.#clock();
    const claimId = newId(now);
    const message = await store.claim(id, claimId, now, now + leaseMillis).catch(() => undefined);
    if (message === undefined) return;
    let conversationId: string | undefined;
    try {
      const platform = platformNamed(message.platform);
      const conversation = await this.#conversationOf(message);
      conversationId = conversation.id;
      const reply = await this.#turn(message, conversation.id, conversation.fresh);
      if (reply.texts.length > 0) {
        const config = await this.config(platform, message.agentId);
        await platform.send(reply, JSON.parse(message.replyTo), config, this.#options.api(platform));
      }
      await store.finish(id, claimId, { state: 'DONE', finishedOn: this.#clock(), conversationId });
    } catch (error) {
      log.warn({ err: error, channelMessageId: id }, 'channel message failed');
      await store
        .finish(id, claimId, {
          state: 'FAILED',
          finishedOn: this.#clock(),
          conversationId,
          detail: (error as Error).message,
        })
        .catch(() => undefined);
    }
  }

  /** The sender's conversation with the agent, started when there is none or it ended. */
  async #conversationOf(message: ChannelMessageRecord): Promise<{ id: string; fresh: boolean }> {
    const { store, conversations, cluster, leaseMillis } = this.#options;
    const { platform, agentId, senderKey } = message;
    return cluster.withConversationLock(`channel:${platform}:${agentId}:${senderKey}`, leaseMillis, async () => {
      const known = await store.conversationOf(platform, agentId, senderKey);
      const existing = known === undefined ? undefined : await conversations.get(known).catch(() => undefined);
      if (existing !== undefined && existing.state !== 'ENDED') return { id: existing.id, fresh: false };
      const started = await conversations.start(agentId, 'production', { userId: message.userId, context: {} });
      await store.setConversation(platform, agentId, senderKey, started.id);
      return { id: started.id, fresh: true };
    });
  }

  /** Runs the message's turn (once: a message taken over is answered from its step) and answers what to send back. */
  async #turn(message: ChannelMessageRecord, conversationId: string, fresh: boolean): Promise<Reply> {
    const idempotencyKey = `${message.platform}:${message.messageKey}`;
    const conversation = await this.#options.conversations.say(conversationId, {
      input: message.input,
      context: {},
      idempotencyKey,
    });
    const step = conversation.steps.findLast((candidate) => candidate.request?.idempotencyKey === idempotencyKey);
    const welcome = fresh ? outputTexts(conversation.steps[0]?.output.output) : [];
    const quickReplies = Array.isArray(step?.output.quickReplies) ? step.output.quickReplies : [];
    return {
      texts: [...welcome, ...outputTexts(step?.output.output)],
      quickReplies: quickReplies.flatMap((quickReply: unknown) =>
        typeof quickReply === 'object' &&
        quickReply !== null &&
        typeof (quickReply as { value?: unknown }).value === 'string'
          ? [(quickReply as { value: string }).value]
          : [],
      ),
    };
  }
}

function platformNamed(name: string): ChannelPlatform {
  const platform = PLATFORMS[name as keyof typeof PLATFORMS];
  if (platform === undefined) throw new Error(`Unknown channel platform '${name}'.`);
  return platform;
}
