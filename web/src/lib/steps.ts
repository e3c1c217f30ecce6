/**
 * A conversation step's detailed entries (`returnDetailed=true`: `{key, value, timestamp}`) grouped for people:
 * input, expressions, actions, properties, HTTP and LLM calls, output. Pure.
 */

export interface StepEntry {
  readonly key: string;
  readonly value: unknown;
  readonly timestamp?: number | string;
  readonly originWorkflowId?: string;
}

export interface StepGroup {
  readonly title: string;
  readonly entries: readonly StepEntry[];
}

const groups: readonly { title: string; test: (key: string) => boolean }[] = [
  { title: 'Input', test: (k) => k.startsWith('input') },
  { title: 'Expressions and intents', test: (k) => k.startsWith('expressions') || k.startsWith('intents') },
  { title: 'Rules', test: (k) => k.startsWith('behavior_rules') },
  { title: 'Actions', test: (k) => k === 'actions' || k.startsWith('actions') },
  {
    title: 'Properties',
    test: (k) => k.startsWith('properties') || k.startsWith('property') || k.startsWith('context'),
  },
  {
    title: 'HTTP calls',
    test: (k) => k.startsWith('httpCalls') || k.startsWith('httpcall') || k.startsWith('httpCall'),
  },
  { title: 'LLM calls', test: (k) => k.startsWith('llm') || k.startsWith('langchain') || k.startsWith('ai') },
  { title: 'Output', test: (k) => k.startsWith('output') || k.startsWith('quickReplies') },
];

export function groupStep(entries: readonly StepEntry[]): StepGroup[] {
  const out = new Map<string, StepEntry[]>();
  for (const entry of entries) {
    const title = groups.find((g) => g.test(entry.key))?.title ?? 'Other';
    const list = out.get(title) ?? [];
    list.push(entry);
    out.set(title, list);
  }
  const order = [...groups.map((g) => g.title), 'Other'];
  return order.filter((t) => out.has(t)).map((title) => ({ title, entries: out.get(title)! }));
}

/** A value as short text for a table cell. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(', ');
  return JSON.stringify(value, null, 2);
}
