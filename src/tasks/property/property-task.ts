import { parseExpressions, type Expression } from '../../expressions/expressions.ts';
import { redact, REDACTED } from '../../security/secret-references.ts';
import { isSecretName, SECRET_NAME_RULE, vaultReference } from '../../security/vault-names.ts';
import { needsRendering } from '../../templating/engine.ts';
import { latestEntry, type Property, type PropertyScope } from '../../runtime/memory.ts';
import { DeploymentError, type CompiledTask, type LifecycleTask, type WorkflowExtension } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import { templateData } from '../../templating/data-model.ts';
import { parsePath, PathSyntaxError, setPath, type PathSegment } from '../../templating/paths.ts';
import { compileObjectPath, ObjectPathSyntaxError, type CompiledObjectPath } from './object-path.ts';

/**
 * `svc://ai.svc.property`: sets conversation properties (reference §7.2). Per turn, in this order:
 * 1. `property(name(value))` expressions of the step (`expressions:parsed`) set typed properties, listed in the
 *    public step data `properties:extracted`; an optional second sub `step` / `longTerm` sets the scope;
 * 2. context entries of type `expressions` whose name starts with `properties`, likewise;
 * 3. `CATCH_ANY_INPUT_AS_PROPERTY` among the previous step's actions stores the input as `user_input`;
 * 4. the setter's `propertyInstructions` (every turn, once), then for each action of the step, in order, the
 *    instructions of every `setOnActions` entry naming that action or `*` (an identical instruction once per
 *    action; so an instruction under `*` runs once per action of the step).
 * Configuration: the extension's inline `config.setOnActions` first, then the property setter referenced by
 * `config.uri` (or `extensions.uri`). Numbers found by `fromObjectPath` keep their type (DESIGN §4.9).
 *
 * Scope `secret` (§7.4): the value goes to the secrets vault as `<agentId>.<name>` and the property (scope
 * `conversation`) keeps only the reference `${vault:<agentId>.<name>}`; the value is scrubbed from the step.
 * Without a vault the turn fails (fail-closed: a secret is never kept as plain text).
 */

export type Render = (source: string, data: Record<string, unknown>) => string;

/** Where secret-scoped properties put their values (the vault, for the default tenant). */
export interface SecretWriter {
  writeSecret(name: string, value: string): Promise<void>;
}

export interface PropertyTaskOptions {
  readonly secretWriter?: SecretWriter | undefined;
}

/** An instruction's scope: a property scope, or `secret` (stored in the vault, kept as a reference). */
type InstructionScope = PropertyScope | 'secret';

export const PROPERTY_TASK_TYPE = 'ai.svc.property';
export const CATCH_ANY_INPUT_AS_PROPERTY = 'CATCH_ANY_INPUT_AS_PROPERTY';
export const USER_INPUT_PROPERTY = 'user_input';

/** The stored shape of a property setter (spec names), as far as this task reads it. */
interface PropertySetterConfig {
  readonly propertyInstructions?: readonly unknown[];
  readonly setOnActions?: readonly unknown[];
}

type InstructionValue =
  | { readonly kind: 'none' }
  | { readonly kind: 'text'; readonly text: string; readonly template: boolean }
  | { readonly kind: 'literal'; readonly value: unknown };

interface CompiledInstruction {
  /** Canonical JSON of the instruction, so identical instructions collected for one action run once. */
  readonly key: string;
  readonly name: string | undefined;
  readonly nameIsTemplate: boolean;
  readonly override: boolean;
  readonly scope: InstructionScope;
  readonly from: CompiledObjectPath | undefined;
  readonly to: readonly PathSegment[] | undefined;
  readonly value: InstructionValue;
}

interface CompiledEntry {
  readonly all: boolean;
  readonly actions: ReadonlySet<string>;
  readonly instructions: readonly CompiledInstruction[];
}

// ---------------------------------------------------------------------------------------------------------------
// Compilation (deploy time)
// ---------------------------------------------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined && value[k] !== null).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const given = (value: unknown) => value !== undefined && value !== null;

function compileScope(scope: unknown, where: string): InstructionScope {
  if (!given(scope) || scope === 'conversation') return 'conversation';
  if (scope === 'step' || scope === 'longTerm' || scope === 'secret') return scope;
  throw new DeploymentError(`The property instruction at ${where} has the unknown scope '${String(scope)}'; use 'step', 'conversation', 'longTerm' or 'secret'.`);
}

function compileValue(instruction: Record<string, unknown>): InstructionValue {
  // The last non-null of valueString, valueObject, valueList, valueInt, valueFloat, valueBoolean wins (§7.2).
  let value: InstructionValue = { kind: 'none' };
  if (typeof instruction['valueString'] === 'string') {
    const text = instruction['valueString'];
    value = { kind: 'text', text, template: needsRendering(text) };
  }
  for (const field of ['valueObject', 'valueList', 'valueInt', 'valueFloat', 'valueBoolean']) {
    if (given(instruction[field])) value = { kind: 'literal', value: instruction[field] };
  }
  return value;
}

function compileInstruction(instruction: unknown, where: string): CompiledInstruction {
  if (!isRecord(instruction)) throw new DeploymentError(`The property instruction at ${where} is not an object.`);
  const name = typeof instruction['name'] === 'string' && instruction['name'] !== '' ? instruction['name'] : undefined;
  const fromSource = instruction['fromObjectPath'];
  const toSource = instruction['toObjectPath'];
  let from: CompiledObjectPath | undefined;
  let to: readonly PathSegment[] | undefined;
  try {
    if (typeof fromSource === 'string' && fromSource.trim() !== '') from = compileObjectPath(fromSource);
    if (from && typeof toSource === 'string' && toSource.trim() !== '') to = parsePath(toSource.trim());
  } catch (error) {
    if (error instanceof ObjectPathSyntaxError || error instanceof PathSyntaxError) {
      throw new DeploymentError(`The property instruction at ${where} has a malformed path: ${error.message}.`);
    }
    throw error;
  }
  return {
    key: canonical(instruction),
    name,
    nameIsTemplate: name !== undefined && needsRendering(name),
    override: instruction['override'] !== false,
    scope: compileScope(instruction['scope'], where),
    from,
    to,
    value: compileValue(instruction),
  };
}

function compileInstructions(list: unknown, where: string): CompiledInstruction[] {
  if (!given(list)) return [];
  if (!Array.isArray(list)) throw new DeploymentError(`${where} must be a list of property instructions.`);
  return list.map((instruction, i) => compileInstruction(instruction, `${where}[${i}]`));
}

function compileEntries(list: unknown, where: string): CompiledEntry[] {
  if (!given(list)) return [];
  if (!Array.isArray(list)) throw new DeploymentError(`${where} must be a list.`);
  return list.map((entry, i) => {
    const at = `${where}[${i}]`;
    if (!isRecord(entry)) throw new DeploymentError(`${at} is not an object.`);
    const raw = entry['actions'];
    const actions = (Array.isArray(raw) ? raw : given(raw) ? [raw] : []).map((action) => String(action).trim()).filter((a) => a !== '');
    return {
      all: actions.includes('*'),
      actions: new Set(actions),
      instructions: compileInstructions(entry['setProperties'], `${at}.setProperties`),
    };
  });
}

/** The instructions to run for `action`: those of every entry naming it or `*`, in entry order, each distinct once. */
function collect(entries: readonly CompiledEntry[], action: string | undefined): CompiledInstruction[] {
  const seen = new Set<string>();
  const collected: CompiledInstruction[] = [];
  for (const entry of entries) {
    if (!entry.all && (action === undefined || !entry.actions.has(action))) continue;
    for (const instruction of entry.instructions) {
      if (seen.has(instruction.key)) continue;
      seen.add(instruction.key);
      collected.push(instruction);
    }
  }
  return collected;
}

// ---------------------------------------------------------------------------------------------------------------
// Expression extraction
// ---------------------------------------------------------------------------------------------------------------

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d*\.\d+$/;

/** The value of an extracted property: integer, decimal, boolean, else text. */
export function typedValue(text: string): string | number | boolean {
  if (INTEGER.test(text)) {
    const number = Number(text);
    return Number.isSafeInteger(number) ? number : text;
  }
  if (DECIMAL.test(text)) return Number(text);
  const lower = text.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  return text;
}

const fullName = (expression: Expression) => (expression.domain === undefined ? expression.name : `${expression.domain}.${expression.name}`);

/**
 * `property(a(b(value)))` -> property `a.b` = `value`; `property(name(value), longTerm)` sets the scope. Anything
 * that does not have that shape is not a property expression and is passed over.
 */
export function propertyFromExpression(expression: Expression): Property | undefined {
  if (expression.name !== 'property' || expression.domain !== undefined) return undefined;
  let node = expression.args[0];
  if (!node) return undefined;
  const names: string[] = [];
  while (node.args.length === 1) {
    names.push(fullName(node));
    node = node.args[0]!;
  }
  if (names.length === 0 || node.args.length > 0) return undefined;
  const scopeArg = expression.args[1];
  const scopeName = scopeArg && scopeArg.args.length === 0 ? fullName(scopeArg) : undefined;
  const scope: PropertyScope = scopeName === 'step' || scopeName === 'longTerm' ? scopeName : 'conversation';
  return { name: names.join('.'), value: typedValue(fullName(node)), scope };
}

function extractProperties(text: unknown, into: Property[]): void {
  if (typeof text !== 'string' || text.trim() === '') return;
  for (const expression of parseExpressions(text)) {
    const property = propertyFromExpression(expression);
    if (property) into.push(property);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Execution (per turn)
// ---------------------------------------------------------------------------------------------------------------


/**
 * The template data one task run sees: built from the turn when first needed, rebuilt after a property was
 * set (so later instructions see earlier results), with the run's `toObjectPath` copies laid over it.
 */
class RunData {
  readonly #turn: Turn;
  readonly #copies: Array<readonly [readonly PathSegment[], unknown]> = [];
  #data: Record<string, unknown> | undefined;

  constructor(turn: Turn) {
    this.#turn = turn;
  }

  get(): Record<string, unknown> {
    if (!this.#data) {
      const data = templateData(this.#turn);
      for (const [segments, value] of this.#copies) setPath(data, segments, value);
      this.#data = data;
    }
    return this.#data;
  }

  propertiesChanged(): void {
    this.#data = undefined;
  }

  copy(segments: readonly PathSegment[], value: unknown): void {
    this.#copies.push([segments, value]);
    if (this.#data) setPath(this.#data, segments, value);
  }
}

/** A value read from the data, detached from it (so that a property never aliases live memory). */
function detached(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? structuredClone(value) : value;
}

/**
 * What an instruction sets: its (rendered) name and value; undefined when it sets nothing (skipped, nothing
 * found, or a `toObjectPath` copy, which is made here).
 */
function evaluate(turn: Turn, instruction: CompiledInstruction, data: RunData, render: Render): { name: string; value: unknown } | undefined {
  const name = instruction.name === undefined ? undefined : instruction.nameIsTemplate ? render(instruction.name, data.get()) : instruction.name;
  if (name !== undefined && !instruction.override && turn.properties.has(name)) return undefined;

  let value: unknown;
  if (instruction.from) {
    const found = instruction.from.evaluate(data.get());
    if (found === undefined || found === null) return undefined;
    if (instruction.to) {
      data.copy(instruction.to, found);
      return undefined;
    }
    // Data found at a path is stored as it is, never rendered: it may be the user's own words
    // (memory.current.input), and templating them would let a message inject template expressions.
    value = typeof found === 'string' ? found : detached(found);
  } else {
    const configured = instruction.value;
    if (configured.kind === 'none') return undefined;
    value = configured.kind === 'text' ? (configured.template ? render(configured.text, data.get()) : configured.text) : detached(configured.value);
  }
  return name === undefined || name === '' ? undefined : { name, value };
}

/** Runs one instruction; only a secret-scoped one is asynchronous (it writes to the vault). */
function runInstruction(turn: Turn, instruction: CompiledInstruction, data: RunData, render: Render, writer: SecretWriter | undefined): Promise<void> | undefined {
  const target = evaluate(turn, instruction, data, render);
  if (target === undefined) return undefined;
  if (instruction.scope === 'secret') return storeSecret(turn, target.name, target.value, data, writer);
  turn.setProperty({ name: target.name, value: target.value, scope: instruction.scope });
  data.propertiesChanged();
  return undefined;
}

/**
 * Runs the instructions in order, synchronously until one has to wait (a vault write). When a secret cannot be
 * stored the task fails; the values of the secret-scoped instructions that would have followed are scrubbed
 * from the step all the same.
 */
function runInstructions(turn: Turn, instructions: readonly CompiledInstruction[], data: RunData, render: Render, writer: SecretWriter | undefined, from = 0): Promise<void> | undefined {
  for (let i = from; i < instructions.length; i++) {
    const pending = runInstruction(turn, instructions[i]!, data, render, writer);
    if (pending) {
      return pending.then(
        () => runInstructions(turn, instructions, data, render, writer, i + 1),
        (error: unknown) => {
          scrubSecretsOf(turn, instructions.slice(i + 1), data, render);
          throw error;
        },
      );
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Secret-scoped properties
// ---------------------------------------------------------------------------------------------------------------

/** Shorter secrets are scrubbed from the step only where a value equals them (not inside other text). */
const MIN_SCRUB_INSIDE_TEXT = 8;

function secretText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

async function storeSecret(turn: Turn, name: string, value: unknown, data: RunData, writer: SecretWriter | undefined): Promise<void> {
  const text = secretText(value);
  if (text === '') return; // nothing to keep
  const secretName = `${turn.agentId}.${name}`;
  // Fail closed: the value leaves the step whether or not the vault took it.
  scrubStep(turn, text);
  const failure = (reason: string) => new Error(`The secret-scoped property '${name}' cannot be set: ${reason}`);
  if (!writer) throw failure('this service has no secrets vault (set svc.vault.master-key); secret values are never kept as plain text.');
  if (!isSecretName(secretName)) throw failure(`its vault name '${secretName}' is not a valid secret name (${SECRET_NAME_RULE}).`);
  try {
    await writer.writeSecret(secretName, text);
  } catch (error) {
    throw failure((error as Error).message);
  }
  turn.setProperty({ name, value: vaultReference(secretName), scope: 'conversation' });
  data.propertiesChanged();
}

function scrubSecretsOf(turn: Turn, instructions: readonly CompiledInstruction[], data: RunData, render: Render): void {
  for (const instruction of instructions) {
    if (instruction.scope !== 'secret') continue;
    try {
      const target = evaluate(turn, instruction, data, render);
      if (target !== undefined) scrubStep(turn, secretText(target.value));
    } catch {
      // It cannot be evaluated, so it put nothing anywhere.
    }
  }
}

/** `text` with the secret masked; longer secrets also inside other text, in any letter case (a parser may fold it). */
function scrubbedText(text: string, secret: string): string {
  if (text === secret) return REDACTED;
  if (secret.length < MIN_SCRUB_INSIDE_TEXT) return text;
  if (text.includes(secret)) return redact(text, [secret]);
  const lower = text.toLowerCase();
  const needle = secret.toLowerCase();
  if (!lower.includes(needle)) return text;
  let result = '';
  let from = 0;
  for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, from)) {
    result += text.slice(from, at) + REDACTED;
    from = at + needle.length;
  }
  return result + text.slice(from);
}

/** `value` with the secret masked in every text inside it; the same object when nothing changed. */
function scrubbed(value: unknown, secret: string): unknown {
  if (typeof value === 'string') return scrubbedText(value, secret);
  if (Array.isArray(value)) {
    const items = value.map((item) => scrubbed(item, secret));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (isRecord(value)) {
    let changed = false;
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      copy[key] = scrubbed(item, secret);
      changed ||= copy[key] !== item;
    }
    return changed ? copy : value;
  }
  return value;
}

/**
 * Masks the secret wherever the current step holds it (the input, a context value, ...), except in properties,
 * which other instructions set on purpose.
 */
function scrubStep(turn: Turn, secret: string): void {
  if (secret === '') return;
  turn.maskInputs((text) => scrubbedText(text, secret));
  for (const entry of turn.entriesWithPrefix('')) {
    if (entry.key.startsWith('properties:')) continue;
    const value = scrubbed(entry.value, secret);
    if (value !== entry.value) turn.set(entry.key, value, entry.public);
  }
  for (const [key, item] of Object.entries(turn.output)) {
    if (key === 'properties') continue;
    const value = scrubbed(item, secret);
    if (value !== item) turn.setOutput(key, value);
  }
}

function previousActions(turn: Turn): readonly unknown[] {
  const previous = turn.previousSteps.at(-1);
  if (!previous) return [];
  const actions = latestEntry(previous, 'actions')?.value ?? previous.output['actions'];
  return Array.isArray(actions) ? actions : [];
}

function configReference(extension: WorkflowExtension): string | undefined {
  const fromConfig = extension.config['uri'];
  if (typeof fromConfig === 'string' && fromConfig !== '') return fromConfig;
  const fromExtensions = extension.extensions['uri'];
  return typeof fromExtensions === 'string' && fromExtensions !== '' ? fromExtensions : undefined;
}

export function createPropertyTask(render: Render, options: PropertyTaskOptions = {}): LifecycleTask {
  const writer = options.secretWriter;
  return {
    type: PROPERTY_TASK_TYPE,
    async compile(extension, context): Promise<CompiledTask> {
      const reference = configReference(extension);
      const stored = reference === undefined ? {} : ((await context.resolve(reference, 'property')) as PropertySetterConfig);
      if (!isRecord(stored)) throw new DeploymentError(`The property setter ${reference} is not an object.`);
      const storedAt = `the property setter ${reference}`;

      const everyTurn = compileInstructions(stored['propertyInstructions'], `propertyInstructions of ${storedAt}`);
      const entries = [
        ...compileEntries(extension.config['setOnActions'], 'config.setOnActions'),
        ...compileEntries(stored['setOnActions'], `setOnActions of ${storedAt}`),
      ];
      const named = new Set(entries.flatMap((entry) => [...entry.actions].filter((action) => action !== '*')));
      const byAction = new Map([...named].map((action) => [action, collect(entries, action)] as const));
      const otherActions = collect(entries, undefined);

      return {
        type: PROPERTY_TASK_TYPE,
        execute(turn) {
          const extracted: Property[] = [];
          extractProperties(turn.get('expressions:parsed'), extracted);
          for (const [name, entry] of Object.entries(turn.context)) {
            if (name.startsWith('properties') && entry.type === 'expressions') extractProperties(entry.value, extracted);
          }
          for (const property of extracted) turn.setProperty(property);
          if (extracted.length > 0) turn.set('properties:extracted', extracted, true);

          if (previousActions(turn).includes(CATCH_ANY_INPUT_AS_PROPERTY)) {
            turn.setProperty({ name: USER_INPUT_PROPERTY, value: turn.input, scope: 'conversation' });
          }

          const instructions = [...everyTurn, ...turn.actions.flatMap((action) => byAction.get(action) ?? otherActions)];
          return runInstructions(turn, instructions, new RunData(turn), render, writer);
        },
      };
    },
  };
}
