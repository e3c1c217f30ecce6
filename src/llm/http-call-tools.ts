import type { CompileContext } from '../runtime/tasks.ts';
import type { Turn } from '../runtime/turn.ts';

/**
 * HTTP calls offered to the model as tools (reference §8.6): each call of an HTTP-call set listed under an LLM
 * task's `tools` becomes a tool named after the call, described by its `description`, with string arguments
 * from its `parameters`, which its templates see by name. The HTTP-call task implements this; the LLM task
 * only depends on this interface.
 */

export interface HttpCallToolSpec {
  /** The call's `name` (the tool name the model uses). */
  readonly name: string;
  readonly description: string;
  /** Argument names (all string-valued) and their descriptions. */
  readonly parameters: Readonly<Record<string, string>>;
}

export interface HttpCallTools {
  /** At deployment: the tools of an HTTP-call set reference. Throws a DeploymentError for a bad reference. */
  describe(reference: string, context: CompileContext): Promise<readonly HttpCallToolSpec[]>;
  /**
   * At run time: executes the call `name` of the set with the model's arguments, in the turn (memory writes as
   * the HTTP-call task does them). Returns what the model sees (the response body, as text or JSON value).
   */
  run(reference: string, name: string, args: Readonly<Record<string, string>>, turn: Turn): Promise<unknown>;
}
