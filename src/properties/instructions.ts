import type { PropertyScope } from '../runtime/memory.ts';
import { DeploymentError } from '../runtime/tasks.ts';
import { compileTemplate, needsRendering, TemplateSyntaxError, type CompiledTemplate } from '../templating/engine.ts';
import { parsePath, PathSyntaxError, type PathSegment } from '../templating/paths.ts';
import { compileCodeValidator, type CodeValidator } from './http-code-validator.ts';
import { compileObjectPath, ObjectPathSyntaxError, type CompiledObjectPath } from './object-path.ts';

/**
 * Property instructions (`PropertyInstructionSchema`, reference §7.1–7.5), compiled once at deployment for every
 * place that runs them: the property setter, HTTP calls' pre-request and post-response, the LLM task's pre-request
 * and post-response. Templates and paths are compiled here; a turn only renders and looks up
 * (`run-instructions.ts`).
 */

/** An instruction's scope: a property scope, or `secret` (stored in the vault, kept as a reference). */
export type InstructionScope = PropertyScope | 'secret';

/** Configured text: as it is, or a template to render against the run's data (which is then built, not before). */
export type ConfiguredText = string | CompiledTemplate;

export type InstructionValue =
  | { readonly kind: 'none' }
  | { readonly kind: 'text'; readonly text: ConfiguredText }
  | { readonly kind: 'literal'; readonly value: unknown };

export interface CompiledPropertyInstruction {
  /** The property name (templated); none for a pure `toObjectPath` copy. */
  readonly name: ConfiguredText | undefined;
  readonly from: CompiledObjectPath | undefined;
  /** Where a `fromObjectPath` value is copied in the run's template data instead of setting a property. */
  readonly to: readonly PathSegment[] | undefined;
  /** `valueString` (templated), or the last non-null of valueObject, valueList, valueInt, valueFloat, valueBoolean. */
  readonly value: InstructionValue;
  readonly scope: InstructionScope;
  readonly override: boolean;
  /** A text value `{...}` is parsed into an object. */
  readonly convertToObject: boolean;
  /** HTTP-call post-response only: the statuses it runs for, and whether it runs when validation failed. */
  readonly validator: CodeValidator;
  readonly runOnValidationError: boolean;
}

const LITERAL_FIELDS = ['valueObject', 'valueList', 'valueInt', 'valueFloat', 'valueBoolean'] as const;

const given = (value: unknown) => value !== undefined && value !== null;
const configuredText = (source: string): ConfiguredText => (needsRendering(source) ? compileTemplate(source) : source);
const nonBlank = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

function compileScope(scope: unknown, where: string): InstructionScope {
  if (!given(scope) || scope === 'conversation') return 'conversation';
  if (scope === 'step' || scope === 'longTerm' || scope === 'secret') return scope;
  throw new DeploymentError(
    `The property instruction at ${where} has the unknown scope '${String(scope)}'; use 'step', 'conversation', 'longTerm' or 'secret'.`,
  );
}

function compileValue(instruction: Readonly<Record<string, unknown>>): InstructionValue {
  // The last non-null of valueString, valueObject, valueList, valueInt, valueFloat, valueBoolean wins (§7.2).
  let value: InstructionValue = { kind: 'none' };
  const text = instruction.valueString;
  if (typeof text === 'string') value = { kind: 'text', text: configuredText(text) };
  for (const field of LITERAL_FIELDS) {
    if (given(instruction[field])) value = { kind: 'literal', value: instruction[field] };
  }
  return value;
}

/** Compiles one instruction; `where` names it in a `DeploymentError`. */
export function compilePropertyInstruction(instruction: unknown, where: string): CompiledPropertyInstruction {
  if (typeof instruction !== 'object' || instruction === null || Array.isArray(instruction)) {
    throw new DeploymentError(`The property instruction at ${where} is not an object.`);
  }
  const fields = instruction as Readonly<Record<string, unknown>>;
  const name = nonBlank(fields.name);
  const from = nonBlank(fields.fromObjectPath);
  const to = from === undefined ? undefined : nonBlank(fields.toObjectPath);
  try {
    return {
      name: name === undefined ? undefined : configuredText(name),
      from: from === undefined ? undefined : compileObjectPath(from),
      to: to === undefined ? undefined : parsePath(to.trim()),
      value: compileValue(fields),
      scope: compileScope(fields.scope, where),
      override: fields.override !== false,
      convertToObject: fields.convertToObject === true,
      validator: compileCodeValidator(fields.httpCodeValidator),
      runOnValidationError: fields.runOnValidationError === true,
    };
  } catch (error) {
    if (error instanceof ObjectPathSyntaxError || error instanceof PathSyntaxError) {
      throw new DeploymentError(`The property instruction at ${where} has a malformed path: ${error.message}.`);
    }
    if (error instanceof TemplateSyntaxError) {
      throw new DeploymentError(`The property instruction at ${where} has a malformed template: ${error.message}.`);
    }
    throw error;
  }
}

/** Compiles a list of instructions (absent = none); `where` names the list, e.g. `postResponse.propertyInstructions`. */
export function compilePropertyInstructions(list: unknown, where: string): CompiledPropertyInstruction[] {
  if (!given(list)) return [];
  if (!Array.isArray(list)) throw new DeploymentError(`${where} must be a list of property instructions.`);
  return list.map((instruction, i) => compilePropertyInstruction(instruction, `${where}[${i}]`));
}
