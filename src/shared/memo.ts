import { LRUCache } from 'lru-cache';

/**
 * A bounded memo of a pure function of a string: results are kept for at most `max` keys, the least recently
 * used going first. Keys `cacheable` refuses (say, very long ones) are computed on every call.
 */
export function memoize<T>(
  compute: (key: string) => T,
  options: { max: number; cacheable?: (key: string) => boolean },
): (key: string) => T {
  // Boxed, so that undefined and null results are kept too.
  const results = new LRUCache<string, { readonly value: T }>({ max: options.max });
  return (key) => {
    const known = results.get(key);
    if (known !== undefined) return known.value;
    const value = compute(key);
    if (options.cacheable?.(key) ?? true) results.set(key, { value });
    return value;
  };
}

/**
 * Memos of many small functions sharing one bounded cache: an LRUCache allocates its whole capacity when it is
 * made, so one per compiled rule condition (hundreds per agent) would cost megabytes each. `memo(compute)` gives
 * a memoised `compute`; every memo of the group competes for the same `max` entries.
 */
export function memoGroup(max: number): <T>(compute: (key: string) => T) => (key: string) => T {
  const results = new LRUCache<string, { readonly value: unknown }>({ max });
  let nextMemo = 0;
  return <T>(compute: (key: string) => T) => {
    const prefix = `${(nextMemo++).toString(36)}\u0000`;
    return (key: string): T => {
      const cacheKey = prefix + key;
      const known = results.get(cacheKey);
      if (known !== undefined) return known.value as T;
      const value = compute(key);
      results.set(cacheKey, { value });
      return value;
    };
  };
}
