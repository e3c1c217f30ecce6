import { Type } from '@sinclair/typebox';
import { defineTask } from '../../src/runtime/tasks.ts';

/**
 * A barrier between a test and a turn of the control task: the turn says when it has started (`reached`) and then
 * waits until the test calls `release()` (or the turn is aborted, e.g. by the turn timeout). The test server runs
 * in the test's process, so the two meet in memory.
 */
export interface TurnGate {
  /** The message context that makes the control task stop at this gate. */
  readonly context: { gate: { type: 'string'; value: string } };
  /** Settles once a turn has reached the gate. */
  readonly reached: Promise<void>;
  release(): void;
}

const openGates = new Map<string, { arrive(): void; released: Promise<void> }>();
let gatesMade = 0;

export function turnGate(): TurnGate {
  const name = `gate-${++gatesMade}`;
  const reached = Promise.withResolvers<void>();
  const released = Promise.withResolvers<void>();
  openGates.set(name, { arrive: reached.resolve, released: released.promise });
  return {
    context: { gate: { type: 'string', value: name } },
    reached: reached.promise,
    release() {
      openGates.delete(name);
      released.resolve();
    },
  };
}

async function waitAtGate(name: string, signal: AbortSignal): Promise<void> {
  const gate = openGates.get(name);
  if (!gate) throw new Error(`no open gate ${name}`);
  gate.arrive();
  await new Promise<void>((resolve) => {
    void gate.released.then(resolve);
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * A lifecycle task for runtime tests, plugged in through the public task interface: the message context tells it
 * what to do, so tests can drive actions, properties, slow turns and failures without the rule engine.
 * - `actions` (string, comma-separated): appended to the step's actions
 * - `property` (object {name, value, scope}): set as a property
 * - `gate` (string): stop at that gate until the test releases it (see `turnGate`)
 * - `fail` (string): throw
 */
const NoSettings = Type.Object({}, { additionalProperties: false });

export const controlTask = defineTask({
  type: 'ai.svc.test.control',
  configSchema: NoSettings,
  extensionsSchema: NoSettings,
  compile: () => ({
    type: 'ai.svc.test.control',
    async execute(turn) {
      const gate = turn.context.gate;
      if (gate) await waitAtGate(String(gate.value), turn.signal);
      if (turn.context.fail) throw new Error('the control task failed on purpose');
      const actions = turn.context.actions;
      if (actions) turn.setActions([...turn.actions, ...String(actions.value).split(',')]);
      const property = turn.context.property;
      if (property)
        turn.setProperty(
          property.value as { name: string; value: unknown; scope: 'step' | 'conversation' | 'longTerm' },
        );
    },
  }),
});

export const controlExtension = { type: 'svc://ai.svc.test.control', config: {} };
