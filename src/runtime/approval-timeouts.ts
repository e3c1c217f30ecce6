import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../errors.ts';
import type { ConversationService } from './conversations.ts';

export type TimeoutPolicy = 'reject' | 'approve' | 'escalate';

export interface ApprovalTimeoutOptions {
  readonly conversations: ConversationService;
  readonly timeoutMs: number;
  readonly policy: TimeoutPolicy;
  readonly log: FastifyBaseLogger;
  /** How often waiting turns are looked at; default a tenth of the timeout, between 1 and 60 s. */
  readonly intervalMs?: number;
  readonly clock?: () => number;
}

/**
 * The timeout policy of turns waiting for a person: once one waited `timeoutMs`, it is rejected or approved (the
 * decision's actor is `timeout-policy`, in the audit ledger like any decision) or escalated (flagged and logged; it
 * keeps waiting). Every instance looks; a turn decided meanwhile elsewhere is left alone (the decision needs the
 * conversation's lock and checks the turn still waits). Returns the function that stops it.
 */
export function startApprovalTimeouts(options: ApprovalTimeoutOptions): () => void {
  const clock = options.clock ?? Date.now;
  const interval = options.intervalMs ?? Math.min(60_000, Math.max(1_000, Math.round(options.timeoutMs / 10)));
  let sweeping = false;
  const sweep = async () => {
    const now = clock();
    const everything = async () => true;
    for (const approval of await options.conversations.pendingApprovals({}, everything)) {
      if (now - approval.pausedAt < options.timeoutMs) continue;
      const { conversationId, approvalId } = approval;
      try {
        if (options.policy === 'escalate') {
          if (!approval.escalated && (await options.conversations.escalate(conversationId, approvalId)))
            options.log.warn({ conversationId, approvalId }, 'a turn waits for a person past the timeout: escalated');
          continue;
        }
        const reason = `nobody decided within ${Math.round(options.timeoutMs / 1000)} s`;
        await options.conversations.resume(
          conversationId,
          { action: options.policy, reason, actor: 'timeout-policy' },
          approvalId,
          everything,
        );
      } catch (error) {
        if (!(error instanceof AppError && error.kind === 'conflict'))
          options.log.warn({ err: error, conversationId }, 'the timeout policy could not be applied');
      }
    }
  };
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweep()
      .catch((error: unknown) => options.log.warn({ err: error }, 'waiting turns could not be looked at'))
      .finally(() => {
        sweeping = false;
      });
  }, interval);
  timer.unref();
  return () => clearInterval(timer);
}
