import { formatExpression, parseExpressions, type Expression } from '../../expressions/expressions.ts';
import { Type, type Static } from '@sinclair/typebox';
import { closed, fieldPath, indexPath, scalarMap } from '../../resources/schemas/common.ts';
import { parseExtensionType } from '../../resources/uri.ts';
import type { KindName, SemanticProblem } from '../../resources/kinds.ts';
import { defineTask, DeploymentError, type CompileContext } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import { readSubExtensions } from './config.ts';
import { compileCorrection } from './corrections.ts';
import {
  builtInDictionary,
  compileDictionary,
  isPlaceholder,
  RegularDictionary,
  type TokenDictionary,
} from './dictionaries.ts';
import { compileNormalizer } from './normalizers.ts';
import { Parser, type Match } from './parser.ts';

/**
 * `svc://ai.svc.parser`: turns the user's input into expressions (reference §3, DESIGN §4.9/§4.16).
 *
 * Writes `input:normalized`, `expressions:parsed` (canonical text, `", "`-joined), `intents` (public; distinct
 * names), `expressions:matches` (debug lines); in the conversation output `input` (the normalised input),
 * `expressions` and `intents` (appended per workflow). Blank input (conversation start) is left alone.
 */

const TYPE = 'ai.svc.parser';

const SubExtensionSchema = closed(
  {
    type: Type.String({
      description:
        "Type of a parser dictionary, correction or normalizer, e.g. 'svc://ai.svc.parser.dictionaries.regular'.",
    }),
    config: Type.Optional(
      scalarMap('Configuration of the dictionary, correction or normalizer.', {
        uri: Type.String({ description: 'Regular dictionary: reference of the dictionary.' }),
        distance: Type.Integer({ minimum: 1, description: 'Levenshtein: largest edit distance (default 2).' }),
        maxCandidates: Type.Integer({ minimum: 1, description: 'Levenshtein: candidates kept (default 5).' }),
        lookupIfKnown: Type.Boolean({ description: 'Corrections: also correct tokens that are already known.' }),
        language: Type.String({ description: "Stemming: language ('english', 'german', ... or 'en', 'de', ...)." }),
        removePunctuation: Type.Boolean({
          description: 'Punctuation normalizer: remove punctuation instead of spacing it out.',
        }),
        punctuationRegexPattern: Type.String({ description: 'Punctuation normalizer: the punctuation characters.' }),
        allowedCharacters: Type.String({
          description: "Special-character normalizer: characters kept (default '!?:;.,').",
        }),
      }),
    ),
  },
  { description: 'A parser dictionary, correction or normalizer.' },
);

export const ParserConfigSchema = closed(
  {
    appendExpressions: Type.Optional(
      Type.Boolean({ description: 'Merge with expressions already parsed in this step (default true).' }),
    ),
    includeUnused: Type.Optional(Type.Boolean({ description: "Keep 'unused(...)' expressions (default true)." })),
    includeUnknown: Type.Optional(Type.Boolean({ description: "Keep 'unknown(...)' expressions (default true)." })),
    maxInputTokens: Type.Optional(Type.Integer({ minimum: 1, description: 'Tokens parsed at most (default 200).' })),
    // Accepted for compatibility; only the first solution is ever built, so there is nothing to bound.
    maxSuggestions: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Alternative combinations tried at most (accepted, not needed).' }),
    ),
    maxSolutions: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Solutions kept at most (accepted, not needed).' }),
    ),
  },
  { description: 'Parser settings.' },
);

const SUB_EXTENSION_LISTS = ['dictionaries', 'corrections', 'normalizer'] as const;

export const ParserExtensionsSchema = closed(
  {
    dictionaries: Type.Optional(Type.Array(SubExtensionSchema, { description: 'Dictionaries, consulted in order.' })),
    corrections: Type.Optional(Type.Array(SubExtensionSchema, { description: 'Corrections, tried in order.' })),
    normalizer: Type.Optional(Type.Array(SubExtensionSchema, { description: 'Input normalizers, run in order.' })),
  },
  { description: "The parser's dictionaries, corrections and normalizers." },
);
export type ParserConfig = Static<typeof ParserConfigSchema>;
export type ParserExtensions = Static<typeof ParserExtensionsSchema>;

export interface ParserSettings {
  readonly appendExpressions: boolean;
  readonly includeUnused: boolean;
  readonly includeUnknown: boolean;
}

/** Compiles a parser extension (`config`, `extensions`) into a parser and its settings. */
export async function compileParser(
  config: ParserConfig,
  extensions: ParserExtensions,
  resolve: CompileContext['resolve'],
): Promise<{ parser: Parser; settings: ParserSettings }> {
  const settings: ParserSettings = {
    appendExpressions: config.appendExpressions ?? true,
    includeUnused: config.includeUnused ?? true,
    includeUnknown: config.includeUnknown ?? true,
  };
  const maxInputTokens = config.maxInputTokens ?? 200;

  const normalizers = readSubExtensions(extensions.normalizer, 'normalizer').map(compileNormalizer);
  const dictionaries: TokenDictionary[] = [];
  const cache = new Map<string, Promise<RegularDictionary>>();
  for (const extension of readSubExtensions(extensions.dictionaries, 'dictionaries')) {
    if (extension.kind === 'dictionaries.regular') {
      const uri = extension.config.uri;
      if (typeof uri !== 'string' || uri.trim() === '')
        throw new DeploymentError(`${extension.where}: 'config.uri' naming the dictionary is required.`);
      // The same dictionary listed twice is compiled once (its phrases keep one rank).
      let compiled = cache.get(uri);
      if (compiled === undefined) {
        compiled = resolve(uri, 'dictionary').then((stored) => compileDictionary(stored, uri));
        cache.set(uri, compiled);
      }
      const dictionary = await compiled;
      if (!dictionaries.includes(dictionary)) dictionaries.push(dictionary);
      continue;
    }
    const builtIn = builtInDictionary(extension.kind);
    if (builtIn === undefined)
      throw new DeploymentError(`${extension.where}: unknown dictionary type '${extension.type}'.`);
    dictionaries.push(builtIn);
  }
  const regular = dictionaries.filter((dictionary) => dictionary instanceof RegularDictionary);
  const corrections = readSubExtensions(extensions.corrections, 'corrections').map((extension) =>
    compileCorrection(extension, regular),
  );
  return { parser: new Parser({ normalizers, dictionaries, corrections, maxInputTokens }), settings };
}

function parseLeniently(text: unknown): Expression[] {
  if (typeof text !== 'string') return [];
  try {
    return parseExpressions(text);
  } catch {
    return [];
  }
}

const describe = (match: Match) =>
  `"${match.text}" → ${match.expressions.map(formatExpression).join(', ')}${match.tag}`;

/** Stores the parse result in the turn (reference §3.6). */
export function storeResult(turn: Turn, matches: readonly Match[], settings: ParserSettings): void {
  const parsed: Expression[] = [];
  const details: string[] = [];
  for (const match of matches) {
    for (const expression of match.expressions) {
      if (expression.name === 'unused' && !settings.includeUnused) continue;
      if (expression.name === 'unknown' && !settings.includeUnknown) continue;
      parsed.push(expression);
    }
    if (!match.expressions.every(isPlaceholder)) details.push(describe(match));
  }
  if (parsed.length === 0) return;

  let texts = parsed.map(formatExpression);
  let expressions = parsed;
  let matchLines = details;
  if (settings.appendExpressions && turn.has('expressions:parsed')) {
    const earlier = parseLeniently(turn.get('expressions:parsed'));
    const seen = new Set<string>();
    const merged: Expression[] = [];
    const mergedTexts: string[] = [];
    [...earlier, ...parsed].forEach((expression) => {
      const text = formatExpression(expression);
      if (seen.has(text)) return;
      seen.add(text);
      merged.push(expression);
      mergedTexts.push(text);
    });
    expressions = merged;
    texts = mergedTexts;
    const earlierLines = turn.get('expressions:matches');
    matchLines = [...(Array.isArray(earlierLines) ? (earlierLines as string[]) : []), ...details];
  }

  const text = texts.join(', ');
  turn.set('expressions:parsed', text);
  turn.setOutput('expressions', text);
  const intents = [...new Set(expressions.map((expression) => expression.name))];
  turn.set('intents', intents, true);
  const shown = turn.output.intents;
  const known = new Set(Array.isArray(shown) ? shown : []);
  const added = intents.filter((intent) => !known.has(intent));
  if (added.length > 0) turn.appendOutput('intents', ...added);
  if (matchLines.length > 0) turn.set('expressions:matches', matchLines);
}

/** Sub-extension types must have the form `svc://ai.svc.<name>` (older spellings are translated on input). */
function checkSubExtensionTypes(extensions: ParserExtensions, path: string): SemanticProblem[] {
  return SUB_EXTENSION_LISTS.flatMap((list) =>
    (extensions[list] ?? []).flatMap((sub, i) => {
      const at = fieldPath(indexPath(fieldPath(path, list), i), 'type');
      return parseExtensionType(sub.type) === undefined
        ? [{ path: at, message: `The extension type '${sub.type}' at ${at} is not of the form svc://ai.svc.<name>.` }]
        : [];
    }),
  );
}

const subExtensionUri = (list: string, kind?: KindName) => ({
  path: ['extensions', list, '*', 'config', 'uri'],
  ...(kind ? { kind } : {}),
});

export const parserTask = defineTask({
  type: TYPE,
  configSchema: ParserConfigSchema,
  extensionsSchema: ParserExtensionsSchema,
  references: [
    subExtensionUri('dictionaries', 'dictionary'),
    subExtensionUri('corrections'),
    subExtensionUri('normalizer'),
  ],
  checkStep: (_config, extensions, path) => checkSubExtensionTypes(extensions, fieldPath(path, 'extensions')),
  async compile(config, extensions, context) {
    const { parser, settings } = await compileParser(config, extensions, context.resolve);
    return {
      type: TYPE,
      execute(turn) {
        if (typeof turn.input !== 'string' || turn.input.trim() === '') return;
        const normalized = parser.normalize(turn.input);
        if (normalized === '') return;
        turn.set('input:normalized', normalized);
        turn.setOutput('input', normalized);
        const quickReplies = turn.previousSteps.at(-1)?.output.quickReplies;
        const matches = parser.parse(normalized, turn.language, quickReplies);
        storeResult(turn, matches, settings);
      },
    };
  },
});
