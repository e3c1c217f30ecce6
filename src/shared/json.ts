/** A plain JSON-style object: not null, not an array. The one such check of the code base. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * JSON with object keys sorted at every level and undefined members left out, so equal values give equal text
 * whatever the order their fields were written in. The audit ledger signs this form: changing it breaks the
 * verification of every chain already written (`audit-entry.test.ts` pins it).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]); // [ {
const CLOSERS = new Set([0x5d, 0x7d]); // ] }

/**
 * Follows how deeply JSON text nests, chunk by chunk, without parsing it: so that a document nesting deeper than
 * `maxDepth` arrays and objects is refused before anything (the parser, a validator, a recursive walk) descends
 * into it. Works on UTF-8 bytes: the characters it looks at never occur inside a multi-byte sequence.
 */
export class JsonDepthScanner {
  readonly #maxDepth: number;
  #depth = 0;
  #inString = false;
  #escaped = false;

  constructor(maxDepth: number) {
    this.#maxDepth = maxDepth;
  }

  /** Reads the next bytes; true as soon as the text nests deeper than the limit. */
  beyondLimit(bytes: Uint8Array): boolean {
    for (let at = 0; at < bytes.length; at++) {
      const byte = bytes[at]!;
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (byte === BACKSLASH) this.#escaped = true;
        else if (byte === QUOTE) this.#inString = false;
      } else if (byte === QUOTE) this.#inString = true;
      else if (OPENERS.has(byte)) {
        if (++this.#depth > this.#maxDepth) return true;
      } else if (CLOSERS.has(byte)) this.#depth--;
    }
    return false;
  }
}

/** Whether the JSON text `bytes` nests deeper than `maxDepth` arrays and objects. */
export function nestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  return new JsonDepthScanner(maxDepth).beyondLimit(bytes);
}
