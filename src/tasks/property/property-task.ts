import { parseExpressions, type Expression } from '../../expressions/expressions.ts';
import { compilePropertyInstructions, type CompiledPropertyInstruction } from '../../properties/instructions.ts';
import { runPropertyInstructions } from '../../properties/run-instructions.ts';
import { latestEntry, type Property, type PropertyScope } from '../../runtime/memory.ts';
import { canonicalJson, isRecord } from '../../shared/json.ts';
import { Type } from '@sinclair/typebox';
import { checkSetOnActions, closed, fieldPath, SetOnActionList } from '../../resources/schemas/common.ts';
import { defineTask, DeploymentError, stepUri, uriReferences } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import { TemplateData } from '../../templating/data-model.ts';

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

export const PROPERTY_TASK_TYPE = 'ai.svc.property';
export const CATCH_ANY_INPUT_AS_PROPERTY = 'CATCH_ANY_INPUT_AS_PROPERTY';
export const USER_INPUT_PROPERTY = 'user_input';

/** The stored shape of a property setter (spec names), as far as this task reads it. */
interface PropertySetterConfig {
  readonly propertyInstructions?: readonly unknown[];
  readonly setOnActions?: readonly unknown[];
}

/** An instruction of a `setOnActions` entry, with its canonical JSON: identical instructions run once per action. */
interface KeyedInstruction {
  readonly key: string;
  readonly instruction: CompiledPropertyInstruction;
}

interface CompiledEntry {
  readonly all: boolean;
  readonly actions: ReadonlySet<string>;
  readonly instructions: readonly KeyedInstruction[];
}

// ---------------------------------------------------------------------------------------------------------------
// Compilation (deploy time)
// ---------------------------------------------------------------------------------------------------------------

const given = (value: unknown) => value !== undefined && value !== null;

function compileKeyed(list: unknown, where: string): KeyedInstruction[] {
  return compilePropertyInstructions(list, where).map((instruction, i) => ({
    key: canonicalJson((list as unknown[])[i]),
    instruction,
  }));
}

function compileEntries(list: unknown, where: string): CompiledEntry[] {
  if (!given(list)) return [];
  if (!Array.isArray(list)) throw new DeploymentError(`${where} must be a list.`);
  return list.map((entry, i) => {
    const at = `${where}[${i}]`;
    if (!isRecord(entry)) throw new DeploymentError(`${at} is not an object.`);
    const raw = entry.actions;
    const actions = (Array.isArray(raw) ? raw : given(raw) ? [raw] : [])
      .map((action) => String(action).trim())
      .filter((a) => a !== '');
    return {
      all: actions.includes('*'),
      actions: new Set(actions),
      instructions: compileKeyed(entry.setProperties, `${at}.setProperties`),
    };
  });
}

/** The instructions to run for `action`: those of every entry naming it or `*`, in entry order, each distinct once. */
function collect(entries: readonly CompiledEntry[], action: string | undefined): CompiledPropertyInstruction[] {
  const seen = new Set<string>();
  const collected: CompiledPropertyInstruction[] = [];
  for (const entry of entries) {
    if (!entry.all && (action === undefined || !entry.actions.has(action))) continue;
    for (const { key, instruction } of entry.instructions) {
      if (seen.has(key)) continue;
      seen.add(key);
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

const fullName = (expression: Expression) =>
  expression.domain === undefined ? expression.name : `${expression.domain}.${expression.name}`;

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

function previousActions(turn: Turn): readonly unknown[] {
  const previous = turn.previousSteps.at(-1);
  if (!previous) return [];
  const actions = latestEntry(previous, 'actions')?.value ?? previous.output.actions;
  return Array.isArray(actions) ? actions : [];
}

const uri = Type.Optional(
  Type.String({
    description:
      'Reference of the property setter: svc://ai.svc.property/propertysetterstore/propertysetters/<id>?version=<n>.',
  }),
);

export const propertyTask = defineTask({
  type: PROPERTY_TASK_TYPE,
  configSchema: closed(
    { uri, setOnActions: Type.Optional(SetOnActionList) },
    { description: "The property setter, and inline 'setOnActions' run before its own." },
  ),
  extensionsSchema: closed({ uri }, { description: "The property setter (when 'config.uri' is not given)." }),
  references: uriReferences('property'),
  checkStep: (config, _extensions, path) =>
    checkSetOnActions(config.setOnActions, fieldPath(fieldPath(path, 'config'), 'setOnActions')),
  async compile(config, extensions, context) {
    const writer = context.services.secretWriter;
    const reference = stepUri(config, extensions);
    const stored =
      reference === undefined ? {} : ((await context.resolve(reference, 'property')) as PropertySetterConfig);
    if (!isRecord(stored)) throw new DeploymentError(`The property setter ${reference} is not an object.`);
    const storedAt = `the property setter ${reference}`;

    const everyTurn = compilePropertyInstructions(stored.propertyInstructions, `propertyInstructions of ${storedAt}`);
    const entries = [
      ...compileEntries(config.setOnActions, 'config.setOnActions'),
      ...compileEntries(stored.setOnActions, `setOnActions of ${storedAt}`),
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
        return runPropertyInstructions(instructions, { turn, data: new TemplateData(turn), secretWriter: writer });
      },
    };
  },
});
