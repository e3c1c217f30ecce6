import type { HttpCallTools, HttpCallToolSpec } from '../../llm/http-call-tools.ts';
import { compileHttpCallSet, type CompiledHttpCallSet } from '../httpcalls/compile.ts';
import type { HttpCallExecutor } from '../httpcalls/executor.ts';

/**
 * HTTP calls as LLM tools over the HTTP-call task's executor (reference §8.6): the set is compiled at deployment
 * (kept per versioned reference, which never changes), a chosen call runs in the turn with the model's arguments
 * visible to its templates by name; the model sees the response body (or the error text of a non-2xx status).
 */
export function createHttpCallTools(executor: HttpCallExecutor): HttpCallTools {
  const sets = new Map<string, CompiledHttpCallSet>();
  return {
    async describe(reference, context): Promise<HttpCallToolSpec[]> {
      const set = compileHttpCallSet(await context.resolve(reference, 'httpcalls'), reference);
      sets.set(reference, set);
      return set.calls.map((call) => ({ name: call.name, description: call.description, parameters: call.parameters }));
    },
    async run(reference, name, args, turn) {
      const call = sets.get(reference)?.calls.find((candidate) => candidate.name === name);
      if (!call) throw new Error(`The HTTP call '${name}' of ${reference} is not deployed.`);
      const result = await executor.execute(call, turn, args);
      return result.status === undefined ? `The HTTP call '${name}' was sent.` : result.response;
    },
  };
}
