/**
 * What several service instances sharing one store need from it: per-conversation mutual exclusion in the
 * order requests reached the store, and notifications to every instance. The embedded store serves one process,
 * so its implementation is local; PostgreSQL uses its own primitives (advisory locks, LISTEN/NOTIFY).
 */
export interface ClusterCoordination {
  /** True when other instances may write the same store (cached state must then be checked against it). */
  readonly shared: boolean;
  /**
   * Runs `work` while holding the conversation's cluster-wide lock. Waiters are served in the order their
   * requests reached the store. A holder that stops answering loses the lock after `claimMillis`.
   */
  withConversationLock<T>(conversationId: string, claimMillis: number, work: () => Promise<T>): Promise<T>;
  /**
   * Runs `work` only if no instance is running the job `jobName` right now, and answers whether it ran; a job
   * that is busy elsewhere is skipped, not queued (periodic sweeps run again at their next tick). A holder that
   * stops answering loses the job after `claimMillis`.
   */
  runExclusive(jobName: string, claimMillis: number, work: () => Promise<void>): Promise<boolean>;
  /** Sends `payload` to the subscribers of `channel` on every instance (this one included). */
  publish(channel: string, payload: string): Promise<void>;
  /** Calls `listener` for every payload published on `channel`; returns the unsubscribe function. */
  subscribe(channel: string, listener: (payload: string) => void): () => void;
  close(): Promise<void>;
}
