import type { Turn } from '../../runtime/turn.ts';
import { templateData } from '../../templating/data-model.ts';
import { setPath, type PathSegment } from '../../templating/paths.ts';

/**
 * The template data of one HTTP call: the turn's data model (reference §6.2) plus the call's own top-level names
 * (responses saved earlier in the task run, the call's own response after it arrived, a batch element, an LLM's
 * tool arguments) and the copies made by `toObjectPath` instructions. Rebuilt after a property was set, so later
 * instructions and templates see it.
 */
export class CallData {
  readonly #turn: Turn;
  readonly #extra: Record<string, unknown>;
  readonly #copies: Array<readonly [readonly PathSegment[], unknown]> = [];
  #data: Record<string, unknown> | undefined;

  constructor(turn: Turn, extra: Readonly<Record<string, unknown>>) {
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

  /** The data with one more top-level name (a batch or iteration element). */
  with(name: string, value: unknown): Record<string, unknown> {
    return { ...this.get(), [name]: value };
  }

  /** Adds a top-level name for everything that follows. */
  put(name: string, value: unknown): void {
    this.#extra[name] = value;
    this.#data = undefined;
  }

  propertiesChanged(): void {
    this.#data = undefined;
  }

  copy(segments: readonly PathSegment[], value: unknown): void {
    this.#copies.push([segments, value]);
    if (this.#data) setPath(this.#data, segments, value);
  }
}


