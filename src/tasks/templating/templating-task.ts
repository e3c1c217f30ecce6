import { isDeepStrictEqual } from 'node:util';
import { closed } from '../../resources/schemas/common.ts';
import { defineTask, type CompiledTask } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import { templateData } from '../../templating/data-model.ts';
import { needsRendering, renderTemplate } from '../../templating/engine.ts';

/**
 * `svc://ai.svc.templating` (reference §6.5): runs after the output task and renders the templates in what it
 * produced, against `templateData(turn)`:
 * - every string field (nested objects and lists included) of every output item stored under a step key starting
 *   with `output:`; values that are not objects (the LLM's raw `output:text:langchain:*` string) are left alone;
 * - `value` and `expressions` of every quick reply in the `quickReplies:<action>` lists.
 * A templated item is stored back under its key (same position), followed by `<key>:preTemplated` (the original)
 * and `<key>:postTemplated` (the result); only items with something to render get these copies. The item in the
 * conversation output `output` list is replaced in place. Quick replies are also replaced in the conversation
 * output `quickReplies` list (our decision: upstream leaves it un-templated, so the client and the next turn's
 * quick-reply dictionary would see raw templates).
 * A field whose template fails becomes '' and the problem is recorded in step data `templating:errors` as
 * `{key, field, message}`; the turn continues. An item already templated in this turn (its value is the stored
 * `:postTemplated` copy) is not rendered again, so text that came from data is never interpreted as a template.
 */

export const TEMPLATING_TASK_TYPE = 'ai.svc.templating';
export const TEMPLATING_ERRORS_KEY = 'templating:errors';

const PRE = ':preTemplated';
const POST = ':postTemplated';
/** Nested item structure deeper than this is left as it is. */
const MAX_DEPTH = 16;

export interface TemplatingProblem {
  readonly key: string;
  readonly field: string;
  readonly message: string;
}

interface Templated {
  readonly value: unknown;
  /** Whether some string in it was a template (even if it rendered to the same text). */
  readonly rendered: boolean;
}

class TurnTemplater {
  readonly #turn: Turn;
  #data: Record<string, unknown> | undefined;
  readonly problems: TemplatingProblem[] = [];

  constructor(turn: Turn) {
    this.#turn = turn;
  }

  /** Built on first need: most turns have nothing to render. */
  get #dataModel(): Record<string, unknown> {
    return (this.#data ??= templateData(this.#turn));
  }

  render(source: string, key: string, field: string): string {
    try {
      return renderTemplate(source, this.#dataModel);
    } catch (error) {
      this.problems.push({ key, field, message: error instanceof Error ? error.message : String(error) });
      return '';
    }
  }

  /** Renders every template string inside `value` (plain objects and lists are copied, never changed). */
  value(value: unknown, key: string, field: string, depth = 0): Templated {
    if (typeof value === 'string') {
      return needsRendering(value)
        ? { value: this.render(value, key, field), rendered: true }
        : { value, rendered: false };
    }
    if (depth >= MAX_DEPTH || value === null || typeof value !== 'object') return { value, rendered: false };
    if (Array.isArray(value)) {
      let rendered = false;
      const list = value.map((element: unknown, index) => {
        const result = this.value(element, key, `${field}[${index}]`, depth + 1);
        rendered ||= result.rendered;
        return result.value;
      });
      return rendered ? { value: list, rendered } : { value, rendered };
    }
    if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null)
      return { value, rendered: false };
    let rendered = false;
    const copy: Record<string, unknown> = {};
    for (const [name, fieldValue] of Object.entries(value)) {
      const result = this.value(fieldValue, key, field === '' ? name : `${field}.${name}`, depth + 1);
      rendered ||= result.rendered;
      copy[name] = result.value;
    }
    return rendered ? { value: copy, rendered } : { value, rendered };
  }
}

function isCopyKey(key: string): boolean {
  return key.endsWith(PRE) || key.endsWith(POST);
}

/** Replaces `original` by `replacement` in a list: by identity, else the first deep-equal element not yet replaced. */
function replaceIn(list: unknown[], replaced: Set<number>, original: unknown, replacement: unknown): void {
  let index = list.findIndex((element, position) => element === original && !replaced.has(position));
  if (index === -1)
    index = list.findIndex((element, position) => !replaced.has(position) && isDeepStrictEqual(element, original));
  if (index === -1) return;
  list[index] = replacement;
  replaced.add(index);
}

function templateTurn(turn: Turn): void {
  const templater = new TurnTemplater(turn);

  const outputList = Array.isArray(turn.output.output) ? [...(turn.output.output as unknown[])] : undefined;
  const outputReplaced = new Set<number>();
  let outputChanged = false;
  for (const entry of turn.entriesWithPrefix('output:')) {
    const original = entry.value;
    if (isCopyKey(entry.key) || original === null || typeof original !== 'object') continue;
    if (turn.has(entry.key + POST) && turn.get(entry.key + POST) === original) continue;
    const result = templater.value(original, entry.key, '');
    if (!result.rendered) continue;
    turn.set(entry.key, result.value, entry.public);
    turn.set(entry.key + PRE, original);
    turn.set(entry.key + POST, result.value);
    if (outputList) {
      replaceIn(outputList, outputReplaced, original, result.value);
      outputChanged = true;
    }
  }
  if (outputList && outputChanged) turn.setOutput('output', outputList);

  const replyList = Array.isArray(turn.output.quickReplies) ? [...(turn.output.quickReplies as unknown[])] : undefined;
  const replyReplaced = new Set<number>();
  let repliesChanged = false;
  for (const entry of turn.entriesWithPrefix('quickReplies:')) {
    const original = entry.value;
    if (isCopyKey(entry.key) || !Array.isArray(original)) continue;
    if (turn.has(entry.key + POST) && turn.get(entry.key + POST) === original) continue;
    let rendered = false;
    const templated = original.map((reply: unknown, index) => {
      if (reply === null || typeof reply !== 'object' || Array.isArray(reply)) return reply;
      const fields = reply as Record<string, unknown>;
      let copy: Record<string, unknown> | undefined;
      for (const name of ['value', 'expressions']) {
        if (typeof fields[name] !== 'string') continue;
        const result = templater.value(fields[name], entry.key, `[${index}].${name}`);
        if (!result.rendered) continue;
        copy ??= { ...fields };
        copy[name] = result.value;
      }
      if (!copy) return reply;
      rendered = true;
      if (replyList) {
        replaceIn(replyList, replyReplaced, reply, copy);
        repliesChanged = true;
      }
      return copy;
    });
    if (!rendered) continue;
    turn.set(entry.key, templated, entry.public);
    turn.set(entry.key + PRE, original);
    turn.set(entry.key + POST, templated);
  }
  if (replyList && repliesChanged) turn.setOutput('quickReplies', replyList);

  if (templater.problems.length > 0) {
    const existing = turn.get(TEMPLATING_ERRORS_KEY);
    turn.set(TEMPLATING_ERRORS_KEY, [...(Array.isArray(existing) ? existing : []), ...templater.problems]);
  }
}

const compiled: CompiledTask = { type: TEMPLATING_TASK_TYPE, execute: templateTurn };
const Nothing = closed({}, { description: 'The templating task has no settings.' });

export const templatingTask = defineTask({
  type: TEMPLATING_TASK_TYPE,
  configSchema: Nothing,
  extensionsSchema: Nothing,
  compile: () => compiled,
});
