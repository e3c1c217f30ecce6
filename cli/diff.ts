import { formatJsonPath } from '../src/backup/references.ts';
import { canonicalJson, isRecord } from '../src/shared/json.ts';
import type { JsonPath } from './archive.ts';

/** One changed field: `before` absent = added, `after` absent = removed. */
export interface FieldChange {
  readonly path: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/** The fields that differ between two JSON values, deepest first differing field per branch, in document order. */
export function diffJson(before: unknown, after: unknown, path: JsonPath = []): FieldChange[] {
  if (same(before, after)) return [];
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) => {
      const at = [...path, key];
      if (!(key in before)) return [{ path: formatJsonPath(at), after: after[key] }];
      if (!(key in after)) return [{ path: formatJsonPath(at), before: before[key] }];
      return diffJson(before[key], after[key], at);
    });
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const changes: FieldChange[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      const at = [...path, i];
      if (i >= before.length) changes.push({ path: formatJsonPath(at), after: after[i] });
      else if (i >= after.length) changes.push({ path: formatJsonPath(at), before: before[i] });
      else changes.push(...diffJson(before[i], after[i], at));
    }
    return changes;
  }
  return [{ path: formatJsonPath(path), before, after }];
}

/** The same changes with the values at secret paths (and below them) replaced by `(secret)`. */
export function maskSecrets(changes: readonly FieldChange[], secretPaths: ReadonlySet<string>): FieldChange[] {
  const inside = (inner: string, outer: string) =>
    inner === outer || inner.startsWith(`${outer}.`) || inner.startsWith(`${outer}[`);
  // A change at or below a secret, or holding one below it.
  const isSecret = (path: string) => [...secretPaths].some((secret) => inside(path, secret) || inside(secret, path));
  const mask = (value: unknown) => (value === undefined ? undefined : '(secret)');
  return changes.map((change) =>
    isSecret(change.path)
      ? {
          path: change.path,
          ...('before' in change ? { before: mask(change.before) } : {}),
          ...('after' in change ? { after: mask(change.after) } : {}),
        }
      : change,
  );
}
