/**
 * A conversation step's detailed entries (`returnDetailed=true`: `{key, value, timestamp}`) grouped for people:
 * the failure (when the turn failed), input, expressions, actions, properties, HTTP and LLM calls, output. Pure.
 */
import { t } from '../i18n/index.ts';

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
  // Why the turn failed (`TURN_ERROR_KEY` of the pipeline): first, it is what someone opening a failed step wants.
  { title: t('steps.failure'), test: (k) => k === 'error' },
  { title: t('steps.input'), test: (k) => k.startsWith('input') },
  { title: t('steps.expressions'), test: (k) => k.startsWith('expressions') || k.startsWith('intents') },
  { title: t('steps.rules'), test: (k) => k.startsWith('behavior_rules') },
  { title: t('steps.actions'), test: (k) => k === 'actions' || k.startsWith('actions') },
  {
    title: t('steps.properties'),
    test: (k) => k.startsWith('properties') || k.startsWith('property') || k.startsWith('context'),
  },
  {
    title: t('steps.httpCalls'),
    test: (k) => k.startsWith('httpCalls') || k.startsWith('httpcall') || k.startsWith('httpCall'),
  },
  { title: t('steps.llmCalls'), test: (k) => k.startsWith('llm') || k.startsWith('langchain') || k.startsWith('ai') },
  { title: t('steps.output'), test: (k) => k.startsWith('output') || k.startsWith('quickReplies') },
];

export function groupStep(entries: readonly StepEntry[]): StepGroup[] {
  const out = new Map<string, StepEntry[]>();
  for (const entry of entries) {
    const title = groups.find((g) => g.test(entry.key))?.title ?? t('steps.other');
    const list = out.get(title) ?? [];
    list.push(entry);
    out.set(title, list);
  }
  const order = [...groups.map((g) => g.title), t('steps.other')];
  return order.filter((t) => out.has(t)).map((title) => ({ title, entries: out.get(title)! }));
}

/** A value as short text for a table cell. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(', ');
  return JSON.stringify(value, null, 2);
}
