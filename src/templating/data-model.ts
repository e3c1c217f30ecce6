import type { Turn } from '../runtime/turn.ts';
import { isRecord } from '../shared/json.ts';
import { ConversationLogGenerator } from './conversation-log.ts';
import { setPath, type PathSegment } from './paths.ts';

/**
 * The data every template, path and dynamic rule sees (reference §6.2), built from the turn:
 * - `context` (current step's context values) and each context value again at top level;
 * - `properties`: name -> value of every property;
 * - `memory.current` / `memory.last`: the conversation output of this step / the previous one (empty at step 0);
 * - `memory.past`: the conversation outputs of steps 1..current (computed only when a template reads it);
 * - `userInfo.userId` (merged into a `userInfo` object context) and `conversationInfo`;
 * - `conversationLog`: the original's conversation log object (`conversationLog.generate().toObject()`: the past
 *   inputs and outputs as role/content messages), built only when a template calls `generate()`.
 * `extra` names (saved HTTP responses, iteration objects) are added at top level last.
 */
export function templateData(turn: Turn, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  const context: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(turn.context)) {
    context[name] = entry.value;
    data[name] = entry.value;
  }
  if (Object.keys(context).length > 0) data.context = context;

  const contextUserInfo = context.userInfo;
  data.userInfo = isRecord(contextUserInfo) ? { ...contextUserInfo, userId: turn.userId } : { userId: turn.userId };
  data.conversationInfo = {
    conversationId: turn.conversationId,
    agentId: turn.agentId,
    agentVersion: String(turn.agentVersion),
  };

  if (turn.properties.size > 0) {
    const properties: Record<string, unknown> = {};
    for (const [name, property] of turn.properties) properties[name] = property.value;
    data.properties = properties;
  }

  const memory: Record<string, unknown> = { current: turn.output, last: turn.previousSteps.at(-1)?.output ?? {} };
  defineFromTurn(memory, 'past', PAST_OUTPUTS, turn);
  data.memory = memory;

  Object.assign(data, extra);
  // A getter: the generator is made when a template reads the name (an extra name of the same spelling wins).
  if (!Object.hasOwn(data, 'conversationLog')) defineFromTurn(data, 'conversationLog', CONVERSATION_LOG, turn);
  return data;
}

/** The turn an object of the template data was made from, for the getters below (not enumerable). */
const SOURCE_TURN = Symbol('source turn');

type MadeFromTurn = { readonly [SOURCE_TURN]: Turn };

/**
 * Defines `name` on `target` as a getter computed from `turn` when read. The getters are one function each, shared by
 * every turn, reading the turn from the object. V8 keeps a getter defined on an object in a record it allocates in
 * the old generation, and young collections take every reference from there as live until a full collection: a
 * getter made per turn (a closure over the turn) kept each turn's objects alive that long, so they were promoted.
 */
function defineFromTurn(target: object, name: string, getter: PropertyDescriptor, turn: Turn): void {
  Object.defineProperty(target, SOURCE_TURN, { value: turn });
  Object.defineProperty(target, name, getter);
}

/** `memory.past`: the conversation outputs of steps 1..current. */
const PAST_OUTPUTS: PropertyDescriptor = {
  enumerable: true,
  get(this: MadeFromTurn) {
    const turn = this[SOURCE_TURN];
    const past = turn.previousSteps.slice(1).map((step) => step.output);
    return turn.stepIndex > 0 ? [...past, turn.output] : past;
  },
};

/** `conversationLog`: the generator of the original's conversation log. */
const CONVERSATION_LOG: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: MadeFromTurn) {
    const turn = this[SOURCE_TURN];
    return new ConversationLogGenerator(() => [...turn.previousSteps.map((step) => step.output), turn.output]);
  },
};

/**
 * The template data of one task run (a property setter, an HTTP call, an LLM task): `templateData(turn)` built when
 * first read, plus the run's own top-level names (a saved or just received response, a batch element, an LLM's
 * tool arguments) and the copies made by `toObjectPath` instructions. Rebuilt after a property was set, so later
 * instructions and templates of the run see it.
 */
export class TemplateData {
  readonly #turn: Turn;
  readonly #extra: Record<string, unknown>;
  readonly #copies: Array<readonly [readonly PathSegment[], unknown]> = [];
  #data: Record<string, unknown> | undefined;

  constructor(turn: Turn, extra: Readonly<Record<string, unknown>> = {}) {
    this.#turn = turn;
    this.#extra = { ...extra };
  }

  get(): Record<string, unknown> {
    if (!this.#data) {
      const data = templateData(this.#turn, this.#extra);
      for (const [segments, value] of this.#copies) setPath(data, segments, value);
      this.#data = data;
    }
    return this.#data;
  }

  /** The data with one more top-level name, for one template (a batch or iteration element). */
  with(name: string, value: unknown): Record<string, unknown> {
    return { ...this.get(), [name]: value };
  }

  /** Adds a top-level name for everything that follows in the run. */
  put(name: string, value: unknown): void {
    this.#extra[name] = value;
    this.#data = undefined;
  }

  /** A property of the turn changed: the next read rebuilds `properties`. */
  propertiesChanged(): void {
    this.#data = undefined;
  }

  /** Copies `value` to a path of this run's data (a `toObjectPath` instruction); the turn is not changed. */
  copy(segments: readonly PathSegment[], value: unknown): void {
    this.#copies.push([segments, value]);
    if (this.#data) setPath(this.#data, segments, value);
  }
}
