import { Type } from '@sinclair/typebox';
import { closed } from '../../resources/schemas/common.ts';
import { defineTask, DeploymentError, stepUri, uriReferences } from '../../runtime/tasks.ts';
import { compileHttpCallSet, type CompiledHttpCall } from './compile.ts';

/**
 * `svc://ai.svc.httpcalls` (alias `ai.svc.apicalls`): runs the HTTP calls of an HTTP-call set (`config.uri`) that
 * the step's actions trigger (reference §8.2, DESIGN §4.7):
 * - for each action of the step, in order: the call named by an action `httpcall(<name>)`, then every call whose
 *   `actions` hold the action or `*`, in their order in the set;
 * - each call at most once per step; one after the other, a later call seeing the responses saved by earlier
 *   ones at top level (`{weather.main.temp}`) and at `memory.current.httpCalls.<responseObjectName>`.
 * What one call does is `executor.ts`.
 */

export const HTTP_CALLS_TASK_TYPE = 'ai.svc.httpcalls';
const HTTPCALL_ACTION = /^httpcall\((.+)\)$/;

/** The calls `actions` trigger, in run order. */
export function selectCalls(
  calls: readonly CompiledHttpCall[],
  byName: ReadonlyMap<string, CompiledHttpCall>,
  actions: readonly string[],
): CompiledHttpCall[] {
  const selected = new Set<CompiledHttpCall>();
  for (const action of actions) {
    const named = HTTPCALL_ACTION.exec(action.trim());
    const call = named ? byName.get(named[1]!.trim()) : undefined;
    if (call) selected.add(call);
    for (const candidate of calls) if (candidate.anyAction || candidate.actions.has(action)) selected.add(candidate);
  }
  return [...selected];
}

const uri = Type.Optional(
  Type.String({
    description: 'Reference of the HTTP-call set: svc://ai.svc.httpcalls/httpcallsstore/httpcalls/<id>?version=<n>.',
  }),
);
const UriOnly = closed({ uri }, { description: 'The HTTP-call set.' });

export const httpCallsTask = defineTask({
  type: HTTP_CALLS_TASK_TYPE,
  aliases: ['ai.svc.apicalls'],
  configSchema: UriOnly,
  extensionsSchema: UriOnly,
  references: uriReferences('httpcalls'),
  async compile(config, extensions, context) {
    const executor = context.services.httpCalls;
    if (!executor) throw new DeploymentError('HTTP calls are not available in this service.');
    const reference = stepUri(config, extensions);
    if (!reference)
      throw new DeploymentError(
        "The HTTP-calls extension (svc://ai.svc.httpcalls) needs the 'uri' of an HTTP-call set in its config.",
      );
    const set = compileHttpCallSet(await context.resolve(reference, 'httpcalls'), reference);
    const byName = new Map(set.calls.map((call) => [call.name, call]));
    return {
      type: HTTP_CALLS_TASK_TYPE,
      async execute(turn) {
        const selected = selectCalls(set.calls, byName, turn.actions);
        const saved: Record<string, unknown> = {};
        for (const call of selected) {
          const result = await executor.execute(call, turn, saved);
          if (result.saved) saved[call.responseObjectName] = result.response;
        }
      },
    };
  },
});
