import type { TSchema } from '@sinclair/typebox';
import { agentKind } from './schemas/agent.ts';
import { behaviorKind } from './schemas/behavior.ts';
import { dictionaryKind } from './schemas/dictionary.ts';
import { httpCallsKind } from './schemas/httpcalls.ts';
import { llmKind } from './schemas/llm.ts';
import { outputKind } from './schemas/output.ts';
import { propertyKind } from './schemas/property.ts';
import { workflowKind } from './schemas/workflow.ts';

/**
 * The eight versioned configuration kinds. Everything the store service and the HTTP layer need to know about
 * a kind is here; each kind's own file under `schemas/` holds its body schema and its upstream aliases.
 */
export interface ResourceKindDefinition {
  /** Internal name, used as the storage key. */
  readonly name: string;
  /** Human name for messages: "dictionary", "behavior set", ... */
  readonly title: string;
  /** Type host after `ai.svc.` in references and in `Location`. */
  readonly uriType: string;
  /** Other type hosts that name this kind in references (upstream 6.x names). */
  readonly uriTypeAliases: readonly string[];
  /** Store path of the spec; `Location` headers use it. */
  readonly storePath: string;
  /** Upstream store paths answered as well (rewritten to `storePath` before routing). */
  readonly legacyStorePaths: readonly string[];
  /** The body schema in the spec's names (TypeBox; `additionalProperties: false` at every depth). */
  readonly schema: TSchema;
  /**
   * Renames upstream field names to the spec's names, at every depth, returning a new value.
   * Throws `invalid` when a body gives both a name and its alias. Unknown fields are left for the schema to reject.
   */
  readonly renameAliases: (body: unknown) => unknown;
  /**
   * Rules the schema cannot express (reference form, condition configs, ...). Returns the problems found,
   * each naming the JSON path, or an empty list. Runs after the schema accepted the body.
   */
  readonly checkSemantics: (body: unknown) => readonly SemanticProblem[];
}

export interface SemanticProblem {
  readonly path: string;
  readonly message: string;
}

export const resourceKinds: readonly ResourceKindDefinition[] = [
  dictionaryKind,
  behaviorKind,
  outputKind,
  workflowKind,
  agentKind,
  propertyKind,
  httpCallsKind,
  llmKind,
];

const byUriType = new Map<string, ResourceKindDefinition>();
for (const kind of resourceKinds) {
  for (const type of [kind.uriType, ...kind.uriTypeAliases]) byUriType.set(type, kind);
}

/** The kind named by a reference's type host (`regulardictionary`, `dictionary`, `rules`, ...). */
export function kindOfUriType(type: string): ResourceKindDefinition | undefined {
  return byUriType.get(type);
}

export function kindNamed(name: string): ResourceKindDefinition {
  const kind = resourceKinds.find((k) => k.name === name);
  if (!kind) throw new Error(`unknown resource kind ${name}`);
  return kind;
}
