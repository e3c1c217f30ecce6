import type { ClusterCoordination } from '../storage/cluster-ports.ts';

const CHANNEL = 'svc_approvals';

/** Tells every instance that a turn started or stopped waiting for a person (the inbox's live updates). */
export class ApprovalEvents {
  readonly #cluster: ClusterCoordination;

  constructor(cluster: ClusterCoordination) {
    this.#cluster = cluster;
  }

  changed(conversationId: string): void {
    void this.#cluster.publish(CHANNEL, conversationId).catch(() => undefined);
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    return this.#cluster.subscribe(CHANNEL, () => listener());
  }
}
