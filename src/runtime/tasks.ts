import type { Static, TObject } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import type { KindName, SemanticProblem } from '../resources/kinds.ts';
import { compileBodyValidator, describeSchemaError } from '../resources/validation.ts';
import type { TaskServices } from '../tasks/services.ts';
import type { Turn } from './turn.ts';
import type { AgentMemoryOptions } from '../user-memory/config.ts';

/**
 * The lifecycle-task plug-in interface. A task module declares its whole contract in one `TaskDefinition`: its
 * type id, the schemas of a workflow step's `config` and `extensions`, where a step holds references to other
 * resources, and `compile`. The workflow schema, its write-time checks and the export layout are derived from the
 * registered definitions. `compile` runs once, at deployment, on a config that has passed the schemas, into a
 * `CompiledTask` whose `execute` runs on every turn and only looks things up. Memory is the only thing tasks share.
 */

export interface CompileContext {
  /** Id of the workflow being compiled. */
  readonly workflowId: string;
  /**
   * Every step of that workflow, in order, with its task type id (`ai.svc.rag`, `ai.svc.mcpcalls`, ...): for tasks
   * that use what other steps declare (an LLM task finds the knowledge bases the workflow binds and offers the tools
   * of its MCP-call sets). Absent when compiled alone.
   */
  readonly workflowSteps?: readonly WorkflowStepView[];
  /** The user-memory settings of the agent being compiled (`enableMemoryTools`, `userMemoryConfig`); absent when compiled alone. */
  readonly agentMemory?: AgentMemoryOptions;
  /**
   * Loads a referenced configuration resource by its versioned `svc://` reference, as parsed JSON (spec names).
   * Throws a `DeploymentError` naming the reference when it is malformed, of the wrong kind or missing.
   */
  resolve(reference: string, expectedKind: KindName): Promise<unknown>;
  /** What the running service offers tasks (vault, HTTP-call executor, LLM providers); see `tasks/services.ts`. */
  readonly services: TaskServices;
}

export interface WorkflowStepView {
  /** The task type id, e.g. `ai.svc.rag`; undefined for a type that is not one. */
  readonly type: string | undefined;
  readonly config: unknown;
  readonly extensions: unknown;
}

export interface CompiledTask {
  /** The task type id, e.g. `ai.svc.output`. */
  readonly type: string;
  execute(turn: Turn): void | Promise<void>;
}

/**
 * A place in a workflow step that holds a reference: a path below the step (`'*'` stands for every element of a
 * list) and the kind it must name (any configuration kind when absent).
 */
export interface TaskReference {
  readonly path: readonly string[];
  readonly kind?: KindName;
}

export interface TaskDefinition<C extends TObject = TObject, E extends TObject = TObject> {
  /** The task type id, e.g. `ai.svc.output`; a workflow names it as `svc://ai.svc.output`. */
  readonly type: string;
  /** Other ids that name the same task (upstream names); written workflows are stored with `type`. */
  readonly aliases?: readonly string[];
  /** Schema of the step's `config` (closed: every field the task reads, nothing else). */
  readonly configSchema: C;
  /** Schema of the step's `extensions` (closed). */
  readonly extensionsSchema: E;
  /** Where a step holds references (write-time kind checks, export and import). */
  readonly references?: readonly TaskReference[];
  /** Write-time rules the schemas cannot express; `path` is the step's JSON path. */
  checkStep?(config: Static<C>, extensions: Static<E>, path: string): readonly SemanticProblem[];
  compile(config: Static<C>, extensions: Static<E>, context: CompileContext): CompiledTask | Promise<CompiledTask>;
}

/** Declares a task; only here so that `compile` gets its parameter types from the schemas. */
export function defineTask<C extends TObject, E extends TObject>(
  definition: TaskDefinition<C, E>,
): TaskDefinition<C, E> {
  return definition;
}

/** `uri` in `config` or `extensions` names a resource of `kind`: the references of most tasks. */
export function uriReferences(kind: KindName): readonly TaskReference[] {
  return [
    { path: ['config', 'uri'], kind },
    { path: ['extensions', 'uri'], kind },
  ];
}

/**
 * The reference a step gives in `uri`: in `config` or, as upstream workflows also write it, in `extensions` (the
 * workflow's write-time check refuses two different ones). Blank counts as absent.
 */
export function stepUri(
  config: { readonly uri?: string | undefined },
  extensions: { readonly uri?: string | undefined },
): string | undefined {
  return config.uri?.trim() || extensions.uri?.trim() || undefined;
}

/** A deployment failed for a reason the agent's author can fix; the message is shown as the deployment error. */
export class DeploymentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeploymentError';
  }
}

interface RegisteredTask {
  readonly definition: TaskDefinition;
  readonly validateConfig: ValidateFunction;
  readonly validateExtensions: ValidateFunction;
}

export class TaskRegistry {
  readonly #tasks = new Map<string, RegisteredTask>();
  readonly #definitions: TaskDefinition[] = [];
  readonly #services: TaskServices;

  constructor(definitions: readonly TaskDefinition[] = [], services: TaskServices = {}) {
    this.#services = services;
    for (const definition of definitions) this.register(definition);
  }

  register(definition: TaskDefinition): void {
    const registered = {
      definition,
      validateConfig: compileBodyValidator(definition.configSchema),
      validateExtensions: compileBodyValidator(definition.extensionsSchema),
    };
    this.#definitions.push(definition);
    for (const id of [definition.type, ...(definition.aliases ?? [])]) this.#tasks.set(id, registered);
  }

  get(type: string): TaskDefinition | undefined {
    return this.#tasks.get(type)?.definition;
  }

  /** Every registered definition, once each, in registration order. */
  get definitions(): readonly TaskDefinition[] {
    return this.#definitions;
  }

  /**
   * Checks a step against its task's schemas (it was checked when written, but the task may have changed since)
   * and compiles it. Throws a `DeploymentError` naming the field for a config the schemas refuse.
   */
  async compile(
    type: string,
    config: unknown,
    extensions: unknown,
    context: Omit<CompileContext, 'services'>,
  ): Promise<CompiledTask> {
    const task = this.#tasks.get(type);
    if (!task) throw new DeploymentError(`Unknown extension type '${type}'.`);
    for (const [part, value, validate] of [
      ['config', config, task.validateConfig],
      ['extensions', extensions, task.validateExtensions],
    ] as const) {
      if (validate(value)) continue;
      const error = validate.errors![0]!;
      throw new DeploymentError(
        describeSchemaError({ ...error, instancePath: `/${part}${error.instancePath}` }, `${type} step`).message,
      );
    }
    return task.definition.compile(config as never, extensions as never, { ...context, services: this.#services });
  }
}
