import type { Turn } from '../runtime/turn.ts';
import type { TemplateData } from '../templating/data-model.ts';
import { passes } from './http-code-validator.ts';
import type { CompiledPropertyInstruction, ConfiguredText } from './instructions.ts';
import { scrubStep, secretText, storeSecretProperty, type SecretWriter } from './secret-properties.ts';

/**
 * Runs compiled property instructions for a turn (reference §7.2, §7.5), in order. Each one:
 * - renders its name; with `override: false` an existing property of that name is kept;
 * - takes its value from `fromObjectPath` (stored as found, never rendered: it may be the user's own words, and
 *   templating them would let a message inject template expressions; numbers, objects and lists keep their type,
 *   DESIGN §4.9), or copies it to `toObjectPath` in the run's template data and sets nothing; else from
 *   `valueString` (rendered) or a literal value (a copy, never shared with the configuration);
 * - with `convertToObject`, a text value `{...}` becomes an object;
 * - sets the property with its scope (`secret`: `secret-properties.ts`), and later instructions see it.
 */

/** The status of an HTTP call's response, for its post-response instructions. */
export interface ResponseOutcome {
  readonly status: number;
  /** The response failed its `responseValuePathMatchers` even after the retries. */
  readonly validationFailed: boolean;
}

export interface InstructionRun {
  readonly turn: Turn;
  readonly data: TemplateData;
  /** The vault, for secret-scoped instructions; without it they fail the run. */
  readonly secretWriter?: SecretWriter | undefined;
  /** Post-response of an HTTP call: an instruction runs only if its `httpCodeValidator` passes the status. */
  readonly outcome?: ResponseOutcome | undefined;
  /**
   * Where an instruction that fails is reported before the next one runs (HTTP calls, LLM tasks); without it the
   * first failure fails the run (the property setter). A secret that cannot be stored always fails the run.
   */
  readonly skipFailed?: ((error: unknown, index: number) => void) | undefined;
}

interface Target {
  readonly name: string;
  readonly value: unknown;
}

function applies(instruction: CompiledPropertyInstruction, outcome: ResponseOutcome | undefined): boolean {
  if (outcome === undefined) return true;
  if (!passes(instruction.validator, outcome.status)) return false;
  return !outcome.validationFailed || instruction.runOnValidationError;
}

/** A value read from the data or the configuration, detached from it (a property never aliases live memory). */
function detached(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}

function converted(instruction: CompiledPropertyInstruction, value: unknown): unknown {
  if (!instruction.convertToObject || typeof value !== 'string') return value;
  const trimmed = value.trim();
  return trimmed.startsWith('{') && trimmed.endsWith('}') ? (JSON.parse(trimmed) as unknown) : value;
}

function rendered(text: ConfiguredText, data: TemplateData): string {
  return typeof text === 'string' ? text : text.render(data.get());
}

/** What an instruction sets; undefined when it sets nothing (skipped, nothing found, or a `toObjectPath` copy, made here). */
function evaluate(instruction: CompiledPropertyInstruction, run: InstructionRun): Target | undefined {
  const name = instruction.name === undefined ? undefined : rendered(instruction.name, run.data);
  if (name !== undefined && !instruction.override && run.turn.properties.has(name)) return undefined;

  let value: unknown;
  if (instruction.from) {
    const found = instruction.from.evaluate(run.data.get());
    if (found === undefined || found === null) return undefined;
    if (instruction.to) {
      run.data.copy(instruction.to, found);
      return undefined;
    }
    value = detached(found);
  } else {
    const configured = instruction.value;
    if (configured.kind === 'none') return undefined;
    value = configured.kind === 'text' ? rendered(configured.text, run.data) : detached(configured.value);
  }
  return name === undefined || name === '' ? undefined : { name, value: converted(instruction, value) };
}

/** Runs one instruction; only a secret-scoped one is asynchronous (it writes to the vault). */
function runOne(instruction: CompiledPropertyInstruction, run: InstructionRun): Promise<void> | undefined {
  const target = evaluate(instruction, run);
  if (target === undefined) return undefined;
  if (instruction.scope === 'secret') {
    return storeSecretProperty(run.turn, target.name, target.value, run.secretWriter).then(() =>
      run.data.propertiesChanged(),
    );
  }
  run.turn.setProperty({ name: target.name, value: target.value, scope: instruction.scope });
  run.data.propertiesChanged();
  return undefined;
}

/** When a secret could not be stored: the values the following secret-scoped instructions would have stored leave the step too. */
function scrubFollowingSecrets(instructions: readonly CompiledPropertyInstruction[], run: InstructionRun): void {
  for (const instruction of instructions) {
    if (instruction.scope !== 'secret' || !applies(instruction, run.outcome)) continue;
    try {
      const target = evaluate(instruction, run);
      if (target !== undefined) scrubStep(run.turn, secretText(target.value));
    } catch {
      // It cannot be evaluated, so it put nothing anywhere.
    }
  }
}

/**
 * Runs the instructions in order, synchronously until one has to wait (a vault write); returns undefined when
 * nothing had to wait, so the common case costs no promise.
 */
export function runPropertyInstructions(
  instructions: readonly CompiledPropertyInstruction[],
  run: InstructionRun,
  from = 0,
): Promise<void> | undefined {
  for (let i = from; i < instructions.length; i++) {
    const instruction = instructions[i]!;
    if (!applies(instruction, run.outcome)) continue;
    let pending: Promise<void> | undefined;
    try {
      pending = runOne(instruction, run);
    } catch (error) {
      if (!run.skipFailed) throw error;
      run.skipFailed(error, i);
      continue;
    }
    if (pending) {
      return pending.then(
        () => runPropertyInstructions(instructions, run, i + 1),
        (error: unknown) => {
          scrubFollowingSecrets(instructions.slice(i + 1), run);
          throw error;
        },
      );
    }
  }
  return undefined;
}
