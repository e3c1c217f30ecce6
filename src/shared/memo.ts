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
