import type { Property, StoredStep } from '../../src/runtime/memory.ts';
import type { CompiledTask } from '../../src/runtime/tasks.ts';
import type { Turn } from '../../src/runtime/turn.ts';
import { parserTask } from '../../src/tasks/parser/parser-task.ts';
import { compileStep } from './tasks.ts';
import { testTurn } from './turns.ts';

/** Helpers shared by the parser's unit tests. */

export const DICTIONARY_URI =
  'svc://ai.svc.regulardictionary/regulardictionarystore/regulardictionaries/0123456789abcdef01234567?version=1';

/** The dictionary of the upstream integration test (reference §3.6 and Appendix C.1). */
export const basicDictionary = {
  words: [
    { word: 'hello', expressions: 'greeting(hello)' },
    { word: 'hi', expressions: 'greeting(hi)' },
    { word: 'bye', expressions: 'goodbye(bye)' },
    { word: 'question', expressions: 'two_options_question(question)' },
    { word: 'property', expressions: 'property(someMeaning(someValue))' },
  ],
  phrases: [
    { phrase: 'good afternoon', expressions: 'greeting(good_afternoon)' },
    { phrase: 'see you', expressions: 'goodbye(see_you)' },
  ],
};

export const regular = (uri = DICTIONARY_URI) => ({
  type: 'svc://ai.svc.parser.dictionaries.regular',
  config: { uri },
});
export const builtIn = (name: string) => ({ type: `svc://ai.svc.parser.dictionaries.${name}` });
export const correction = (name: string, config: Record<string, unknown> = {}) => ({
  type: `svc://ai.svc.parser.corrections.${name}`,
  config,
});
export const normalizer = (name: string, config: Record<string, unknown> = {}) => ({
  type: `svc://ai.svc.parser.normalizers.${name}`,
  config,
});

/** Compiles a parser task; `dictionaries` maps references to stored dictionaries (default: the basic one). */
export async function compileTask(
  extensions: Record<string, unknown>,
  config: Record<string, unknown> = {},
  dictionaries: Record<string, unknown> = { [DICTIONARY_URI]: basicDictionary },
): Promise<CompiledTask> {
  return compileStep(parserTask, { config, extensions }, async (reference) => {
    if (!(reference in dictionaries)) throw new Error(`no dictionary ${reference}`);
    return dictionaries[reference];
  });
}

export function makeTurn(input: string, options: { lang?: string; quickReplies?: unknown[] } = {}): Turn {
  const previous: StoredStep[] =
    options.quickReplies === undefined
      ? []
      : [{ entries: [], output: { quickReplies: options.quickReplies }, timestamp: 0, properties: {} }];
  const properties: Record<string, Property> =
    options.lang === undefined ? {} : { lang: { name: 'lang', value: options.lang, scope: 'longTerm' } };
  const turn = testTurn({ input, steps: previous, properties });
  turn.setOutput('input', input);
  return turn;
}

/** Runs the task on `input` and returns what it stored as `expressions:parsed` (undefined when nothing). */
export async function parse(
  task: CompiledTask,
  input: string,
  options: { lang?: string; quickReplies?: unknown[] } = {},
): Promise<string | undefined> {
  const turn = makeTurn(input, options);
  await task.execute(turn);
  return turn.get('expressions:parsed') as string | undefined;
}
