/**
 * A2A tasks as this service keeps them, and their two wire shapes: A2A v0.3 (`message/send`: `kind` on objects and
 * parts, `contextId`, `artifactId`) and the older shape of `tasks/send` (`type` on parts, `sessionId`).
 */

export type TaskState = 'working' | 'completed' | 'failed' | 'canceled';

export interface HistoryEntry {
  readonly role: 'user' | 'agent';
  readonly text: string;
  readonly messageId: string;
}

/** One task: a conversation turn (or, with `tasks/send` and a known task id, several turns) with one agent. */
export interface TaskRecord {
  readonly id: string;
  readonly contextId: string;
  /** The protocol generation that created the task; reads answer in the same shape. */
  readonly wire: 'v0.3' | 'legacy';
  conversationId?: string;
  state: TaskState;
  readonly history: HistoryEntry[];
  /** The agent's output texts of the last turn, joined by new lines. */
  answer: string;
  /** Why the task failed, for the peer. */
  reason?: string;
  timestamp: string;
}

export const isTerminal = (state: TaskState) => state !== 'working';

function lastEntries(history: readonly HistoryEntry[], historyLength: number | undefined): readonly HistoryEntry[] {
  return historyLength === undefined ? history : historyLength === 0 ? [] : history.slice(-historyLength);
}

/** The agent's message of the task's status: the answer, or why it failed. */
function statusText(task: TaskRecord): string | undefined {
  if (task.state === 'failed') return task.reason ?? (task.answer || 'The agent could not process the message.');
  if (task.state === 'completed') return task.answer;
  return undefined;
}

export function v03Task(task: TaskRecord, historyLength?: number): Record<string, unknown> {
  const message = (entry: HistoryEntry) => ({
    kind: 'message',
    role: entry.role,
    messageId: entry.messageId,
    parts: [{ kind: 'text', text: entry.text }],
    contextId: task.contextId,
    taskId: task.id,
  });
  const text = statusText(task);
  return {
    kind: 'task',
    id: task.id,
    contextId: task.contextId,
    status: {
      state: task.state,
      ...(text === undefined ? {} : { message: message({ role: 'agent', text, messageId: `${task.id}-status` }) }),
      timestamp: task.timestamp,
    },
    artifacts:
      task.state === 'completed' || (task.state === 'failed' && task.answer !== '')
        ? [{ artifactId: `${task.id}-response`, name: 'response', parts: [{ kind: 'text', text: task.answer }] }]
        : [],
    history: lastEntries(task.history, historyLength).map(message),
  };
}

export function legacyTask(task: TaskRecord, historyLength?: number): Record<string, unknown> {
  const message = (role: string, text: string) => ({ role, parts: [{ type: 'text', text }] });
  const text = statusText(task);
  return {
    id: task.id,
    sessionId: task.contextId,
    contextId: task.contextId,
    status: {
      state: task.state,
      ...(text === undefined ? {} : { message: message('agent', text) }),
      timestamp: task.timestamp,
    },
    artifacts:
      task.state === 'completed' || (task.state === 'failed' && task.answer !== '')
        ? [{ name: 'response', index: 0, parts: [{ type: 'text', text: task.answer }] }]
        : [],
    history: lastEntries(task.history, historyLength).map((entry) => message(entry.role, entry.text)),
  };
}

export const wireTask = (task: TaskRecord, historyLength?: number) =>
  task.wire === 'v0.3' ? v03Task(task, historyLength) : legacyTask(task, historyLength);
