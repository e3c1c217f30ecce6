import { kindOfHost, type KindName } from '../resources/schemas/common.ts';
import { isRecord } from '../shared/json.ts';

/**
 * Where configuration bodies (in the spec's names) hold references to other resources, and how to rewrite them.
 * Agents reference workflows; workflows reference the resources of their extensions (also parser dictionaries);
 * LLM configurations reference HTTP-call sets as tools.
 */

export type JsonPath = readonly (string | number)[];

export interface ReferenceSlot {
  readonly path: JsonPath;
  readonly uri: string;
}

/** A reference as an archive writes it: any id of 18+ hex digits or dashes (upstream PostgreSQL ids are UUIDs). */
export interface LooseReference {
  readonly kind: KindName;
  readonly id: string;
  readonly version: number;
}

const LOOSE_REFERENCE = /^svc:\/\/ai\.svc\.([A-Za-z][\w.-]*)\/(?:[\w.-]+\/)*([0-9A-Fa-f-]{18,})\?version=(\d+)$/;

export function parseLooseReference(uri: string): LooseReference | undefined {
  const match = LOOSE_REFERENCE.exec(uri);
  if (!match) return undefined;
  const kind = kindOfHost(match[1]!);
  const version = Number(match[3]);
  if (!kind || !Number.isSafeInteger(version) || version < 1) return undefined;
  return { kind, id: match[2]!, version };
}

function stringAt(value: unknown, path: JsonPath): string | undefined {
  let current = value;
  for (const key of path) {
    if (typeof key === 'number' ? !Array.isArray(current) : !isRecord(current)) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return typeof current === 'string' ? current : undefined;
}

function listLength(value: unknown, path: JsonPath): number {
  let current = value;
  for (const key of path) {
    if (!isRecord(current) && !Array.isArray(current)) return 0;
    current = (current as Record<string | number, unknown>)[key];
  }
  return Array.isArray(current) ? current.length : 0;
}

/** Every reference a body of `kind` holds, in document order, with its JSON path. */
export function referenceSlots(kind: string, body: unknown): ReferenceSlot[] {
  const paths: JsonPath[] = [];
  if (kind === 'agent') {
    for (let i = 0; i < listLength(body, ['packages']); i++) paths.push(['packages', i]);
  } else if (kind === 'workflow') {
    for (let i = 0; i < listLength(body, ['packageExtensions']); i++) {
      const extension = ['packageExtensions', i];
      paths.push([...extension, 'config', 'uri'], [...extension, 'extensions', 'uri']);
      for (const list of ['dictionaries', 'corrections', 'normalizer']) {
        const at = [...extension, 'extensions', list];
        for (let j = 0; j < listLength(body, at); j++) paths.push([...at, j, 'config', 'uri']);
      }
    }
  } else if (kind === 'llm') {
    for (let i = 0; i < listLength(body, ['tasks']); i++) {
      for (let j = 0; j < listLength(body, ['tasks', i, 'tools']); j++) paths.push(['tasks', i, 'tools', j]);
    }
  }
  return paths.flatMap((path) => {
    const uri = stringAt(body, path);
    return uri === undefined ? [] : [{ path, uri }];
  });
}

/** A deep copy of `body` with the strings at the given paths replaced. */
export function rewriteAt(body: unknown, replacements: ReadonlyMap<string, string>, slots: readonly ReferenceSlot[]): unknown {
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
