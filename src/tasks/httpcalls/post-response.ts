import type { ContextValue } from '../../runtime/memory.ts';
import type { Turn } from '../../runtime/turn.ts';
import type { CallData } from './call-data.ts';
import { passes, type CompiledIteration, type CompiledOutputBuild, type CompiledPropertyInstruction, type CompiledQuickReplyBuild } from './compile.ts';

/**
 * Pre-request and post-response work of an HTTP call (reference §7.5, §8.5):
 * - property instructions: `fromObjectPath` (the property-task path language; the call's response is at top level
 *   under its `responseObjectName`) or `valueString` (templated) or a literal value. Values keep their type
 *   (numbers stay numbers, objects stay objects: DESIGN §4.9 overrides upstream's strings-only quirk); a text
 *   value `{...}` with `convertToObject` becomes an object. A failing instruction is logged and skipped.
 * - output and quick-reply build instructions: iterate the array at `pathToTargetArray`, keep the elements whose
 *   `templateFilterExpression` renders `true`, render one output / quick reply per element, and add them to the
 *   synthetic context entries `context:output` / `context:quickReplies` that the output task renders (§5.3).
 * Values taken from a response are stored as they are, never rendered as templates.
 */

export interface TaskLog {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface ResponseOutcome {
  readonly status: number;
  /** The response failed its `responseValuePathMatchers` even after the retries. */
  readonly validationFailed: boolean;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function convert(value: unknown, convertToObject: boolean): unknown {
  if (!convertToObject || typeof value !== 'string') return value;
  const trimmed = value.trim();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return value;
  return JSON.parse(trimmed) as unknown;
}

function instructionValue(instruction: CompiledPropertyInstruction, data: CallData): { value: unknown } | undefined {
  if (instruction.from) {
    const found = instruction.from.evaluate(data.get());
    if (found === undefined || found === null) return undefined;
    if (instruction.to) {
      data.copy(instruction.to, found);
      return undefined;
    }
    return { value: convert(typeof found === 'object' ? structuredClone(found) : found, instruction.convertToObject) };
  }
  if (instruction.literal) return { value: structuredClone(instruction.literal.value) };
  if (instruction.valueString) return { value: convert(instruction.valueString.render(data.get()), instruction.convertToObject) };
  return undefined;
}

/**
 * Runs property instructions. Pre-request ones (no `outcome`) always run; post-response ones run when the status
 * passes the instruction's `httpCodeValidator` (default: any 2xx) and, if the response failed validation, only
 * with `runOnValidationError`.
 */
export function runPropertyInstructions(
  turn: Turn,
  callName: string,
  instructions: readonly CompiledPropertyInstruction[],
  data: CallData,
  log: TaskLog,
  outcome?: ResponseOutcome,
): void {
  instructions.forEach((instruction, index) => {
    if (outcome) {
      if (!passes(instruction.validator, outcome.status)) return;
      if (outcome.validationFailed && !instruction.runOnValidationError) return;
    }
    try {
      const name = instruction.name?.render(data.get());
      if (name !== undefined && !instruction.override && turn.properties.has(name)) return;
      const found = instructionValue(instruction, data);
      if (found === undefined || name === undefined || name === '') return;
      turn.setProperty({ name, value: found.value, scope: instruction.scope });
      data.propertiesChanged();
    } catch (error) {
      log.warn({ httpCall: callName, instruction: index, problem: errorText(error) }, 'an HTTP-call property instruction failed and was skipped');
    }
  });
}

/** The elements an output or quick-reply instruction iterates over (those passing the filter). */
function elements(instruction: CompiledIteration, data: CallData): Array<Record<string, unknown>> {
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

export function buildOutputs(turn: Turn, instructions: readonly CompiledOutputBuild[], data: CallData, status: number): void {
  const outputs: unknown[] = [];
  for (const instruction of instructions) {
    if (!passes(instruction.validator, status)) continue;
    for (const itemData of elements(instruction, data)) {
      outputs.push({ valueAlternatives: [{ type: instruction.outputType, text: instruction.outputValue.render(itemData) }] });
    }
  }
  appendContext(turn, 'output', outputs);
}

export function buildQuickReplies(turn: Turn, instructions: readonly CompiledQuickReplyBuild[], data: CallData, status: number): void {
  const replies: unknown[] = [];
  for (const instruction of instructions) {
    if (!passes(instruction.validator, status)) continue;
    for (const itemData of elements(instruction, data)) {
      replies.push({ value: instruction.value.render(itemData), expressions: instruction.expressions.render(itemData) });
    }
  }
  appendContext(turn, 'quickReplies', replies);
}
