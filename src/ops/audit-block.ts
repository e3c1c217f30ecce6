import { isRecord } from '../shared/json.ts';
import type { AuditEntry } from './audit-entry.ts';

/**
 * How the ledger stores a block: the consecutive entries of one conversation written together (a turn's, one per
 * task), as one JSON document.
 *
 * A turn's entries repeat most of what they hold: the conversation, agent, user, environment, step, workflow,
 * timestamp, outcome and user input are the same in each, the actions a task found are those the task before left,
 * the sequence counts up and each entry's `previousHmac` is the `hmac` of the one before. So the block keeps its
 * first entry whole and every later one as the members that differ from what follows from the entry before it
 * (`{"deltas":[first, …]}`): a rule-only turn's four entries take ~1.9 KB instead of ~3.2 KB, written and
 * serialised once per turn. Reading a block gives back each entry exactly as it was given (the same members and
 * values), so signatures made over the whole entries verify as before.
 *
 * A block whose entries do not share their members (an entry with a member another lacks, or an `input` of another
 * shape, e.g. a turn and a human decision in one block) is kept as a plain JSON array of its entries: the form both
 * stores kept before (PostgreSQL's rows of one entry became such arrays), which reading accepts as well.
 */

/** The JSON document of a block of `entries` (consecutive entries of one conversation, in sequence order). */
export function blockDocument(block: readonly AuditEntry[]): string {
  const entries = block as unknown as readonly Entry[];
  const deltas: object[] = [entries[0]!];
  for (let index = 1; index < entries.length; index++) {
    const delta = deltaOf(entries[index - 1]!, entries[index]!);
    if (delta === undefined) return JSON.stringify(block);
    deltas.push(delta);
  }
  return JSON.stringify({ deltas });
}

/**
 * The entries of a stored block document, in sequence order. Text that is no block (changed behind the service)
 * is answered as one unreadable entry: its text, for verification to report.
 */
export function entriesOfBlock(document: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(document);
  } catch {
    return [document];
  }
  if (Array.isArray(parsed)) return parsed;
  if (!isRecord(parsed) || !Array.isArray(parsed.deltas)) return [parsed];
  const entries: Record<string, unknown>[] = [];
  for (const delta of parsed.deltas as unknown[]) {
    const previous = entries.at(-1);
    if (!isRecord(delta)) entries.push({ unreadable: delta });
    else entries.push(previous === undefined ? delta : applied(previous, delta));
  }
  return entries;
}

type Entry = Readonly<Record<string, unknown>>;

/** What `key` of an entry holds where it says nothing: the value `previous` holds, one further along the chain. */
function predicted(previous: Entry, key: string): unknown {
  if (key === 'sequence') return typeof previous.sequence === 'number' ? previous.sequence + 1 : previous.sequence;
  if (key === 'previousHmac') return previous.hmac;
  return previous[key];
}

/** What member `key` of an entry's `input` holds where it says nothing: the actions the entry before left. */
function predictedInput(previous: Entry, previousInput: Entry, key: string): unknown {
  return key === 'actions' ? previous.actions : previousInput[key];
}

/** The members of `entry` that differ from what follows from `previous`; undefined when their members differ. */
function deltaOf(previous: Entry, entry: Entry): Record<string, unknown> | undefined {
  if (!sameMembers(previous, entry)) return undefined;
  const delta: Record<string, unknown> = {};
  for (const key in entry) {
    const value = entry[key];
    if (value === undefined) continue;
    const previousInput = previous.input;
    if (key === 'input' && isRecord(value) && isRecord(previousInput)) {
      if (!sameMembers(previousInput, value)) return undefined;
      let inputDelta: Record<string, unknown> | undefined;
      for (const member in value) {
        const memberValue = value[member];
        if (memberValue === undefined || sameJson(memberValue, predictedInput(previous, previousInput, member)))
          continue;
        (inputDelta ??= {})[member] = memberValue;
      }
      if (inputDelta !== undefined) delta.input = inputDelta;
    } else if (!sameJson(value, predicted(previous, key))) {
      delta[key] = value;
    }
  }
  return delta;
}

function applied(previous: Entry, delta: Entry): Record<string, unknown> {
  const entry: Record<string, unknown> = {};
  const previousInput = previous.input;
  for (const key in previous) {
    if (previous[key] === undefined) continue;
    const value = delta[key];
    if (key === 'input' && isRecord(previousInput) && (value === undefined || isRecord(value))) {
      const input: Record<string, unknown> = {};
      for (const member in previousInput)
        input[member] =
          value !== undefined && member in value ? value[member] : predictedInput(previous, previousInput, member);
      entry.input = input;
    } else entry[key] = value === undefined ? predicted(previous, key) : value;
  }
  for (const key in delta) if (!(key in entry)) entry[key] = delta[key];
  return entry;
}

/** Whether both hold the same members with a value (JSON drops those without one). */
function sameMembers(a: Entry, b: Entry): boolean {
  let count = 0;
  for (const key in a) {
    if (a[key] === undefined) continue;
    if (b[key] === undefined) return false;
    count++;
  }
  for (const key in b) if (b[key] !== undefined) count--;
  return count === 0;
}

/** Whether `a` and `b` have the same JSON text (members compared whatever their order). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!sameJson(a[index] ?? null, b[index] ?? null)) return false;
    return true;
  }
  if (Array.isArray(b) || !sameMembers(a as Entry, b as Entry)) return false;
  for (const key in a) {
    const value = (a as Entry)[key];
    if (value !== undefined && !sameJson(value, (b as Entry)[key])) return false;
  }
  return true;
}
