import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { AppError } from '../../errors.ts';
import type { AgentChat, ChatReply } from './agent-chat.ts';
import { isRecord } from '../../shared/json.ts';
import { invalidParams, JSON_RPC_CODES, JsonRpcError, type JsonRpcMethod } from './json-rpc.ts';
import { wireTask, type TaskRecord } from './task-wire.ts';

/** Who is calling which agent; tasks and contexts are only visible to the same caller and agent. */
export interface A2ACall {
  readonly agentId: string;
  /** The authenticated caller (also the userId of the conversations it starts); anonymous when undefined. */
  readonly caller?: string | undefined;
}

function optionalText(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value === '') throw invalidParams(`${path} must be a non-empty text.`);
  return value;
}

/** The message's text: its text parts (`kind` or `type` `text`, or neither) joined by new lines. */
function messageText(params: Record<string, unknown>): string {
  const message = params.message;
  if (!isRecord(message)) throw invalidParams("Missing 'message' in params.");
  const parts = message.parts;
  if (!Array.isArray(parts)) throw invalidParams('message.parts must be an array of parts.');
  const texts: string[] = [];
  for (const [index, part] of parts.entries()) {
    if (!isRecord(part)) throw invalidParams(`message.parts[${index}] must be an object.`);
    const kind = part.kind ?? part.type;
    if ((kind === undefined || kind === 'text') && typeof part.text === 'string') texts.push(part.text);
  }
  if (texts.length === 0) throw invalidParams('No text content found in message parts.');
  return texts.join('\n');
}

function paramsObject(params: unknown): Record<string, unknown> {
  if (!isRecord(params)) throw invalidParams('Missing params.');
  return params;
}

function historyLength(params: Record<string, unknown>): number | undefined {
  const value = params.historyLength;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw invalidParams('historyLength must be a non-negative integer.');
  return value;
}

const taskNotFound = (id: string) => new JsonRpcError(JSON_RPC_CODES.taskNotFound, `Task not found: ${id}`);

/**
 * A2A tasks over conversations. A task is a conversation turn with the agent; an A2A context (`contextId`, or
 * `sessionId` of `tasks/send`) maps to one conversation, so later messages of the context continue it (a context
 * whose conversation has ended starts a new one). Tasks and the context map are kept in memory, each bounded
 * (least recently used dropped first).
 */
export class A2ATasks {
  readonly #chat: AgentChat;
  readonly #tasks: LRUCache<string, TaskRecord>;
  readonly #contexts: LRUCache<string, string>;
  readonly #clock: () => number;

  constructor(options: { chat: AgentChat; capacity?: number; clock?: () => number }) {
    this.#chat = options.chat;
    this.#tasks = new LRUCache({ max: options.capacity ?? 10_000 });
    this.#contexts = new LRUCache({ max: options.capacity ?? 10_000 });
    this.#clock = options.clock ?? Date.now;
  }

  /** The JSON-RPC methods of one agent's endpoint for one caller. */
  methods(call: A2ACall): Record<string, JsonRpcMethod> {
    const unsupported = (code: number, message: string) => async () => {
      throw new JsonRpcError(code, message);
    };
    const noStreaming = unsupported(
      JSON_RPC_CODES.unsupportedOperation,
      'Streaming is not supported by this agent (capabilities.streaming is false); use message/send.',
    );
    const noPush = unsupported(
      JSON_RPC_CODES.pushNotificationNotSupported,
      'Push notifications are not supported by this agent.',
    );
    return {
      'message/send': (params) => this.#messageSend(call, paramsObject(params)),
      'tasks/send': (params) => this.#tasksSend(call, paramsObject(params)),
      'tasks/get': async (params) => this.#get(call, paramsObject(params)),
      'tasks/cancel': (params) => this.#cancel(call, paramsObject(params)),
      'message/stream': noStreaming,
      'tasks/sendSubscribe': noStreaming,
      'tasks/resubscribe': noStreaming,
      'tasks/pushNotificationConfig/set': noPush,
      'tasks/pushNotificationConfig/get': noPush,
      'tasks/pushNotificationConfig/list': noPush,
      'tasks/pushNotificationConfig/delete': noPush,
      'tasks/pushNotification/set': noPush,
      'tasks/pushNotification/get': noPush,
    };
  }

  async #messageSend(call: A2ACall, params: Record<string, unknown>): Promise<unknown> {
    const text = messageText(params);
    const message = params.message as Record<string, unknown>;
    const taskId = optionalText(message.taskId, 'message.taskId');
    const contextId = optionalText(message.contextId, 'message.contextId');
    if (taskId !== undefined) {
      const existing = this.#tasks.get(key(call, taskId));
      if (!existing) throw taskNotFound(taskId);
      throw new JsonRpcError(
        JSON_RPC_CODES.invalidRequest,
        `Task ${taskId} is ${existing.state} and takes no more messages; send the message without taskId and with contextId ${existing.contextId} to continue the conversation.`,
      );
    }
    const task = this.#newTask(call, randomUUID(), contextId ?? randomUUID(), 'v0.3');
    const messageId = optionalText(message.messageId, 'message.messageId') ?? randomUUID();
    await this.#runTurn(call, task, text, messageId);
    return wireTask(task);
  }

  async #tasksSend(call: A2ACall, params: Record<string, unknown>): Promise<unknown> {
    const text = messageText(params);
    const taskId = optionalText(params.id, 'id') ?? randomUUID();
    const sessionId = optionalText(params.sessionId, 'sessionId') ?? optionalText(params.contextId, 'contextId');
    let task = this.#tasks.get(key(call, taskId));
    if (task) {
      if (sessionId !== undefined && sessionId !== task.contextId)
        throw invalidParams(`Task ${taskId} belongs to session ${task.contextId}, not ${sessionId}.`);
      if (task.state === 'canceled')
        throw new JsonRpcError(
          JSON_RPC_CODES.invalidRequest,
          `Task ${taskId} was canceled and takes no more messages; use a new task id.`,
        );
      if (task.state === 'working')
        throw new JsonRpcError(JSON_RPC_CODES.invalidRequest, `Task ${taskId} is still working; wait for its answer.`);
    } else {
      task = this.#newTask(call, taskId, sessionId ?? randomUUID(), 'legacy');
    }
    await this.#runTurn(call, task, text, randomUUID());
    return wireTask(task);
  }

  #get(call: A2ACall, params: Record<string, unknown>): unknown {
    const id = optionalText(params.id, 'id');
    if (id === undefined) throw invalidParams("Missing 'id' in params.");
    const length = historyLength(params);
    const task = this.#tasks.get(key(call, id));
    if (!task) throw taskNotFound(id);
    return wireTask(task, length);
  }

  /** Cancels the task: it ends its conversation, and the context starts a new conversation with its next message. */
  async #cancel(call: A2ACall, params: Record<string, unknown>): Promise<unknown> {
    const id = optionalText(params.id, 'id');
    if (id === undefined) throw invalidParams("Missing 'id' in params.");
    const task = this.#tasks.get(key(call, id));
    if (!task) throw taskNotFound(id);
    if (task.state !== 'canceled') {
      task.state = 'canceled';
      task.timestamp = this.#now();
      const contextKey = key(call, task.contextId);
      if (task.conversationId !== undefined) {
        if (this.#contexts.get(contextKey) === task.conversationId) this.#contexts.delete(contextKey);
        await this.#chat.end(task.conversationId).catch((error: unknown) => {
          if (!(error instanceof AppError)) throw error; // already gone: nothing to end
        });
      }
    }
    return wireTask(task);
  }

  #newTask(call: A2ACall, id: string, contextId: string, wire: TaskRecord['wire']): TaskRecord {
    const task: TaskRecord = { id, contextId, wire, state: 'working', history: [], answer: '', timestamp: this.#now() };
    this.#tasks.set(key(call, id), task);
    return task;
  }

  /** Sends the text to the context's conversation (starting one when needed) and records the outcome on the task. */
  async #runTurn(call: A2ACall, task: TaskRecord, text: string, messageId: string): Promise<void> {
    task.state = 'working';
    delete task.reason;
    task.history.push({ role: 'user', text, messageId });
    const contextKey = key(call, task.contextId);
    let reply: ChatReply | undefined;
    try {
      reply = await this.#continueContext(this.#contexts.get(contextKey), text);
      reply ??= await this.#chat.start(call.agentId, text, { userId: call.caller });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      this.#finish(task, 'failed', '', error.message);
      return;
    }
    this.#contexts.set(contextKey, reply.conversationId);
    task.conversationId = reply.conversationId;
    const answer = reply.texts.join('\n');
    task.history.push({ role: 'agent', text: answer, messageId: randomUUID() });
    if (wasCanceled(task)) return; // canceled while the turn ran
    if (reply.state === 'ERROR')
      this.#finish(
        task,
        'failed',
        answer,
        'The agent failed to process the message (the conversation is in state ERROR).',
      );
    else this.#finish(task, 'completed', answer);
  }

  /** Continues the context's conversation; undefined when there is none or it can take no more messages. */
  async #continueContext(conversationId: string | undefined, text: string): Promise<ChatReply | undefined> {
    if (conversationId === undefined) return undefined;
    try {
      return await this.#chat.continue(conversationId, text);
    } catch (error) {
      if (error instanceof AppError && (error.kind === 'gone' || error.kind === 'not-found')) return undefined;
      throw error;
    }
  }

  #finish(task: TaskRecord, state: 'completed' | 'failed', answer: string, reason?: string): void {
    if (wasCanceled(task)) return;
    task.state = state;
    task.answer = answer;
    if (reason !== undefined) task.reason = reason;
    task.timestamp = this.#now();
  }

  #now(): string {
    return new Date(this.#clock()).toISOString();
  }
}

/** Read through a function: a cancel may change the state while a turn awaits. */
const wasCanceled = (task: TaskRecord) => task.state === 'canceled';

function key(call: A2ACall, id: string): string {
  return `${call.caller ?? ''}\u0000${call.agentId}\u0000${id}`;
}
