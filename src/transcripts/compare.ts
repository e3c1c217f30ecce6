import { isDeepStrictEqual } from 'node:util';
import type { Expectation } from '../resources/schemas/transcript.ts';
import { isRecord } from '../shared/json.ts';

/**
 * Compares one field of a replayed step with its expectation (every comparison but `judge`, which needs a model:
 * `judge.ts`) and, when they differ, says how in a few readable lines.
 */

export interface FieldVerdict {
  readonly passed: boolean;
  /** How expected and actual differ (absent when they agree). */
  readonly diff?: string;
}

export function compareField(expectation: Expectation, actual: unknown): FieldVerdict {
  const expected = expectation.value;
  switch (expectation.compare ?? 'exact') {
    case 'ignore':
      return { passed: true };
    case 'regex': {
      const text = asText(actual);
      return new RegExp(String(expected), 'u').test(text)
        ? { passed: true }
        : { passed: false, diff: `expected to match /${String(expected)}/\n  actual: ${show(actual)}` };
    }
    case 'contains':
      return contains(actual, expected)
        ? { passed: true }
        : { passed: false, diff: `expected to contain ${show(expected)}\n  actual: ${show(actual)}` };
    case 'tolerance': {
      const value = Number(Array.isArray(actual) && actual.length === 1 ? actual[0] : actual);
      const tolerance = expectation.tolerance ?? 0;
      return Number.isFinite(value) && Math.abs(value - Number(expected)) <= tolerance
        ? { passed: true }
        : { passed: false, diff: `expected ${show(expected)} ± ${tolerance}\n  actual: ${show(actual)}` };
    }
    case 'subset':
      return isSubset(expected, actual)
        ? { passed: true }
        : { passed: false, diff: `expected to include ${show(expected)}\n  actual: ${show(actual)}` };
    case 'judge':
      throw new Error('judge comparisons are made by the judge model');
    default:
      return isDeepStrictEqual(normalize(expected), normalize(actual))
        ? { passed: true }
        : { passed: false, diff: exactDiff(expected, actual) };
  }
}

/** Lists and values as JSON gives them back (no undefined members), so stored and fresh values compare equal. */
function normalize(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/** The text a pattern or a judge reads: a list's texts one per line, other JSON as JSON. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join('\n');
  return JSON.stringify(value);
}

function show(value: unknown): string {
  return value === undefined ? '(nothing)' : JSON.stringify(value);
}

function contains(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(actual)) {
    const wanted = Array.isArray(expected) ? expected : [expected];
    return wanted.every((item) =>
      actual.some((element) =>
        typeof item === 'string' && typeof element === 'string' ? element.includes(item) : isSubset(item, element),
      ),
    );
  }
  return asText(actual).includes(asText(expected));
}

/** Every field of `expected` (at every depth) is in `actual` with the same value; every list element is found. */
export function isSubset(expected: unknown, actual: unknown): boolean {
  if (Array.isArray(expected))
    return Array.isArray(actual) && expected.every((item) => actual.some((element) => isSubset(item, element)));
  if (isRecord(expected))
    return (
      isRecord(actual) &&
      Object.entries(expected).every(([key, value]) => Object.hasOwn(actual, key) && isSubset(value, actual[key]))
    );
  return isDeepStrictEqual(expected, actual);
}

/** Lists line by line (`-` expected only, `+` actual only), anything else as expected / actual. */
function exactDiff(expected: unknown, actual: unknown): string {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const lines: string[] = [];
    const length = Math.max(expected.length, actual.length);
    for (let i = 0; i < length; i++) {
      if (i < expected.length && i < actual.length && isDeepStrictEqual(normalize(expected[i]), normalize(actual[i])))
        lines.push(`  [${i}] ${show(expected[i])}`);
      else {
        if (i < expected.length) lines.push(`- [${i}] ${show(expected[i])}`);
        if (i < actual.length) lines.push(`+ [${i}] ${show(actual[i])}`);
      }
    }
    return lines.join('\n');
  }
  return `- ${show(expected)}\n+ ${show(actual)}`;
}
