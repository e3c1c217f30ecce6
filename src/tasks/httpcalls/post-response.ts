import type { ContextValue } from '../../runtime/memory.ts';
import type { Turn } from '../../runtime/turn.ts';
import { passes } from '../../properties/http-code-validator.ts';
import type { TemplateData } from '../../templating/data-model.ts';
import type { CompiledIteration, CompiledOutputBuild, CompiledQuickReplyBuild } from './compile.ts';

/**
 * Pre-request and post-response work of an HTTP call (reference §7.5, §8.5):
 * - property instructions run through the one property-instruction engine (`properties/run-instructions.ts`);
 *   the call's response is at top level under its `responseObjectName` (and its headers under
 *   `responseHeaderObjectName`, each by its lower-case and its canonical name). Values keep their type (numbers stay
 *   numbers, objects stay objects: DESIGN §4.9 overrides upstream's strings-only quirk). A failing instruction is
 *   logged and skipped (`skipFailedInstruction`);
 * - output and quick-reply build instructions: iterate the array at `pathToTargetArray`, keep the elements whose
 *   `templateFilterExpression` renders `true`, render one output / quick reply per element, and add them to the
 *   synthetic context entries `context:output` / `context:quickReplies` that the output task renders (§5.3).
 * Values taken from a response are stored as they are, never rendered as templates.
 */

export interface TaskLog {
  warn(details: Record<string, unknown>, message: string): void;
}

/** How a failing property instruction of a call is reported before the next one runs. */
export function skipFailedInstruction(log: TaskLog, callName: string): (error: unknown, index: number) => void {
  return (error, index) => {
    const problem = error instanceof Error ? error.message : String(error);
    log.warn(
      { httpCall: callName, instruction: index, problem },
      'an HTTP-call property instruction failed and was skipped',
    );
  };
}

/** The elements an output or quick-reply instruction iterates over (those passing the filter). */
function elements(instruction: CompiledIteration, data: TemplateData): Array<Record<string, unknown>> {
  const found = instruction.path ? instruction.path.evaluate(data.get()) : undefined;
  if (found === undefined || found === null) return [];
  const items = Array.isArray(found) ? found : [found];
  const chosen: Array<Record<string, unknown>> = [];
  for (const item of items) {
    const itemData = data.with(instruction.iterationObjectName, item);
    if (instruction.filter && instruction.filter.render(itemData).trim() !== 'true') continue;
    chosen.push(itemData);
  }
  return chosen;
}

/** Appends to a synthetic context entry (`context:output`, `context:quickReplies`) of the current step. */
function appendContext(turn: Turn, name: string, items: readonly unknown[]): void {
  if (items.length === 0) return;
  const existing = turn.get(`context:${name}`) as ContextValue | undefined;
  const before = existing && Array.isArray(existing.value) ? existing.value : [];
  const entry: ContextValue = { type: 'object', value: [...before, ...items] };
  turn.set(`context:${name}`, entry);
}

/**
 * Renders one item per chosen element of every instruction whose validator passes the response status, and
 * appends them to the synthetic context entry `name`.
 */
function appendBuilt<I extends CompiledIteration>(
  turn: Turn,
  name: string,
  instructions: readonly I[],
  data: TemplateData,
  status: number,
  render: (instruction: I, itemData: Record<string, unknown>) => unknown,
): void {
  const items: unknown[] = [];
  for (const instruction of instructions) {
    if (!passes(instruction.validator, status)) continue;
    for (const itemData of elements(instruction, data)) items.push(render(instruction, itemData));
  }
  appendContext(turn, name, items);
}

export function buildOutputs(
  turn: Turn,
  instructions: readonly CompiledOutputBuild[],
  data: TemplateData,
  status: number,
): void {
  appendBuilt(turn, 'output', instructions, data, status, (instruction, itemData) => ({
    valueAlternatives: [{ type: instruction.outputType, text: instruction.outputValue.render(itemData) }],
  }));
}

export function buildQuickReplies(
  turn: Turn,
  instructions: readonly CompiledQuickReplyBuild[],
  data: TemplateData,
  status: number,
): void {
  appendBuilt(turn, 'quickReplies', instructions, data, status, (instruction, itemData) => ({
    value: instruction.value.render(itemData),
    expressions: instruction.expressions.render(itemData),
  }));
}
