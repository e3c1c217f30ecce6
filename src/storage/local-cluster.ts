import type { ClusterCoordination } from './cluster-ports.ts';

/** One process owns the store: locks are the in-process queue's business, notifications stay in the process. */
export class LocalCluster implements ClusterCoordination {
  readonly shared = false;
  readonly #listeners = new Map<string, Set<(payload: string) => void>>();
  readonly #runningJobs = new Set<string>();

  withConversationLock<T>(_conversationId: string, _claimMillis: number, work: () => Promise<T>): Promise<T> {
    return work();
  }

  async runExclusive(jobName: string, _claimMillis: number, work: () => Promise<void>): Promise<boolean> {
    if (this.#runningJobs.has(jobName)) return false;
    this.#runningJobs.add(jobName);
    try {
      await work();
      return true;
    } finally {
      this.#runningJobs.delete(jobName);
    }
  }

  async publish(channel: string, payload: string): Promise<void> {
    for (const listener of this.#listeners.get(channel) ?? []) queueMicrotask(() => listener(payload));
  }

  subscribe(channel: string, listener: (payload: string) => void): () => void {
    const listeners = this.#listeners.get(channel) ?? new Set();
    listeners.add(listener);
    this.#listeners.set(channel, listeners);
    return () => listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
