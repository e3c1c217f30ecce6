import { AppError } from '../errors.ts';

/**
 * One turn at a time per conversation, in arrival order; different conversations run in parallel. The number of
 * conversations with queued or running work is bounded: past the bound a new conversation's work is refused
 * (503) rather than queued without limit.
 */
export class Coordinator {
  readonly #maxActive: number;
  /** Tail of each active conversation's queue and how many items it holds. */
  readonly #queues = new Map<string, { tail: Promise<unknown>; pending: number }>();
  readonly #onWait: ((seconds: number) => void) | undefined;

  /** `onWait` learns how long each work item waited behind earlier work of its conversation. */
  constructor(maxActiveConversations: number, onWait?: (seconds: number) => void) {
    this.#maxActive = maxActiveConversations;
    this.#onWait = onWait;
  }

  get activeConversations(): number {
    return this.#queues.size;
  }

  /** Whether work of the conversation is queued or running here. */
  isActive(conversationId: string): boolean {
    return this.#queues.has(conversationId);
  }

  /** Work items queued or running over all conversations. */
  get queuedWork(): number {
    let queued = 0;
    for (const queue of this.#queues.values()) queued += queue.pending;
    return queued;
  }

  /** Queues `work` behind everything already queued for `conversationId`; resolves or rejects with its result. */
  run<T>(conversationId: string, work: () => Promise<T>): Promise<T> {
    let queue = this.#queues.get(conversationId);
    if (!queue) {
      if (this.#queues.size >= this.#maxActive) {
        return Promise.reject(
          new AppError('unavailable', 'Too many conversations are being processed right now; retry shortly.', {
            retryAfterSeconds: 1,
          }),
        );
      }
      queue = { tail: Promise.resolve(), pending: 0 };
      this.#queues.set(conversationId, queue);
    }
    const current = queue;
    current.pending++;
    const onWait = this.#onWait;
    let result: Promise<T>;
    if (onWait === undefined) result = current.tail.then(work);
    else {
      const queuedAt = performance.now();
      result = current.tail.then(() => {
        onWait((performance.now() - queuedAt) / 1000);
        return work();
      });
    }
    current.tail = result.then(
      () => this.#release(conversationId, current),
      () => this.#release(conversationId, current),
    );
    return result;
  }

  #release(conversationId: string, queue: { pending: number }): void {
    queue.pending--;
    if (queue.pending === 0 && this.#queues.get(conversationId) === queue) this.#queues.delete(conversationId);
  }
}
