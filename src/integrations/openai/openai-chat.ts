import { createHash } from 'node:crypto';
import { AppError, invalid, notFound } from '../../errors.ts';
import type { ConversationService } from '../../runtime/conversations.ts';
import type { DeploymentService, Environment } from '../../runtime/deployments.ts';
import type { ContextValue, Conversation } from '../../runtime/memory.ts';
import { TURN_ERROR_KEY } from '../../runtime/pipeline.ts';
import { outputTexts } from '../../runtime/snapshot.ts';
import type { TurnEvent } from '../../runtime/turn.ts';
import type { CallerAccess } from '../../security/access.ts';
import { keyAllowsAgent } from '../../security/api-keys.ts';
import type { CallerIdentity } from '../../security/auth-caller.ts';
import type { ApiKeyRecord, ChatThreadStore } from '../../storage/openai-ports.ts';

/**
 * The OpenAI-compatible chat API's rules, apart from its wire format (`src/http/openai.ts`).
 *
 * Models: every agent deployed READY in production is a model named by its id, in test by `<agentId>@test`;
 * `svc.openai-compat.model-aliases` adds names (`support=<agentId>`, `support-test=<agentId>@test`). A caller sees
 * the agents it may see, an API key only its agents.
 *
 * Conversations: OpenAI clients send the whole history with every request. A request that names a conversation
 * (`X-Conversation-Id` header or `conversation_id` field, both returned with every answer) continues it. Otherwise
 * the history (every user and assistant message before the last user message, in order) is looked up: each answer
 * records the hash of the history the client will send next (the request's messages plus the answer), so the next
 * request finds its conversation again. No match (a new chat) starts a conversation. A request repeated as it was
 * (a retry) is answered from the step it made, without a second turn (the hash of its messages is its
 * `Idempotency-Key`).
 *
 * User: an OIDC caller converses as itself (`user` may only name itself unless checks do not apply to it); with an
 * API key, `user` is the conversation's userId (default `apikey-<key name>`), and a conversation is continued only
 * by the same key user.
 */

export interface ChatMessage {
  readonly role: 'system' | 'developer' | 'user' | 'assistant';
  readonly text: string;
}

export interface Model {
  readonly id: string;
  readonly agentId: string;
  readonly environment: Environment;
  readonly created: number;
}

export interface Caller {
  readonly access: CallerAccess | undefined;
  readonly identity: CallerIdentity | undefined;
  readonly apiKey: ApiKeyRecord | undefined;
}

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly user: string | undefined;
  readonly conversationId: string | undefined;
  /** The client's `Idempotency-Key`, for a request that names its conversation. */
  readonly idempotencyKey: string | undefined;
}

/** A chat request ready to run: its conversation exists (started when new). */
export interface PreparedChat {
  readonly conversationId: string;
  readonly model: string;
  readonly input: string;
  readonly context: Readonly<Record<string, ContextValue>>;
  /** What makes a retry of this request answer from its step: the client's key, else the request's hash. */
  readonly idempotencyKey: string | undefined;
  /** What `remember` records; none for a request that named its conversation (its history is not looked up). */
  readonly history: ChatHistory | undefined;
}

/** The request's place in its chat's history, for the history lookup of the client's next request. */
interface ChatHistory {
  readonly requestHash: string;
  readonly dialogue: readonly ChatMessage[];
  readonly scope: string;
}

export interface ChatAnswer {
  readonly conversationId: string;
  readonly conversationState: Conversation['state'];
  readonly text: string;
  /** Set when the turn failed: the reason (never a secret). */
  readonly failure?: string;
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
}

export interface OpenAiChatOptions {
  readonly conversations: ConversationService;
  readonly deployments: DeploymentService;
  readonly threads: ChatThreadStore;
  /** Whether the caller sees the agent at all. */
  readonly visible: (agentId: string, caller: CallerAccess | undefined) => Promise<boolean>;
  /** `svc.openai-compat.model-aliases`. */
  readonly aliases: string;
  readonly clock?: () => number;
}

const TEST_SUFFIX = '@test';

/** `alias=agentId[@test]` pairs, comma-separated; a malformed one stops start-up naming it. */
export function parseAliases(text: string): Map<string, { agentId: string; environment: Environment }> {
  const aliases = new Map<string, { agentId: string; environment: Environment }>();
  for (const pair of text.split(',').map((part) => part.trim())) {
    if (pair === '') continue;
    const match = /^([^=\s]+)=([0-9a-f]{24})(@test)?$/.exec(pair);
    if (!match)
      throw new Error(
        `svc.openai-compat.model-aliases: '${pair}' is not alias=<agentId> or alias=<agentId>@test (comma-separated).`,
      );
    aliases.set(match[1]!, { agentId: match[2]!, environment: match[3] ? 'test' : 'production' });
  }
  return aliases;
}

const unknownModel = (name: string) =>
  new AppError('not-found', `The model '${name}' does not exist or you do not have access to it.`, {
    code: 'model_not_found',
    path: 'model',
  });

const sha256 = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');

function historyOf(
  model: { agentId: string; environment: Environment },
  userId: string | undefined,
  dialogue: readonly ChatMessage[],
): ChatHistory {
  const scope = sha256([model.agentId, model.environment, userId]);
  return { requestHash: sha256([scope, dialogue]), dialogue, scope };
}

/** The answer text of a conversation's current step: its output texts, one paragraph each. */
function answerOf(conversation: Conversation): string {
  return outputTexts(conversation.steps.at(-1)?.output.output).join('\n\n');
}

export class OpenAiChat {
  readonly #options: OpenAiChatOptions;
  readonly #aliases: Map<string, { agentId: string; environment: Environment }>;
  readonly #clock: () => number;

  constructor(options: OpenAiChatOptions) {
    this.#options = options;
    this.#aliases = parseAliases(options.aliases);
    this.#clock = options.clock ?? Date.now;
  }

  /** The models the caller may use: deployed agents (by id, `@test` for the test environment) and aliases. */
  async models(caller: Caller): Promise<Model[]> {
    const deployed = (await this.#options.deployments.listFor(caller.access)).filter(
      (deployment) =>
        deployment.status === 'READY' &&
        (caller.apiKey === undefined || keyAllowsAgent(caller.apiKey, deployment.agentId)),
    );
    const models = new Map<string, Model>();
    const add = (id: string, agentId: string, environment: Environment, created: number) => {
      if (!models.has(id)) models.set(id, { id, agentId, environment, created: Math.floor(created / 1000) });
    };
    for (const { agentId, environment, deployedOn } of deployed)
      add(environment === 'test' ? agentId + TEST_SUFFIX : agentId, agentId, environment, deployedOn);
    for (const [alias, target] of this.#aliases) {
      const deployment = deployed.find((d) => d.agentId === target.agentId && d.environment === target.environment);
      if (deployment) add(alias, target.agentId, target.environment, deployment.deployedOn);
    }
    return [...models.values()];
  }

  /** The model of that name (404 `model_not_found` when there is none the caller may use). */
  async model(name: string, caller: Caller): Promise<Model> {
    const found = (await this.models(caller)).find((model) => model.id === name);
    if (!found) throw unknownModel(name);
    return found;
  }

  /** The agent and environment a model name stands for, without listing every model (the chat's hot path). */
  async #target(name: string, caller: Caller): Promise<{ agentId: string; environment: Environment }> {
    const target =
      this.#aliases.get(name) ??
      (name.endsWith(TEST_SUFFIX)
        ? { agentId: name.slice(0, -TEST_SUFFIX.length), environment: 'test' as const }
        : { agentId: name, environment: 'production' as const });
    const usable =
      this.#options.deployments.latestReady(target.environment, target.agentId) !== undefined &&
      (caller.apiKey === undefined || keyAllowsAgent(caller.apiKey, target.agentId)) &&
      (await this.#options.visible(target.agentId, caller.access));
    if (!usable) throw unknownModel(name);
    return target;
  }

  /**
   * Finds or starts the request's conversation (see the module comment). Problems answer before anything runs:
   * 400 for messages that do not end with the user's, 404 for an unknown model or conversation, 410 for an ended one.
   */
  async prepare(request: ChatRequest, caller: Caller): Promise<PreparedChat> {
    const model = await this.#target(request.model, caller);
    const last = request.messages.at(-1);
    if (last?.role !== 'user')
      throw invalid('The last message must be the user\'s (role "user"): it is what the agent answers.', {
        path: 'messages',
      });
    const userId = this.#userOf(request, caller);
    const dialogue = request.messages.filter((message) => message.role === 'user' || message.role === 'assistant');
    const instructions = request.messages
      .filter((message) => message.role === 'system' || message.role === 'developer')
      .map((message) => message.text)
      .join('\n\n');
    const context: Record<string, ContextValue> =
      instructions === '' ? {} : { system: { type: 'string', value: instructions } };
    // A request naming its conversation may carry only the new message: the same text again is a new message then,
    // and its history does not find the conversation again (it is neither looked up nor recorded).
    const history = request.conversationId === undefined ? historyOf(model, userId, dialogue) : undefined;
    const conversationId = history ? await this.#foundByHistory(history) : request.conversationId;
    const base = {
      model: request.model,
      input: last.text,
      context,
      idempotencyKey: history ? history.requestHash : request.idempotencyKey,
      history,
    };
    if (conversationId !== undefined) {
      const conversation = await this.#options.conversations.get(conversationId, caller.access).catch(() => undefined);
      const belongs =
        conversation !== undefined &&
        conversation.agentId === model.agentId &&
        conversation.environment === model.environment &&
        (caller.apiKey === undefined || conversation.userId === userId);
      if (belongs) {
        if (conversation.state === 'ENDED') throw new AppError('gone', `Conversation ${conversationId} has ended.`);
        return { ...base, conversationId };
      }
      if (request.conversationId !== undefined)
        throw notFound(`No conversation ${request.conversationId} of the model '${request.model}' for this user.`);
    }
    const started = await this.#options.conversations.start(
      model.agentId,
      model.environment,
      { userId, context, caller: caller.identity },
      caller.access,
    );
    return { ...base, conversationId: started.id };
  }

  /** Runs the prepared request's turn; `onEvent` follows it live (streaming). */
  async run(chat: PreparedChat, caller: Caller, onEvent?: (event: TurnEvent) => void): Promise<ChatAnswer> {
    let promptTokens = 0;
    let completionTokens = 0;
    let usageKnown = false;
    const conversation = await this.#options.conversations.say(
      chat.conversationId,
      {
        input: chat.input,
        context: chat.context,
        caller: caller.identity,
        idempotencyKey: chat.idempotencyKey,
        onEvent: (event) => {
          if (event.type === 'usage') {
            usageKnown = true;
            promptTokens += event.inputTokens;
            completionTokens += event.outputTokens;
          }
          onEvent?.(event);
        },
      },
      caller.access,
    );
    const failure =
      conversation.state === 'ERROR'
        ? conversation.steps.at(-1)?.entries.find((entry) => entry.key === TURN_ERROR_KEY)?.value
        : undefined;
    return {
      conversationId: conversation.id,
      conversationState: conversation.state,
      text: answerOf(conversation),
      ...(typeof failure === 'string' ? { failure } : {}),
      ...(usageKnown ? { usage: { promptTokens, completionTokens } } : {}),
    };
  }

  /**
   * Records where the chat goes on: the request (a retry finds its answer) and the history the client sends next,
   * with `answered` as the assistant's message (the text the client received).
   */
  async remember(chat: PreparedChat, answered: string): Promise<void> {
    const { history } = chat;
    if (!history) return;
    const now = this.#clock();
    const next = [...history.dialogue, { role: 'assistant' as const, text: answered }];
    await this.#options.threads.put(history.requestHash, chat.conversationId, now);
    await this.#options.threads.put(sha256([history.scope, next]), chat.conversationId, now);
  }

  /** The conversation this request repeats (a retry), else the one whose last answer its history ends with. */
  async #foundByHistory({ requestHash, dialogue, scope }: ChatHistory): Promise<string | undefined> {
    return (
      (await this.#options.threads.find(requestHash)) ??
      (dialogue.length > 1 ? await this.#options.threads.find(sha256([scope, dialogue.slice(0, -1)])) : undefined)
    );
  }

  #userOf(request: ChatRequest, caller: Caller): string | undefined {
    if (caller.apiKey) return request.user || `apikey-${caller.apiKey.name}`;
    caller.access?.requireSelf(request.user);
    return request.user || caller.access?.principal.name;
  }
}
