import { Type, type TSchema } from '@sinclair/typebox';
import type { TaskDefinition, TaskReference } from '../../runtime/tasks.ts';
import {
  kindNamed,
  type BodyReference,
  type JsonPath,
  type ResourceKindDefinition,
  type SemanticProblem,
} from '../kinds.ts';
import { canonicalExtensionType, parseExtensionType } from '../uri.ts';
import {
  aliasRenamer,
  arrayField,
  canonicalReference,
  checkReference,
  closed,
  fieldPath,
  freeObject,
  indexPath,
  type AliasSpec,
  type JsonObject,
} from './common.ts';
import { isRecord } from '../../shared/json.ts';

/**
 * The workflow kind, derived from the registered lifecycle tasks: each step's `config` and `extensions` follow
 * the schemas of its task type, its references are checked against the kinds the task declares, and the export
 * follows them. A well-formed type no task claims is accepted here (free `config`) and fails at deployment.
 */

/** Step types no task claims: what is checked and exported of them (any kind may be referenced). */
const UNCLAIMED_REFERENCES: readonly TaskReference[] = [{ path: ['config', 'uri'] }, { path: ['extensions', 'uri'] }];

function stepSchema(tasks: readonly TaskDefinition[]): TSchema {
  const base = closed(
    {
      type: Type.String({
        description: `Extension type 'svc://ai.svc.<name>': ${tasks.map((task) => task.type.replace(/^ai\.svc\./, '')).join(', ')}.`,
      }),
      extensions: Type.Optional(freeObject('Nested definitions of the extension; their schema depends on the type.')),
      config: Type.Optional(freeObject('Configuration of the extension; its schema depends on the type.')),
    },
    { description: 'One workflow extension (lifecycle task).' },
  );
  return Type.Unsafe({
    ...base,
    allOf: tasks.map((task) => ({
      if: { type: 'object', required: ['type'], properties: { type: { const: `svc://${task.type}` } } },
      then: { properties: { config: task.configSchema, extensions: task.extensionsSchema } },
    })),
  });
}

/** Each element a path pattern (`'*'` = every list element) names in `value`, with its concrete path. */
function expand(value: unknown, pattern: readonly string[], at: JsonPath = []): JsonPath[] {
  if (pattern.length === 0) return [at];
  const [head, ...rest] = pattern as [string, ...string[]];
  if (head === '*') return Array.isArray(value) ? value.flatMap((item, i) => expand(item, rest, [...at, i])) : [];
  return isRecord(value) && value[head] !== undefined ? expand(value[head], rest, [...at, head]) : [];
}

const jsonPathText = (base: string, path: JsonPath) =>
  path.reduce<string>((text, key) => (typeof key === 'number' ? indexPath(text, key) : fieldPath(text, key)), base);

function valueAt(value: unknown, path: JsonPath): unknown {
  return path.reduce<unknown>((current, key) => (current as Record<string | number, unknown>)[key], value);
}

export function workflowKindFor(tasks: readonly TaskDefinition[]): ResourceKindDefinition {
  const byId = new Map<string, TaskDefinition>();
  for (const task of tasks) for (const id of [task.type, ...(task.aliases ?? [])]) byId.set(id, task);
  /** The task a step type names, in either spelling (`svc://ai.svc.rules`, `eddi://ai.labs.behavior`, ...). */
  const taskOf = (type: unknown) => {
    const id = typeof type === 'string' ? parseExtensionType(type) : undefined;
    return id === undefined ? undefined : byId.get(id);
  };

  const StepSchema = stepSchema(tasks);
  const WorkflowSchema = closed(
    { packageExtensions: Type.Array(StepSchema, { description: 'Extensions, in execution order.' }) },
    { title: 'Workflow', description: 'A workflow (package): an ordered list of lifecycle extensions.' },
  );

  // Aliases: upstream field names, task type aliases and reference hosts/paths.
  const reference: AliasSpec = { value: canonicalReference };
  const subExtension: AliasSpec = {
    fields: { type: { value: canonicalExtensionType }, config: { fields: { uri: reference } } },
  };
  const canonicalType = (type: unknown) => {
    const task = taskOf(type);
    return task ? `svc://${task.type}` : canonicalExtensionType(type);
  };
  const aliases: AliasSpec = {
    aliases: { workflowSteps: 'packageExtensions', workflowExtensions: 'packageExtensions' },
    fields: {
      packageExtensions: {
        fields: {
          type: { value: canonicalType },
          config: { fields: { uri: reference } },
          extensions: {
            fields: { uri: reference, dictionaries: subExtension, corrections: subExtension, normalizer: subExtension },
          },
        },
      },
    },
  };

  /** The references a step holds (paths below the step), with the kind its task expects. */
  const stepReferences = (step: JsonObject): BodyReference[] =>
    (taskOf(step.type)?.references ?? UNCLAIMED_REFERENCES).flatMap((declared) =>
      expand(step, declared.path)
        .filter((path) => typeof valueAt(step, path) === 'string')
        .map((path) => ({ path, ...(declared.kind ? { kind: declared.kind } : {}) })),
    );

  const references = (body: unknown): BodyReference[] =>
    arrayField(body, 'packageExtensions').flatMap((step, i) =>
      stepReferences(step).map((found) => ({ ...found, path: ['packageExtensions', i, ...found.path] })),
    );

  function checkStep(step: JsonObject, path: string): SemanticProblem[] {
    const problems: SemanticProblem[] = [];
    const type = step.type;
    if (typeof type !== 'string' || parseExtensionType(type) === undefined) {
      const at = fieldPath(path, 'type');
      problems.push({
        path: at,
        message: `The extension type '${String(type)}' at ${at} is not of the form svc://ai.svc.<name>.`,
      });
    }
    const config = isRecord(step.config) ? step.config : {};
    const extensions = isRecord(step.extensions) ? step.extensions : {};
    if (
      typeof config.uri === 'string' &&
      typeof extensions.uri === 'string' &&
      canonicalReference(config.uri) !== canonicalReference(extensions.uri)
    ) {
      problems.push({
        path: fieldPath(fieldPath(path, 'extensions'), 'uri'),
        message: `The extension at ${path} gives two different references in 'config.uri' and 'extensions.uri'; give one.`,
      });
    }
    for (const found of stepReferences(step)) {
      const problem = checkReference(
        valueAt(step, found.path),
        jsonPathText(path, found.path),
        found.kind ? [found.kind] : undefined,
      );
      if (problem) problems.push(problem);
    }
    problems.push(...(taskOf(type)?.checkStep?.(config, extensions, path) ?? []));
    return problems;
  }

  const checkSemantics = (body: unknown): SemanticProblem[] =>
    arrayField(body, 'packageExtensions').flatMap((step, i) => checkStep(step, indexPath('$.packageExtensions', i)));

  return {
    ...kindNamed('workflow'),
    schema: WorkflowSchema,
    renameAliases: aliasRenamer(aliases, WorkflowSchema),
    checkSemantics,
    references,
  };
}
