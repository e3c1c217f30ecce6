import { setTimeout as sleep } from 'node:timers/promises';
import type { LifecycleTask } from '../../src/runtime/tasks.ts';

/**
 * A lifecycle task for runtime tests, plugged in through the public task interface: the message context tells it
 * what to do, so tests can drive actions, properties, slow turns and failures without the rule engine.
 * - `actions` (string, comma-separated): appended to the step's actions
 * - `property` (object {name, value, scope}): set as a property
 * - `sleepMs` (string): wait that long (stops early when the turn is aborted)
 * - `fail` (string): throw
 */
export const controlTask: LifecycleTask = {
  type: 'ai.svc.test.control',
  compile: () => ({
    type: 'ai.svc.test.control',
    async execute(turn) {
      const sleepMs = turn.context['sleepMs'];
      if (sleepMs) await sleep(Number(sleepMs.value), undefined, { signal: turn.signal }).catch(() => undefined);
      if (turn.context['fail']) throw new Error('the control task failed on purpose');
      const actions = turn.context['actions'];
      if (actions) turn.setActions([...turn.actions, ...String(actions.value).split(',')]);
      const property = turn.context['property'];
      if (property) turn.setProperty(property.value as { name: string; value: unknown; scope: 'step' | 'conversation' | 'longTerm' });
    },
  }),
};

export const controlExtension = { type: 'svc://ai.svc.test.control', config: {} };
