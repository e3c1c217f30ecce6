/**
 * React keys for a list whose items have a natural key that may repeat (an agent's workflows, a workflow's
 * extensions): the natural key, then `#2`, `#3`… for its later occurrences. A key stays with its item when other
 * items are added or removed, unlike the item's index. Pure.
 */
export function keyed<T>(items: readonly T[], naturalKey: (item: T) => string): { key: string; item: T }[] {
  const seen = new Map<string, number>();
  return items.map((item) => {
    const key = naturalKey(item);
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    return { key: count === 1 ? key : `${key}#${count}`, item };
  });
}
