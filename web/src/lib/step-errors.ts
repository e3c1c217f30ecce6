/**
 * Where an agent's recent turns failed: each failed step's reason (`error` entry, `<task type>: <what went wrong>`)
 * attributed to the workflow step that threw, for the pipeline picture. Pure.
 */
import type { Conversation } from '../api/types.ts';

export interface StepError {
  readonly reason: string;
  readonly conversationId: string;
  /** 1-based, as the manager numbers steps ("Step 2"). */
  readonly step: number;
  readonly at?: number;
}

/** The key of a workflow step: the workflow's id and the extension type (`svc://ai.svc.httpcalls`). */
export const stepKey = (workflowId: string, extensionType: string) => `${workflowId}|${extensionType}`;

/** The task type a failure reason starts with (`ai.svc.httpcalls: ...` -> `svc://ai.svc.httpcalls`). */
export function failedTaskType(reason: string): string | undefined {
  const match = /^([a-z][\w.-]*):\s/i.exec(reason);
  return match ? `svc://${match[1]}` : undefined;
}

/** The failures of the conversations' steps by step key, newest first, at most `perStep` each. */
export function stepErrors(conversations: readonly Conversation[], perStep = 3): Map<string, StepError[]> {
  const found: (StepError & { key: string })[] = [];
  for (const conversation of conversations) {
    (conversation.conversationSteps ?? []).forEach((step, index) => {
      const entry = step.conversationStep.find((e) => e.key === 'error' && typeof e.value === 'string');
      if (!entry?.originWorkflowId) return;
      const reason = entry.value as string;
      const type = failedTaskType(reason);
      if (!type) return;
      const at = typeof entry.timestamp === 'number' ? entry.timestamp : step.timestamp;
      found.push({
        key: stepKey(entry.originWorkflowId, type),
        reason,
        conversationId: conversation.conversationId,
        step: index + 1,
        at,
      });
    });
  }
  found.sort((a, b) => (b.at ?? 0) - (a.at ?? 0));
  const byStep = new Map<string, StepError[]>();
  for (const { key, ...error } of found) {
    const list = byStep.get(key) ?? [];
    if (list.length < perStep) list.push(error);
    byStep.set(key, list);
  }
  return byStep;
}
