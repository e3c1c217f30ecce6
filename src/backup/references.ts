import { kindOfUriType, type JsonPath, type KindName, type ResourceKindDefinition } from '../resources/kinds.ts';
import { splitReference } from '../resources/uri.ts';
import { isRecord } from '../shared/json.ts';

export type { JsonPath };

/**
 * The references configuration bodies (in the spec's names) hold, and how to rewrite them. Where a kind holds them
 * is its own contract (`references` of its kind definition; the workflow's comes from the registered tasks).
 */

export interface ReferenceSlot {
  readonly path: JsonPath;
  readonly uri: string;
  /** The kind the reference must name (any configuration kind when absent). */
  readonly kind?: KindName;
}

/** A reference as an archive writes it: any id of 18+ hex digits or dashes (upstream PostgreSQL ids are UUIDs). */
export interface LooseReference {
  readonly kind: KindName;
  readonly id: string;
  readonly version: number;
}

const LOOSE_ID = /^[0-9A-Fa-f-]{18,}$/;

/** A reference in either spelling (`svc://ai.svc.`, `eddi://ai.labs.`) to a configuration kind, with a loose id. */
export function parseLooseReference(uri: string): LooseReference | undefined {
  const reference = splitReference(uri);
  if (!reference || !LOOSE_ID.test(reference.id)) return undefined;
  const kind = kindOfUriType(reference.type)?.name;
  return kind ? { kind, id: reference.id, version: reference.version } : undefined;
}

function stringAt(value: unknown, path: JsonPath): string | undefined {
  let current = value;
  for (const key of path) {
    if (typeof key === 'number' ? !Array.isArray(current) : !isRecord(current)) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return typeof current === 'string' ? current : undefined;
}

/** Every reference a body of `kind` holds, in document order, with its JSON path. */
export function referenceSlots(kind: ResourceKindDefinition, body: unknown): ReferenceSlot[] {
  return (kind.references?.(body) ?? []).flatMap((reference) => {
    const uri = stringAt(body, reference.path);
    return uri === undefined ? [] : [{ ...reference, uri }];
  });
}

/** A deep copy of `body` with the strings at the given paths replaced. */
export function rewriteAt(
  body: unknown,
  replacements: ReadonlyMap<string, string>,
  slots: readonly ReferenceSlot[],
): unknown {
  const copy = structuredClone(body);
  for (const slot of slots) {
    const replacement = replacements.get(slot.path.join('/'));
    if (replacement === undefined) continue;
    let holder = copy as Record<string | number, unknown>;
    for (const key of slot.path.slice(0, -1)) holder = holder[key] as Record<string | number, unknown>;
    holder[slot.path.at(-1)!] = replacement;
  }
  return copy;
}

/** `$.packageExtensions[0].config.uri` */
export function formatJsonPath(path: JsonPath): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}.${key}`), '$');
}
