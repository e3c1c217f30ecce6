import type { CallerIdentity } from '../security/auth-caller.ts';
import type { TurnReplay } from './replay.ts';
import type { ContextValue, Conversation, Property, StepEntry, StoredStep, Tallies } from './memory.ts';

/** Progress of a turn, for clients that follow it live (server-sent events). */
export type TurnEvent =
  | { readonly type: 'task_start'; readonly task: string }
  | { readonly type: 'task_complete'; readonly task: string }
  | { readonly type: 'token'; readonly text: string }
  | { readonly type: 'tool_call'; readonly tool: string; readonly arguments?: unknown }
  /** A task threw: the turn ends in ERROR; `reason` is the one stored in the step (never a secret). */
  | { readonly type: 'task_failed'; readonly task: string; readonly reason: string }
  /** Tokens one model call used (LLM tasks). */
  | { readonly type: 'usage'; readonly inputTokens: number; readonly outputTokens: number };

/**
 * A task's request to wait for a person before it goes on (human in the loop): the tool calls waiting for
 * approval and what the task needs to go on from there (JSON; stored with the conversation while it waits).
 */
export interface ToolApprovalRequest {
  readonly toolCalls: readonly PendingToolCall[];
  readonly state: unknown;
}

export interface PendingToolCall {
  readonly toolCallId: string;
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
}

/** A step built so far by a turn that waits for a person; the resumed turn goes on from it. */
export interface PartialStep {
  readonly entries: readonly StepEntry[];
  readonly output: Readonly<Record<string, unknown>>;
  readonly properties: Readonly<Record<string, Property>>;
}

/**
 * The working memory of one turn: what every lifecycle task reads and writes. Earlier steps are read-only;
 * the current step is built here and frozen by `finish()`.
 */
/** The conversation language while no `lang` property is set. */
export const DEFAULT_LANGUAGE = 'en';

export class Turn {
  readonly conversationId: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly userId: string;
  readonly environment: string;
  /** Index of the step being built (0 = the conversation start). */
  readonly stepIndex: number;
  readonly previousSteps: readonly StoredStep[];
  /** Tallies of the previous steps (the current one is not counted). */
  readonly tallies: Tallies;
  #input: string;
  #context: Readonly<Record<string, ContextValue>>;
  /** Aborted when the turn ran out of time; long-running tasks should stop early. */
  readonly signal: AbortSignal;
  /** Id of the workflow whose task is running; recorded on every entry it writes. */
  originWorkflowId: string | undefined;
  /** Tells a live listener (if any) how the turn progresses; a no-op otherwise. */
  readonly emit: (event: TurnEvent) => void;
  /** Whether someone follows the turn live (tasks may then stream, e.g. LLM tokens). */
  readonly hasListener: boolean;
  /** The authenticated user whose request runs the turn (for `${caller:…}` in HTTP calls); never stored. */
  readonly caller: CallerIdentity | undefined;
  /** Answers the turn's HTTP and LLM calls from recordings (a transcript replay); undefined = the real calls. */
  readonly replay: TurnReplay | undefined;

  /** Set by a task that waits for tool approvals; the pipeline then pauses the turn after it. */
  toolApprovalRequest: ToolApprovalRequest | undefined;
  /**
   * When the turn resumes a task that waited for tool approvals: the state it stored and the decisions, for the
   * task that asked (and only once).
   */
  resumption: unknown;

  readonly #entries = new Map<string, StepEntry>();
  /** Keys in the order `set` wrote them (repeats included): what a task wrote is the tail after a mark. */
  readonly #writes: string[] = [];
  readonly #output: Record<string, unknown> = {};
  readonly #properties: Map<string, Property>;
  readonly #clock: () => number;

  constructor(options: {
    conversation: Conversation;
    input: string;
    context: Readonly<Record<string, ContextValue>>;
    signal: AbortSignal;
    clock?: () => number;
    onEvent?: ((event: TurnEvent) => void) | undefined;
    caller?: CallerIdentity | undefined;
    replay?: TurnReplay | undefined;
    /** A paused turn's step to go on from (`partialStep()` of the turn that paused). */
    resumeFrom?: PartialStep | undefined;
  }) {
    const { conversation } = options;
    this.conversationId = conversation.id;
    this.agentId = conversation.agentId;
    this.agentVersion = conversation.agentVersion;
    this.userId = conversation.userId;
    this.environment = conversation.environment;
    this.stepIndex = conversation.steps.length;
    this.previousSteps = conversation.steps;
    this.tallies = conversation.tallies;
    this.#input = options.input;
    this.#context = options.context;
    this.signal = options.signal;
    const resumed = options.resumeFrom;
    this.#properties = new Map(Object.entries(resumed?.properties ?? conversation.properties));
    for (const entry of resumed?.entries ?? []) this.#entries.set(entry.key, entry);
    if (resumed) Object.assign(this.#output, resumed.output);
    this.#clock = options.clock ?? Date.now;
    this.emit = options.onEvent ?? (() => undefined);
    this.hasListener = options.onEvent !== undefined;
    this.caller = options.caller;
    this.replay = options.replay;
  }

  /** The user's message of this turn. */
  get input(): string {
    return this.#input;
  }

  /** The context sent with this turn's message. */
  get context(): Readonly<Record<string, ContextValue>> {
    return this.#context;
  }

  /**
   * Replaces every text of the input and the context by `mask(text)`: once a secret was taken out of the message
   * (a secret-scoped property), no later task or workflow of the turn sees it again.
   */
  maskInputs(mask: (text: string) => string): void {
    this.#input = mask(this.#input);
    const masked: Record<string, ContextValue> = {};
    for (const [name, entry] of Object.entries(this.#context))
      masked[name] = { type: entry.type, value: maskTexts(entry.value, mask) };
    this.#context = masked;
  }

  // --- step data -------------------------------------------------------------------------------------------

  /** Stores data under `key`; a rewrite replaces the value and keeps the original position. */
  set(key: string, value: unknown, isPublic = false): void {
    const entry: StepEntry =
      this.originWorkflowId === undefined
        ? { key, value, timestamp: this.#clock(), public: isPublic }
        : { key, value, timestamp: this.#clock(), originWorkflowId: this.originWorkflowId, public: isPublic };
    this.#entries.set(key, entry);
    this.#writes.push(key);
  }

  /** A mark for `writtenSince`. */
  get writeMark(): number {
    return this.#writes.length;
  }

  /** The keys `set` since `mark` that are still in the step, each once, in the order they were first written. */
  writtenSince(mark: number): string[] {
    const keys = new Set<string>();
    for (let index = mark; index < this.#writes.length; index++) {
      const key = this.#writes[index]!;
      if (this.#entries.has(key)) keys.add(key);
    }
    return [...keys];
  }

  get(key: string): unknown {
    return this.#entries.get(key)?.value;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Entries whose key starts with `prefix`, in insertion order. */
  entriesWithPrefix(prefix: string): StepEntry[] {
    return [...this.#entries.values()].filter((entry) => entry.key.startsWith(prefix));
  }

  /** The last-inserted entry whose key starts with `prefix`. */
  latest(prefix: string): StepEntry | undefined {
    let found: StepEntry | undefined;
    for (const entry of this.#entries.values()) if (entry.key.startsWith(prefix)) found = entry;
    return found;
  }

  // --- conversation output -----------------------------------------------------------------------------------

  /** The current step's conversation output (read it; change it through the methods below). */
  get output(): Readonly<Record<string, unknown>> {
    return this.#output;
  }

  setOutput(key: string, value: unknown): void {
    this.#output[key] = value;
  }

  /** Appends to a list in the conversation output (creating it). */
  appendOutput(key: string, ...items: unknown[]): void {
    const list = this.#output[key];
    this.#output[key] = Array.isArray(list) ? [...list, ...items] : items;
  }

  deleteOutput(key: string): void {
    delete this.#output[key];
  }

  // --- actions -------------------------------------------------------------------------------------------------

  get actions(): readonly string[] {
    const actions = this.get('actions');
    return Array.isArray(actions) ? (actions as string[]) : [];
  }

  /** Replaces the step's actions (de-duplicated, order kept), in data and output. */
  setActions(actions: readonly string[]): void {
    const distinct = [...new Set(actions)];
    this.set('actions', distinct, true);
    this.setOutput('actions', distinct);
  }

  // --- properties ----------------------------------------------------------------------------------------------

  get properties(): ReadonlyMap<string, Property> {
    return this.#properties;
  }

  /**
   * The conversation's language for dictionaries and output sets: its `lang` property, or English while none is set
   * (as the original service does, so imported agents whose dictionaries say `"language": "en"` understand input).
   */
  get language(): string {
    const lang = this.#properties.get('lang')?.value;
    return typeof lang === 'string' && lang !== '' ? lang : DEFAULT_LANGUAGE;
  }

  /** Sets a property and mirrors it into the current step (`properties:<name>` data and output). */
  setProperty(property: Property): void {
    this.#properties.set(property.name, property);
    this.set(`properties:${property.name}`, [property]);
    const mirrored = (this.#output.properties as Record<string, unknown> | undefined) ?? {};
    this.#output.properties = { ...mirrored, [property.name]: property.value };
  }

  // --- end of the turn -----------------------------------------------------------------------------------------

  /** The step as built so far, to go on from when the turn resumes after a pause (step-scoped properties kept). */
  partialStep(): PartialStep {
    return {
      entries: [...this.#entries.values()],
      output: { ...this.#output },
      properties: Object.fromEntries(this.#properties),
    };
  }

  /**
   * Freezes the step. Step-scoped properties end with the turn: they are removed from the properties and from
   * the step's `properties` output.
   */
  finish(): { step: StoredStep; properties: Record<string, Property> } {
    const kept: Record<string, Property> = {};
    const stepScoped: string[] = [];
    for (const [name, property] of this.#properties) {
      if (property.scope === 'step') stepScoped.push(name);
      else kept[name] = property;
    }
    const mirrored = this.#output.properties as Record<string, unknown> | undefined;
    if (mirrored && stepScoped.length > 0) {
      const remaining = { ...mirrored };
      for (const name of stepScoped) delete remaining[name];
      if (Object.keys(remaining).length > 0) this.#output.properties = remaining;
      else delete this.#output.properties;
    }
    const entries = [...this.#entries.values()];
    const timestamp = entries.reduce((latest, entry) => Math.max(latest, entry.timestamp), 0) || this.#clock();
    return { step: { entries, output: { ...this.#output }, timestamp, properties: kept }, properties: kept };
  }
}

function maskTexts(value: unknown, mask: (text: string) => string): unknown {
  if (typeof value === 'string') return mask(value);
  if (Array.isArray(value)) return value.map((item) => maskTexts(item, mask));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskTexts(item, mask)]));
  }
  return value;
}
