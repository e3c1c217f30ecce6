import {
  applyTallies,
  emptyTallies,
  type ContextValue,
  type Property,
  type StoredStep,
  type Tallies,
} from '../../src/runtime/memory.ts';
import type { CompiledTask } from '../../src/runtime/tasks.ts';
import type { Turn } from '../../src/runtime/turn.ts';
import { behaviorTask } from '../../src/tasks/behavior/behavior-task.ts';
import type { BehaviorConditionDefinition } from '../../src/tasks/behavior/conditions.ts';
import { compileStep } from './tasks.ts';
import { testTurn } from './turns.ts';

/** Helpers shared by the behavior rules' unit tests: conversations built step by step as the runtime builds them (steps frozen, tallies applied). */

export const SET_URI = 'svc://ai.svc.behavior/behaviorstore/behaviorsets/0123456789abcdef01234567?version=1';

export async function compileSet(
  set: unknown,
  config: Record<string, unknown> = { uri: SET_URI },
): Promise<CompiledTask> {
  return compileStep(behaviorTask, { config }, async () => structuredClone(set));
}

/** A set of one rule `R` (action `hit`) with the given conditions. */
export function oneRule(...conditions: BehaviorConditionDefinition[]) {
  return { behaviorGroups: [{ name: 'G', behaviorRules: [{ name: 'R', actions: ['hit'], conditions }] }] };
}

export interface StepInput {
  /** `expressions:parsed` as the parser writes it (absent: no key). */
  readonly expressions?: string;
  readonly context?: Record<string, ContextValue>;
  /** Actions already in the step before the rules run (besides CONVERSATION_START on step 0). */
  readonly actions?: readonly string[];
  /** Output keys written before the rules run (e.g. `input`), as other tasks would. */
  readonly output?: Record<string, unknown>;
  /** Step data written before the rules run (e.g. an earlier rules task's `behavior_rules:success`). */
  readonly data?: Record<string, unknown>;
}

export class Dialogue {
  steps: StoredStep[] = [];
  tallies: Tallies = emptyTallies;
  properties: Record<string, Property> = {};

  /** The turn of the next step, prepared as the engine and earlier tasks would have left it. */
  next(input: StepInput = {}): Turn {
    const turn = testTurn({
      steps: this.steps,
      tallies: this.tallies,
      properties: this.properties,
      context: input.context ?? {},
    });
    for (const [name, value] of Object.entries(input.context ?? {})) turn.set(`context:${name}`, value);
    const actions = [...(this.steps.length === 0 ? ['CONVERSATION_START'] : []), ...(input.actions ?? [])];
    if (actions.length > 0) turn.setActions(actions);
    if (input.expressions !== undefined) turn.set('expressions:parsed', input.expressions);
    for (const [key, value] of Object.entries(input.data ?? {})) turn.set(key, value);
    for (const [key, value] of Object.entries(input.output ?? {})) turn.setOutput(key, value);
    return turn;
  }

  /** Freezes the turn into the conversation, updating the tallies as the runtime does. */
  commit(turn: Turn): StoredStep {
    const { step, properties } = turn.finish();
    this.steps = [...this.steps, step];
    this.tallies = applyTallies(this.tallies, step, 1);
    this.properties = properties;
    return step;
  }

  /** Runs `task` on a new step and commits it; answers the turn (read it after the fact). */
  async say(task: CompiledTask, input: StepInput = {}): Promise<Turn> {
    const turn = this.next(input);
    await task.execute(turn);
    this.commit(turn);
    return turn;
  }
}

/** The rule names that succeeded in the turn. */
export const successes = (turn: Turn): unknown => turn.get('behavior_rules:success') ?? [];

/** Whether rule `R` of a one-rule set succeeds on a fresh turn built from `input` after `history` steps. */
export async function fires(
  task: CompiledTask,
  input: StepInput = {},
  history: readonly StepInput[] = [],
): Promise<boolean> {
  const dialogue = new Dialogue();
  for (const step of history) dialogue.commit(dialogue.next(step));
  const turn = dialogue.next(input);
  await task.execute(turn);
  const names = turn.get('behavior_rules:success');
  return Array.isArray(names) && names.includes('R');
}
