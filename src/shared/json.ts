/** A plain JSON-style object: not null, not an array. The one such check of the code base. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * JSON with object keys sorted at every level, so equal values give equal text whatever the order their fields were
 * written in. Otherwise it writes what `JSON.stringify` writes: members without a JSON value (undefined, functions,
 * symbols) left out, `null` for them in arrays, `toJSON` results, NaN and infinities as null; so the text of a value
 * is the text of its JSON copy. The audit ledger signs this form: changing it breaks the verification of every chain
 * already written (`audit-entry.test.ts` pins it).
 */
export function canonicalJson(value: unknown): string {
  return canonicalText(value, '') ?? 'null';
}

/** The canonical text of `value` held under `key` (what `toJSON` is given); undefined where JSON writes nothing. */
function canonicalText(value: unknown, key: string): string | undefined {
  let json = value;
  if (typeof json === 'object' && json !== null) {
    const toJson = (json as { toJSON?: unknown }).toJSON;
    if (typeof toJson === 'function') json = toJson.call(json, key);
    if (json instanceof Number || json instanceof String || json instanceof Boolean) json = json.valueOf();
  }
  if (typeof json !== 'object' || json === null) return JSON.stringify(json);
  if (Array.isArray(json)) {
    let text = '[';
    for (let index = 0; index < json.length; index++) {
      if (index > 0) text += ',';
      text += canonicalText(json[index], String(index)) ?? 'null';
    }
    return `${text}]`;
  }
  const record = json as Record<string, unknown>;
  let text = '';
  for (const name of Object.keys(record).sort()) {
    const member = canonicalText(record[name], name);
    if (member !== undefined) text += `,${JSON.stringify(name)}:${member}`;
  }
  return `{${text.slice(1)}}`;
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
