import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Conversation } from '../api/types.ts';
import { failedTaskType, stepErrors, stepKey } from './step-errors.ts';

const conversation = (id: string, steps: { reason?: string; workflow?: string; at: number }[]) =>
  ({
    conversationId: id,
    conversationSteps: steps.map((s) => ({
      timestamp: s.at,
      conversationStep: [
        { key: 'input:initial', value: 'hi', timestamp: s.at },
        ...(s.reason ? [{ key: 'error', value: s.reason, timestamp: s.at, originWorkflowId: s.workflow }] : []),
      ],
    })),
  }) as unknown as Conversation;

describe("the pipeline picture's step errors", () => {
  it('reads the task type a reason starts with', () => {
    assert.equal(failedTaskType("ai.svc.httpcalls: HTTP call 'x' failed"), 'svc://ai.svc.httpcalls');
    assert.equal(failedTaskType('no type here'), undefined);
  });

  it('attributes each failed step to its workflow step, newest first, a few per step', () => {
    const errors = stepErrors(
      [
        conversation('c1', [
          { at: 1 },
          { at: 2, reason: 'ai.svc.httpcalls: refused', workflow: 'w1' },
          { at: 5, reason: 'ai.svc.llm: timeout', workflow: 'w2' },
        ]),
        conversation('c2', [
          { at: 3, reason: 'ai.svc.httpcalls: refused again', workflow: 'w1' },
          { at: 4, reason: 'ai.svc.httpcalls: still refused', workflow: 'w1' },
          { at: 6, reason: 'no task named', workflow: 'w1' },
        ]),
      ],
      2,
    );
    assert.deepEqual(
      errors.get(stepKey('w1', 'svc://ai.svc.httpcalls'))?.map((e) => [e.conversationId, e.step, e.reason]),
      [
        ['c2', 2, 'ai.svc.httpcalls: still refused'],
        ['c2', 1, 'ai.svc.httpcalls: refused again'],
      ],
    );
    assert.deepEqual(
      errors.get(stepKey('w2', 'svc://ai.svc.llm'))?.map((e) => e.step),
      [3],
    );
    assert.equal(errors.size, 2);
  });
});
