import type { Turn } from './turn.ts';

/**
 * The lifecycle-task plug-in interface. A task type compiles its configuration once, at deployment, into a
 * `CompiledTask` whose `execute` runs on every turn and only looks things up. Memory is the only thing tasks share.
 */

/** One entry of a workflow's `packageExtensions`. */
export interface WorkflowExtension {
  readonly type: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly extensions: Readonly<Record<string, unknown>>;
}

export interface CompileContext {
  /** Id of the workflow being compiled. */
  readonly workflowId: string;
  /**
   * Loads a referenced configuration resource by its versioned `svc://` reference, as parsed JSON (spec names).
   * Throws a `DeploymentError` naming the reference when it is malformed, of the wrong kind or missing.
   */
  resolve(reference: string, expectedKind: string): Promise<unknown>;
}

export interface CompiledTask {
  /** The task type id, e.g. `ai.svc.output`. */
  readonly type: string;
  execute(turn: Turn): void | Promise<void>;
}

export interface LifecycleTask {
  /** The task type id, e.g. `ai.svc.output`; a workflow names it as `svc://ai.svc.output`. */
  readonly type: string;
  /** Other ids that name the same task (upstream names). */
  readonly aliases?: readonly string[];
  compile(extension: WorkflowExtension, context: CompileContext): CompiledTask | Promise<CompiledTask>;
}

/** A deployment failed for a reason the agent's author can fix; the message is shown as the deployment error. */
export class DeploymentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeploymentError';
  }
}

export class TaskRegistry {
  readonly #tasks = new Map<string, LifecycleTask>();

  constructor(tasks: readonly LifecycleTask[] = []) {
    for (const task of tasks) this.register(task);
  }

  register(task: LifecycleTask): void {
    for (const id of [task.type, ...(task.aliases ?? [])]) this.#tasks.set(id, task);
  }

  get(type: string): LifecycleTask | undefined {
    return this.#tasks.get(type);
  }

  get types(): string[] {
    return [...this.#tasks.keys()];
  }
}
