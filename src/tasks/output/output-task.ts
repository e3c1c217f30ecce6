import type { ContextValue } from '../../runtime/memory.ts';
import { Type } from '@sinclair/typebox';
import { closed } from '../../resources/schemas/common.ts';
import { defineTask, stepUri, uriReferences, type TaskDefinition } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';

/**
 * `svc://ai.svc.output`: turns the step's actions into output items and quick replies, from an output set and
 * from outputs handed in through the context. Selection per action (reference §5.2): the entries whose
 * `timesOccurred` equals the number of earlier steps with that action, else those with the highest
 * `timesOccurred`; one alternative per `outputs` element, chosen at random.
 */

export interface OutputItem {
  readonly type: string;
  readonly [field: string]: unknown;
}

export interface QuickReply {
  readonly value: string;
  readonly expressions: string;
  readonly isDefault?: boolean;
}

interface OutputEntry {
  readonly action: string;
  readonly timesOccurred?: number;
  readonly outputs?: ReadonlyArray<{ readonly valueAlternatives: ReadonlyArray<string | OutputItem> }>;
  readonly quickReplies?: readonly QuickReply[];
}

interface OutputSet {
  readonly language?: string;
  readonly outputSet?: readonly OutputEntry[];
}

type Choose = (count: number) => number;
const randomChoice: Choose = (count) => Math.floor(Math.random() * count);

/** Entries of one action, grouped by `timesOccurred` (ascending). */
type ActionOutputs = ReadonlyArray<readonly [timesOccurred: number, entries: readonly OutputEntry[]]>;

function groupByAction(set: OutputSet): Map<string, ActionOutputs> {
  const byAction = new Map<string, Map<number, OutputEntry[]>>();
  for (const entry of set.outputSet ?? []) {
    const groups = byAction.get(entry.action) ?? new Map<number, OutputEntry[]>();
    const times = entry.timesOccurred ?? 0;
    groups.set(times, [...(groups.get(times) ?? []), entry]);
    byAction.set(entry.action, groups);
  }
  return new Map([...byAction].map(([action, groups]) => [action, [...groups].sort(([a], [b]) => a - b)]));
}

function select(outputs: ActionOutputs, occurrences: number): readonly OutputEntry[] {
  const exact = outputs.find(([times]) => times === occurrences);
  return exact ? exact[1] : outputs[outputs.length - 1]![1];
}

export function toOutputItem(alternative: string | OutputItem): OutputItem {
  if (typeof alternative === 'string') return { type: 'text', text: alternative, delay: 0 };
  if (alternative.type === 'text' && alternative.delay === undefined) return { ...alternative, delay: 0 };
  return alternative;
}

/** Renders one output entry for `action`: output items into the step and output, its quick replies likewise. */
/**
 * `alreadyRendered`: the texts were produced from data by an earlier task (HTTP-call output builders). They are
 * marked as templated, so that the templating task does not interpret text from an outside server as a template.
 */
function render(turn: Turn, action: string, entry: OutputEntry, choose: Choose, alreadyRendered = false): void {
  const outputs = entry.outputs ?? [];
  const quickReplies: QuickReply[] = [];
  outputs.forEach((output, index) => {
    const alternatives = output.valueAlternatives;
    if (alternatives.length === 0) return;
    const item = toOutputItem(alternatives[choose(alternatives.length)]!);
    if (item.type === 'quickReply') {
      quickReplies.push({ value: String(item.value ?? ''), expressions: String(item.expressions ?? '') });
      return;
    }
    const key = outputs.length > 1 ? `output:${item.type}:${action}:${index}` : `output:${item.type}:${action}`;
    turn.set(key, item, true);
    if (alreadyRendered) turn.set(`${key}:postTemplated`, item);
    turn.appendOutput('output', item);
  });
  for (const reply of entry.quickReplies ?? [])
    quickReplies.push({ value: reply.value, expressions: reply.expressions ?? '' });
  if (quickReplies.length > 0) {
    const key = `quickReplies:${action}`;
    const existing = turn.get(key);
    turn.set(key, [...(Array.isArray(existing) ? existing : []), ...quickReplies], true);
    turn.appendOutput('quickReplies', ...quickReplies);
  }
}

/** Outputs and quick replies supplied through the context (or by earlier tasks as `context:output*` data). */
function renderContextOutputs(turn: Turn, choose: Choose): void {
  // The message's context, then synthetic entries earlier tasks stored (HTTP-call builders); one per name.
  const entries = new Map(Object.entries(turn.context));
  for (const entry of turn.entriesWithPrefix('context:')) {
    const name = entry.key.slice('context:'.length);
    const value = entry.value as ContextValue | undefined;
    if ((name.startsWith('output') || name.startsWith('quickReplies')) && typeof value === 'object' && value !== null)
      entries.set(name, value);
  }
  for (const [name, value] of entries) {
    if (value.type !== 'object' && value.type !== 'array') continue;
    if (name.startsWith('output') && Array.isArray(value.value)) {
      const fromTask = turn.context[name] !== value;
      for (const entry of value.value as OutputEntry['outputs'] & object)
        render(turn, 'context', { action: 'context', outputs: [entry] }, choose, fromTask);
    } else if (name.startsWith('quickReplies') && Array.isArray(value.value)) {
      const suffix = name.slice('quickReplies'.length).replace(/^[:_-]/, '') || 'context';
      render(turn, suffix, { action: suffix, quickReplies: value.value as QuickReply[] }, choose);
    }
  }
}

const uri = Type.Optional(
  Type.String({
    description: 'Reference of the output set: svc://ai.svc.output/outputstore/outputsets/<id>?version=<n>.',
  }),
);
const UriOnly = closed(
  { uri },
  { description: 'The output set (optional: outputs may also come through the context).' },
);

/** `choose` picks one of `count` alternatives (tests pass a fixed choice). */
export function createOutputTask(choose: Choose = randomChoice): TaskDefinition<typeof UriOnly, typeof UriOnly> {
  return defineTask({
    type: 'ai.svc.output',
    configSchema: UriOnly,
    extensionsSchema: UriOnly,
    references: uriReferences('output'),
    async compile(config, extensions, context) {
      const reference = stepUri(config, extensions);
      const set = reference === undefined ? {} : ((await context.resolve(reference, 'output')) as OutputSet);
      const byAction = groupByAction(set);
      const language = set.language?.toLowerCase();
      return {
        type: 'ai.svc.output',
        execute(turn) {
          renderContextOutputs(turn, choose);
          if (language !== undefined && turn.language.toLowerCase() !== language) return;
          for (const action of turn.actions) {
            const outputs = byAction.get(action);
            if (!outputs) continue;
            for (const entry of select(outputs, turn.tallies.actions[action] ?? 0)) render(turn, action, entry, choose);
          }
        },
      };
    },
  });
}

export const outputTask = createOutputTask();
