import { formatExpression, parseExpressions, type Expression } from '../../expressions/expressions.ts';
import { DeploymentError, type CompiledTask, type LifecycleTask } from '../../runtime/tasks.ts';
import type { Turn } from '../../runtime/turn.ts';
import { readBoolean, readInteger, readSubExtensions, type ConfigMap } from './config.ts';
import { compileCorrection } from './corrections.ts';
import { builtInDictionary, compileDictionary, isPlaceholder, RegularDictionary, type TokenDictionary } from './dictionaries.ts';
import { compileNormalizer } from './normalizers.ts';
import { Parser, type Match } from './parser.ts';
import { isRecord } from '../../shared/json.ts';

/**
 * `svc://ai.svc.parser`: turns the user's input into expressions (reference §3, DESIGN §4.9/§4.16).
 *
 * Writes `input:normalized`, `expressions:parsed` (canonical text, `", "`-joined), `intents` (public; distinct
 * names), `expressions:matches` (debug lines); in the conversation output `input` (the normalised input),
 * `expressions` and `intents` (appended per workflow). Blank input (conversation start) is left alone.
 */

const TYPE = 'ai.svc.parser';
const WHERE = "The parser's config";

export interface ParserSettings {
  readonly appendExpressions: boolean;
  readonly includeUnused: boolean;
  readonly includeUnknown: boolean;
}

/** Compiles a parser extension (`config`, `extensions`) into a parser and its settings. */
export async function compileParser(
  config: ConfigMap,
  extensions: ConfigMap,
  resolve: (reference: string, kind: string) => Promise<unknown>,
): Promise<{ parser: Parser; settings: ParserSettings }> {
  const settings: ParserSettings = {
    appendExpressions: readBoolean(config, 'appendExpressions', true, WHERE),
    includeUnused: readBoolean(config, 'includeUnused', true, WHERE),
    includeUnknown: readBoolean(config, 'includeUnknown', true, WHERE),
  };
  const maxInputTokens = readInteger(config, 'maxInputTokens', 200, 1, WHERE);
  // Accepted for compatibility; only the first solution is ever built, so there is nothing to bound.
  readInteger(config, 'maxSuggestions', 1000, 1, WHERE);
  readInteger(config, 'maxSolutions', 100, 1, WHERE);

  const normalizers = readSubExtensions(extensions, 'normalizer').map(compileNormalizer);
  const dictionaries: TokenDictionary[] = [];
  const cache = new Map<string, Promise<RegularDictionary>>();
  for (const extension of readSubExtensions(extensions, 'dictionaries')) {
    if (extension.kind === 'dictionaries.regular') {
      const uri = extension.config['uri'];
      if (typeof uri !== 'string' || uri.trim() === '') throw new DeploymentError(`${extension.where}: 'config.uri' naming the dictionary is required.`);
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
    if (builtIn === undefined) throw new DeploymentError(`${extension.where}: unknown dictionary type '${extension.type}'.`);
    dictionaries.push(builtIn);
  }
  const regular = dictionaries.filter((dictionary) => dictionary instanceof RegularDictionary);
  const corrections = readSubExtensions(extensions, 'corrections').map((extension) => compileCorrection(extension, regular));
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

const describe = (match: Match) => `"${match.text}" → ${match.expressions.map(formatExpression).join(', ')}${match.tag}`;

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
  const shown = turn.output['intents'];
  const known = new Set(Array.isArray(shown) ? shown : []);
  const added = intents.filter((intent) => !known.has(intent));
  if (added.length > 0) turn.appendOutput('intents', ...added);
  if (matchLines.length > 0) turn.set('expressions:matches', matchLines);
}

export function createParserTask(): LifecycleTask {
  return {
    type: TYPE,
    async compile(extension, context): Promise<CompiledTask> {
      const config = isRecord(extension.config) ? extension.config : {};
      const extensions = isRecord(extension.extensions) ? extension.extensions : {};
      const { parser, settings } = await compileParser(config, extensions, (reference, kind) => context.resolve(reference, kind));
      return {
        type: TYPE,
        execute(turn) {
          if (typeof turn.input !== 'string' || turn.input.trim() === '') return;
          const normalized = parser.normalize(turn.input);
          if (normalized === '') return;
          turn.set('input:normalized', normalized);
          turn.setOutput('input', normalized);
          const lang = turn.properties.get('lang')?.value;
          const quickReplies = turn.previousSteps.at(-1)?.output['quickReplies'];
          const matches = parser.parse(normalized, typeof lang === 'string' ? lang : undefined, quickReplies);
          storeResult(turn, matches, settings);
        },
      };
    },
  };
}
