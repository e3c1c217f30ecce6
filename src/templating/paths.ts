import { isRecord } from '../shared/json.ts';
import { memoize } from '../shared/memo.ts';

/**
 * Dot paths into the template data model: `memory.current.input`, `properties.profile.name`,
 * `memory.current.httpCalls.weather.list[0].name`. Only own properties of plain data are followed (never the
 * prototype chain), so a path can reach configuration data and nothing else.
 */
export type PathSegment = string | number;

export class PathSyntaxError extends Error {}

/** Parses a dot path (cached: paths come from configuration and are few). */
export const parsePath = memoize(parseUncached, { max: 10_000 });

function parseUncached(path: string): readonly PathSegment[] {
  const segments: PathSegment[] = [];
  const pattern = /([^.[\]]+)|\[(\d+)\]|(\.)/gy;
  let expectName = true;
  let match: RegExpExecArray | null;
  let consumed = 0;
  while ((match = pattern.exec(path)) !== null) {
    consumed = pattern.lastIndex;
    if (match[1] !== undefined) {
      if (!expectName) throw new PathSyntaxError(`unexpected '${match[1]}' in path '${path}'`);
      segments.push(match[1].trim());
      expectName = false;
    } else if (match[2] !== undefined) {
      if (expectName) throw new PathSyntaxError(`index without a name in path '${path}'`);
      segments.push(Number(match[2]));
    } else {
      if (expectName) throw new PathSyntaxError(`empty segment in path '${path}'`);
      expectName = true;
    }
  }
  if (consumed !== path.length || expectName || segments.length === 0)
    throw new PathSyntaxError(`malformed path '${path}'`);
  return segments;
}

/** The value at `path`, or undefined when any step of it is missing. */
export function resolvePath(data: unknown, path: string | readonly PathSegment[]): unknown {
  const segments = typeof path === 'string' ? parsePath(path) : path;
  let current: unknown = data;
  for (const segment of segments) {
    current = child(current, segment);
    if (current === undefined) return undefined;
  }
  return current;
}

/** One step down: a list index, or an own property of an object. */
export function child(value: unknown, segment: PathSegment): unknown {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    const index = typeof segment === 'number' ? segment : /^\d+$/.test(segment) ? Number(segment) : NaN;
    return Number.isInteger(index) ? value[index] : undefined;
  }
  if (typeof value !== 'object') return undefined;
  const key = String(segment);
  return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

/** Sets `value` at `segments` of `root`, copying every container on the way so that no shared data changes. */
export function setPath(root: Record<string, unknown>, segments: readonly PathSegment[], value: unknown): void {
  let parent: Record<string | number, unknown> | unknown[] = root;
  segments.forEach((segment, index) => {
    let next: unknown = value;
    if (index < segments.length - 1) {
      const existing = child(parent, segment);
      if (Array.isArray(existing)) next = existing.slice();
      else if (isRecord(existing)) next = Object.defineProperties({}, Object.getOwnPropertyDescriptors(existing));
      else next = typeof segments[index + 1] === 'number' ? [] : {};
    }
    if (Array.isArray(parent) && typeof segment === 'number') parent[segment] = next;
    else
      Object.defineProperty(parent, String(segment), {
        value: next,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    parent = next as Record<string, unknown>;
  });
}
