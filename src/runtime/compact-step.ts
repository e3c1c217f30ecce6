import { Buffer } from 'node:buffer';
import type { StoredStepText } from '../storage/runtime-ports.ts';
import { stepString } from '../storage/runtime-rows.ts';
import type { KeyedRequest, Property, StepEntry, StoredStep } from './memory.ts';

type Part = 'entries' | 'output' | 'properties';
type Parsed = {
  entries?: readonly StepEntry[];
  output?: Readonly<Record<string, unknown>>;
  properties?: Readonly<Record<string, Property>>;
};

/**
 * A committed step as a cached conversation keeps it: the JSON text the store keeps of it, as UTF-8 bytes in a
 * buffer of its own outside the JavaScript heap, whose parts (its entries, its output, its properties) are parsed
 * when read. A parsed step is dozens of small objects; a conversation of thousands of steps kept that way makes
 * every major collection trace all of them (pauses of hundreds of milliseconds in a busy service). Kept as a string,
 * each step's text was still copied twice by the young collector (to the survivor space, then to the old
 * generation): a rule-only turn promoted 2.7 KB, its step's text; outside the heap only the small buffer object is
 * copied (0.6 KB a turn), and the old generation no longer grows with the conversations' text.
 *
 * The conversation's latest step keeps what was parsed (and, when it was just committed, the step it was made
 * from): the next turn and the answer read it several times. Only the `KEPT_STEPS` most recently kept do, so that
 * idle conversations in the cache are text alone. Other steps parse a part at each read (the same part read again
 * in a row is served again); readers of old steps are rare (undo, history windows, logs). A step read from the store
 * keeps the text as it was read until a part of it is first read (`#indexed`).
 */
export class CompactStep implements StoredStep {
  #timestamp = 0;
  #request: KeyedRequest | undefined;
  /**
   * `{"entries":…,"output":…,"timestamp":…,"properties":…}` as UTF-8, in a buffer of its own (see above); undefined
   * while the conversation does not hold this step's text (`#earlier` reads it when asked for).
   */
  #bytes: Buffer | undefined;
  /** The reader of the conversation's steps whose text is not held, while this is one of them; its index there. */
  #earlier: EarlierStepsReader | undefined;
  #position = 0;
  /** Where the parts' bytes start and end in `#bytes` (numbers, not an array: no object more per step); the
   * entries start right after `ENTRIES_KEY` and end right before `OUTPUT_KEY`. `UNINDEXED` until known. */
  #outputStart = UNINDEXED;
  #outputEnd = UNINDEXED;
  #propertiesStart = UNINDEXED;
  #propertiesEnd = UNINDEXED;
  /** Frozen entry values (a rule group's failed names): kept by reference, left out of `#bytes` (`SharedValues`). */
  #shared: SharedValues | undefined;
  /** Parts parsed and kept, while this is the latest step of its conversation. */
  #kept: Parsed | undefined;
  /** Bytes of text kept by the conversation's steps up to this one (`placeAfter`). */
  #textThrough = 0;
  /** The JSON text as made, until `of` hands it to the store (spares decoding it again). */
  #made: string | undefined;

  /**
   * A step as made (`StoredStep`), the stored JSON text of one (kept as it is until a part is read), or nothing yet:
   * a step of a loaded conversation whose text is read when asked for.
   */
  private constructor(source: StoredStep | StoredStepText | undefined, keep: boolean, inCache: boolean) {
    if (source === undefined) return;
    if (typeof source === 'string' || source instanceof Uint8Array) {
      this.#bytes = bufferOf(source);
      return;
    }
    this.#bytes = this.#index(source);
    if (keep) {
      this.#kept = { entries: source.entries, output: source.output, properties: source.properties };
      if (inCache) stepsKeeping.add(this);
    }
  }

  /** Sets the step's fields and its parts' bounds from `step`, and answers its text as UTF-8. */
  #index(step: StoredStep): Buffer {
    this.#timestamp = step.timestamp;
    this.#request = step.request;
    const allEntries = JSON.stringify(step.entries);
    const { text: entries, shared } = withoutSharedValues(step.entries, allEntries);
    this.#shared = shared;
    const output = JSON.stringify(step.output);
    const properties = JSON.stringify(step.properties);
    const request = step.request === undefined ? '' : `,"request":${JSON.stringify(step.request)}`;
    const beforeProperties = `,"timestamp":${step.timestamp},"properties":`;
    const afterEntries = `${OUTPUT_KEY}${output}${beforeProperties}${properties}${request}}`;
    const json = `${ENTRIES_KEY}${entries}${afterEntries}`;
    this.#made = shared === undefined ? json : `${ENTRIES_KEY}${allEntries}${afterEntries}`;
    const bytes = exactBuffer(json);
    // Bounds counted from the end, so that the entries (the longest part) need no count of their own bytes.
    const length =
      bytes.length === json.length ? (text: string) => text.length : (text: string) => Buffer.byteLength(text);
    this.#propertiesEnd = bytes.length - length(request) - 1;
    this.#propertiesStart = this.#propertiesEnd - length(properties);
    this.#outputEnd = this.#propertiesStart - beforeProperties.length;
    this.#outputStart = this.#outputEnd - length(output);
    return bytes;
  }

  /**
   * A step read from the store as it was kept (its stored text, unread): the bounds of its parts are found when
   * one is first read. Readers of the steps before the latest are rare (undo, history windows, logs), so loading a
   * conversation costs a copy of its text, not a parse of each of its steps.
   */
  #indexed(): this {
    if (this.#outputStart === UNINDEXED) {
      const text = this.#held().toString('utf8');
      this.#bytes = this.#index(JSON.parse(text) as StoredStep);
      this.#made = undefined;
    }
    return this;
  }

  get timestamp(): number {
    return this.#indexed().#timestamp;
  }

  get request(): KeyedRequest | undefined {
    // Retried messages look it up in the latest hundred steps: a step as read is not parsed whole for it.
    if (this.#outputStart === UNINDEXED) {
      const found = requestAtEnd(this.#held());
      if (found !== UNKNOWN) return found;
    }
    return this.#indexed().#request;
  }

  /**
   * The compact form of `step` (itself when it is one already) and the JSON text the store keeps of it. A step of a
   * conversation the cache does not hold (one just started) keeps its parsed parts without a place among the
   * `KEPT_STEPS`: they go with the step, where a place would keep the step, and its parts, for a thousand steps
   * more, long enough to be copied to the old generation.
   */
  static of(step: StoredStep, inCache = true): { step: CompactStep; json: string } {
    const compact = step instanceof CompactStep ? step : new CompactStep(step, true, inCache);
    const json = compact.#made ?? compact.storedJson;
    compact.#made = undefined;
    return { step: compact, json };
  }

  /**
   * A step of a loaded conversation whose text is not read yet: `earlier` reads it (and its neighbours') when a part
   * of it is first asked for.
   */
  static notRead(earlier: EarlierStepsReader, position: number): CompactStep {
    const step = new CompactStep(undefined, false, true);
    step.#earlier = earlier;
    step.#position = position;
    return step;
  }

  /** Whether the step holds its text (a step of a loaded conversation may not: `notRead`, `letGo`). */
  get holdsText(): boolean {
    return this.#bytes !== undefined;
  }

  /** Takes the step's text as the store keeps it (read by `earlier`). */
  hold(text: StoredStepText): void {
    this.#bytes = bufferOf(text);
    this.#outputStart = UNINDEXED;
    this.#earlier = undefined;
  }

  /** Lets go of the step's text: `earlier` reads it again when it is asked for (the step is `position` in it). */
  letGo(earlier: EarlierStepsReader, position: number): void {
    this.#bytes = undefined;
    this.#outputStart = UNINDEXED;
    this.#made = undefined;
    this.#kept = undefined;
    if (lastRead.step === this) lastRead = { step: undefined, part: undefined, value: undefined };
    this.#earlier = earlier;
    this.#position = position;
  }

  /** The step's text, read first when it is not held. */
  #held(): Buffer {
    if (this.#bytes === undefined) this.#earlier?.read(this, this.#position);
    if (this.#bytes === undefined) throw new Error(`step ${this.#position}: its text was not read`);
    return this.#bytes;
  }

  /**
   * A step read from the store (its JSON text, or its UTF-8 bytes, which the step keeps).
   * A `latest` step is parsed at once and keeps its parsed parts; any other is kept as it was read (`#indexed`).
   */
  static fromStored(text: StoredStepText, latest: boolean): CompactStep {
    if (!latest) return new CompactStep(text, false, true);
    return new CompactStep(JSON.parse(stepString(text)) as StoredStep, true, true);
  }

  get entries(): readonly StepEntry[] {
    return this.#read('entries') as readonly StepEntry[];
  }

  get output(): Readonly<Record<string, unknown>> {
    return this.#read('output') as Readonly<Record<string, unknown>>;
  }

  get properties(): Readonly<Record<string, Property>> {
    return this.#read('properties') as Readonly<Record<string, Property>>;
  }

  /** The step's JSON text as the store keeps it (`JSON.parse` of it is the step). */
  get storedJson(): string {
    if (this.#outputStart === UNINDEXED) return this.#held().toString('utf8');
    return `${ENTRIES_KEY}${this.#text(ENTRIES_KEY.length, this.#entriesEnd, this.#shared)}${this.#text(this.#entriesEnd, this.#held().length)}`;
  }

  get #entriesEnd(): number {
    return this.#outputStart - OUTPUT_KEY.length;
  }

  /** Counts this step's text after that of the steps before it (`previous`: the step before it). */
  placeAfter(previous: StoredStep | undefined): void {
    this.#textThrough = (previous instanceof CompactStep ? previous.#textThrough : 0) + (this.#bytes?.length ?? 0);
  }

  /** Bytes of text kept by the conversation's steps up to this one. */
  get textThrough(): number {
    return this.#textThrough;
  }

  /** Keeps parts parsed from now on (the step became the latest again, e.g. by an undo). */
  keepParsed(): void {
    if (this.#kept) return;
    this.#kept = {};
    stepsKeeping.add(this);
  }

  /** Drops the parsed parts: the step is no longer the latest. */
  forgetParsed(): void {
    this.#kept = undefined;
  }

  toJSON(): StoredStep {
    return JSON.parse(this.storedJson) as StoredStep;
  }

  #read(part: Part): unknown {
    const kept = this.#kept?.[part];
    if (kept !== undefined) return kept;
    if (lastRead.step === this && lastRead.part === part) return lastRead.value;
    this.#indexed();
    const value: unknown = JSON.parse(
      part === 'entries'
        ? this.#text(ENTRIES_KEY.length, this.#entriesEnd, this.#shared)
        : part === 'output'
          ? this.#text(this.#outputStart, this.#outputEnd)
          : this.#text(this.#propertiesStart, this.#propertiesEnd),
    );
    if (this.#kept) this.#kept[part] = value as never;
    else lastRead = { step: this, part, value };
    return value;
  }

  /** The text of the JSON from byte `start` to byte `end`, with `shared` values put back. */
  #text(start: number, end: number, shared?: SharedValues): string {
    const text = this.#held().toString('utf8', start, end);
    return shared === undefined ? text : withSharedValues(text, shared);
  }
}

/** Bounds not found yet: the step holds its stored text as it was read (`#indexed`). */
const UNINDEXED = -1;

/** `text` as UTF-8 in a buffer of exactly its size. Not `Buffer.from`: below 4 KiB that cuts the bytes from a shared
 * 8 KiB pool, which one kept step would keep whole. */
function exactBuffer(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
  bytes.write(text, 'utf8');
  return bytes;
}

/** A stored text as a buffer of its own: bytes that fill their memory alone (SQLite's BLOBs do) are kept as they
 * are; a view into more would keep all of it, so those are copied. */
function bufferOf(text: StoredStepText): Buffer {
  if (typeof text === 'string') return exactBuffer(text);
  if (text.byteLength === text.buffer.byteLength) return Buffer.from(text.buffer, 0, text.byteLength);
  const copy = Buffer.allocUnsafeSlow(text.byteLength);
  copy.set(text);
  return copy;
}

/** The step's text does not tell its request without being parsed whole. */
const UNKNOWN = Symbol('unknown');
const REQUEST_MEMBER = Buffer.from(',"request":{');
const REQUEST_KEY = Buffer.from('"request"');

/**
 * The `request` member a step's stored text ends with, read without parsing the rest; undefined when the text has no
 * `"request"` anywhere. Only the outermost object's last member makes the text from its `{` to the closing brace
 * before the last one a JSON value: a member of the same name further in leaves braces over, and the parse fails.
 */
function requestAtEnd(bytes: Buffer): KeyedRequest | undefined | typeof UNKNOWN {
  const at = bytes.lastIndexOf(REQUEST_MEMBER);
  if (at < 0) return bytes.includes(REQUEST_KEY) ? UNKNOWN : undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8', at + REQUEST_MEMBER.length - 1, bytes.length - 1));
    return isKeyedRequest(value) ? value : UNKNOWN;
  } catch {
    return UNKNOWN;
  }
}

function isKeyedRequest(value: unknown): value is KeyedRequest {
  if (typeof value !== 'object' || value === null) return false;
  const { idempotencyKey, fingerprint, state } = value as Record<string, unknown>;
  return typeof idempotencyKey === 'string' && typeof fingerprint === 'string' && typeof state === 'string';
}

/** Reads the text of a conversation's steps that it does not hold (`EarlierSteps`). */
export interface EarlierStepsReader {
  /** Gives `step`, at `position`, and the steps right after it that hold no text either, their text (`hold`). */
  read(step: CompactStep, position: number): void;
}

/** Latest steps of conversations in use keep their parsed parts; any more (idle conversations) keep text alone. */
export const KEPT_STEPS = 1024;

/** The steps that were last told to keep their parsed parts: the oldest forgets them when another is added. */
const stepsKeeping = new (class {
  readonly #ring: Array<CompactStep | undefined> = new Array(KEPT_STEPS);
  #next = 0;

  add(step: CompactStep): void {
    const oldest = this.#ring[this.#next];
    if (oldest !== undefined && oldest !== step) oldest.forgetParsed();
    this.#ring[this.#next] = step;
    this.#next = (this.#next + 1) % KEPT_STEPS;
  }
})();

/**
 * Frozen entry values and where their JSON goes in the kept text of the entries: offset, value, offset, value, …
 * A frozen value cannot change, so a step may keep it by reference: a first-match rule group's list of failed rule
 * names is one frozen array shared by every turn that ends the same way (1.2 KB of text in the bench's steps).
 */
type SharedValues = readonly unknown[];

/** Frozen values shorter than this as text are kept as text. */
const MIN_SHARED_TEXT = 64;

/** The JSON text of each frozen value met, made once. */
const sharedTexts = new WeakMap<object, string>();

function sharedText(value: object): string {
  let text = sharedTexts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    sharedTexts.set(value, text);
  }
  return text;
}

/** `text` (the JSON of `entries`) without the text of their frozen values, and those values with their places. */
function withoutSharedValues(
  entries: readonly StepEntry[],
  text: string,
): { text: string; shared: SharedValues | undefined } {
  let shared: unknown[] | undefined;
  let kept = '';
  let from = 0;
  for (const { value } of entries) {
    if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) continue;
    const valueText = sharedText(value);
    if (valueText.length < MIN_SHARED_TEXT) continue;
    // Any place the same text appears will do: putting it back there makes the same JSON.
    const at = text.indexOf(valueText, from);
    if (at < 0) continue;
    kept += text.slice(from, at);
    (shared ??= []).push(kept.length, value);
    from = at + valueText.length;
  }
  return shared === undefined ? { text, shared } : { text: kept + text.slice(from), shared };
}

function withSharedValues(kept: string, shared: SharedValues): string {
  let text = '';
  let from = 0;
  for (let index = 0; index < shared.length; index += 2) {
    const at = shared[index] as number;
    text += kept.slice(from, at) + sharedText(shared[index + 1] as object);
    from = at;
  }
  return text + kept.slice(from);
}

const ENTRIES_KEY = '{"entries":';
const OUTPUT_KEY = ',"output":';

/** The last part read of a step that keeps nothing (a reader often reads two fields of one part in a row). */
let lastRead: { step: CompactStep | undefined; part: Part | undefined; value: unknown } = {
  step: undefined,
  part: undefined,
  value: undefined,
};
