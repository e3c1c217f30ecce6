/**
 * Every text the manager shows lives in a message table (English: `en.ts`); screens ask for it by key with `t()`.
 * A translation is another table with the same keys (the type makes a missing key a compile error).
 */
import { en, type Messages } from './en.ts';

export type MessageKey = keyof Messages;

const table: Messages = en;

/**
 * The message of `key`, with each `{name}` replaced by `params.name`: a value given as undefined or null shows as
 * nothing (as React shows it); a name not given at all stays visible, so a forgotten value is noticed.
 */
export function t(key: MessageKey, params: Readonly<Record<string, string | number | undefined | null>> = {}): string {
  return table[key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name] ?? '') : whole,
  );
}

/** "1 step" / "3 steps": the key's `one` and `other` messages by count. */
export function plural(count: number, one: MessageKey, other: MessageKey): string {
  return t(count === 1 ? one : other, { count });
}
