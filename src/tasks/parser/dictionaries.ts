import { ExpressionSyntaxError, parseExpressions, type Expression } from '../../expressions/expressions.ts';
import { DeploymentError } from '../../runtime/tasks.ts';
import { isRecord } from '../../shared/json.ts';

/**
 * Dictionaries of the parser (reference §3.2, §3.4): regular dictionaries compiled at deployment into maps keyed
 * by the lower-cased word, the quick-reply dictionary of a turn, and the built-in dictionaries.
 */

/** One way of reading a token: what it means and what it counts as when phrases are assembled. */
export interface Alternative {
  /** The dictionary text that matched (a word, a phrase member, or the token itself for regexes and built-ins). */
  readonly value: string;
  /** Lower-cased `value`, compared with phrase members; `undefined` for unknown tokens. */
  readonly key: string | undefined;
  readonly expressions: readonly Expression[];
  /** A phrase member matched, which means nothing unless its phrase forms (`unused(<member>)`). */
  readonly memberOnly: boolean;
  /** Appended to the debug line in `expressions:matches`, e.g. ` [regex]`. */
  readonly tag: string;
  /** For a merged term: the dictionary words it was split into, in order. */
  readonly parts?: readonly Alternative[];
}

export interface Phrase {
  readonly text: string;
  /** Lower-cased member words. */
  readonly members: readonly string[];
  readonly expressions: readonly Expression[];
  /** Position among equally long phrases (earlier dictionaries, earlier entries first). */
  rank: number;
}

/** Something consulted per token in the configured order. */
export interface TokenDictionary {
  /** Consulted only when the conversation's `lang` equals it; `undefined` = always. */
  readonly language: string | undefined;
  /** False: consulted only while nothing has matched the token yet. */
  readonly lookupIfKnown: boolean;
  lookup(token: string, lower: string, found: Alternative[]): void;
}

export const atom = (name: string): Expression => ({ name, args: [] });
/**
 * `name(argument)` for user text: parentheses and commas are dropped from the argument (and an argument left
 * empty becomes `_`), so that `expressions:parsed` always parses again, whatever the user typed.
 */
export const call = (name: string, argument: string): Expression => ({
  name,
  args: [atom(argument.replace(/[(),]/g, '') || '_')],
});
export const unusedExpression = (text: string): Expression => call('unused', text);
export const unknownExpression = (token: string): Expression => call('unknown', token);

export function unknownAlternative(token: string): Alternative {
  return { value: token, key: undefined, expressions: [unknownExpression(token)], memberOnly: false, tag: '' };
}

/** Whether an expression carries no meaning of its own (`unused(...)`, `unknown(...)`). */
export const isPlaceholder = (expression: Expression): boolean =>
  expression.name === 'unused' || expression.name === 'unknown';

// ---------------------------------------------------------------------------------------------------------------
// Regular dictionaries
// ---------------------------------------------------------------------------------------------------------------

interface RegExEntry {
  readonly pattern: RegExp;
  readonly expressions: readonly Expression[] | undefined;
}

export interface DictionarySource {
  readonly language?: string | undefined;
  readonly words?: ReadonlyArray<{ readonly word: string; readonly expressions?: string | undefined }>;
  readonly phrases?: ReadonlyArray<{ readonly phrase: string; readonly expressions?: string | undefined }>;
  readonly regExs?: ReadonlyArray<{ readonly regEx: string; readonly expressions?: string | undefined }>;
}

export class RegularDictionary implements TokenDictionary {
  readonly language: string | undefined;
  readonly lookupIfKnown = true;
  /** Lower-cased word -> the word (a later duplicate replaced an earlier one). */
  readonly words = new Map<string, Alternative>();
  /** Lower-cased phrase member -> its spellings as members (`unused(<member>)`), first seen first. */
  readonly members = new Map<string, Alternative[]>();
  /** Lower-cased phrase member -> the phrases containing it. */
  readonly phrasesByMember = new Map<string, Phrase[]>();
  readonly phrases: Phrase[] = [];
  readonly regExs: RegExEntry[] = [];
  /** Words and distinct phrase members: what corrections compare tokens with. */
  readonly vocabulary: Alternative[] = [];
  /** Length of the longest vocabulary entry. */
  readonly longest: number;

  constructor(
    source: DictionarySource,
    parse: (text: string | undefined, entry: string) => readonly Expression[] | undefined,
  ) {
    this.language = source.language === undefined || source.language === '' ? undefined : source.language;
    for (const { word, expressions } of source.words ?? []) {
      const key = word.toLowerCase();
      this.words.set(key, {
        value: word,
        key,
        expressions: parse(expressions, word) ?? [unusedExpression(word)],
        memberOnly: false,
        tag: '',
      });
    }
    for (const { phrase: text, expressions } of source.phrases ?? []) {
      const spelled = text
        .trim()
        .split(/\s+/)
        .filter((member) => member !== '');
      if (spelled.length === 0) continue;
      const phrase: Phrase = {
        text,
        members: spelled.map((member) => member.toLowerCase()),
        expressions: parse(expressions, text) ?? [unusedExpression(text)],
        rank: 0,
      };
      this.phrases.push(phrase);
      spelled.forEach((member, index) => {
        const key = phrase.members[index]!;
        const spellings = this.members.get(key) ?? [];
        if (!spellings.some((known) => known.value === member)) {
          spellings.push({ value: member, key, expressions: [unusedExpression(member)], memberOnly: true, tag: '' });
        }
        this.members.set(key, spellings);
        const containing = this.phrasesByMember.get(key) ?? [];
        if (!containing.includes(phrase)) containing.push(phrase);
        this.phrasesByMember.set(key, containing);
      });
    }
    for (const { regEx, expressions } of source.regExs ?? []) {
      this.regExs.push({ pattern: new RegExp(`^(?:${regEx})$`), expressions: parse(expressions, regEx) });
    }
    this.vocabulary.push(...this.words.values());
    for (const spellings of this.members.values()) this.vocabulary.push(spellings[0]!);
    this.longest = this.vocabulary.reduce((longest, entry) => Math.max(longest, entry.value.length), 0);
  }

  /**
   * Phrase members (the exact spelling first), then the word, both case-insensitive; regular expressions (whole
   * token) only when nothing has matched the token yet.
   */
  lookup(token: string, lower: string, found: Alternative[]): void {
    const spellings = this.members.get(lower);
    if (spellings !== undefined) {
      const exact = spellings.find((member) => member.value === token);
      if (exact !== undefined) found.push(exact);
      for (const member of spellings) if (member !== exact) found.push(member);
    }
    const word = this.words.get(lower);
    if (word !== undefined) found.push(word);
    if (found.length === 0) {
      for (const { pattern, expressions } of this.regExs) {
        if (pattern.test(token)) {
          found.push({
            value: token,
            key: lower,
            expressions: expressions ?? [unusedExpression(token)],
            memberOnly: false,
            tag: ' [regex]',
          });
        }
      }
    }
  }

  /** A word or phrase member spelled `lower` (any case), the word first: used to split merged terms. */
  entry(lower: string): Alternative | undefined {
    return this.words.get(lower) ?? this.members.get(lower)?.[0];
  }
}

/** Compiles a stored dictionary (spec names); a malformed entry or expression is a deployment error naming it. */
export function compileDictionary(stored: unknown, reference: string): RegularDictionary {
  const where = `The dictionary ${reference}`;
  if (!isRecord(stored)) throw new DeploymentError(`${where} is not a dictionary.`);
  const list = (field: string, key: string) => {
    const value = stored[field];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw new DeploymentError(`${where}: '${field}' must be a list.`);
    return value.map((item: unknown, index) => {
      if (!isRecord(item) || typeof item[key] !== 'string' || (item[key] as string).trim() === '') {
        throw new DeploymentError(`${where}: ${field}[${index}] needs a non-empty '${key}'.`);
      }
      const expressions = item.expressions;
      if (expressions !== undefined && expressions !== null && typeof expressions !== 'string') {
        throw new DeploymentError(`${where}: ${field}[${index}].expressions must be a string.`);
      }
      return { [key]: item[key] as string, expressions: (expressions ?? undefined) as string | undefined };
    });
  };
  const language = stored.language;
  if (language !== undefined && language !== null && typeof language !== 'string')
    throw new DeploymentError(`${where}: 'language' must be a string.`);
  const source: DictionarySource = {
    language: (language ?? undefined) as string | undefined,
    words: list('words', 'word') as Array<{ word: string; expressions?: string }>,
    phrases: list('phrases', 'phrase') as Array<{ phrase: string; expressions?: string }>,
    regExs: list('regExs', 'regEx') as Array<{ regEx: string; expressions?: string }>,
  };
  for (const [index, { word }] of (source.words ?? []).entries()) {
    if (/\s/.test(word.trim()))
      throw new DeploymentError(`${where}: words[${index}] '${word}' must be a single word; put it under 'phrases'.`);
  }
  for (const [index, { regEx }] of (source.regExs ?? []).entries()) {
    try {
      new RegExp(regEx);
    } catch (error) {
      throw new DeploymentError(`${where}: regExs[${index}] '${regEx}' does not compile: ${(error as Error).message}`);
    }
  }
  return new RegularDictionary(source, (text, entry) => {
    if (text === undefined || text.trim() === '') return undefined;
    try {
      return parseExpressions(text);
    } catch (error) {
      const reason = error instanceof ExpressionSyntaxError ? error.message : String(error);
      throw new DeploymentError(`${where}: the expressions of '${entry}' do not parse: ${reason}`);
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The quick-reply dictionary of a turn
// ---------------------------------------------------------------------------------------------------------------

/** `Option 1` -> `option_1`: lower-cased, non-alphanumerics removed, whitespace runs -> `_`. */
export function quickReplyExpression(value: string): string {
  return value
    .replace(/[^\p{L}\p{N}\s]+/gu, '')
    .trim()
    .replace(/\s+/g, '_')
    .toLowerCase();
}

/**
 * The previous step's quick replies as a temporary dictionary: a value with a space becomes a phrase, any other
 * value a word; the reply's expressions, or when blank the value turned into an expression (`Option 1` ->
 * `option_1`). Replies that are malformed or whose expressions do not parse are left out.
 */
export function quickReplyDictionary(quickReplies: unknown): RegularDictionary | undefined {
  if (!Array.isArray(quickReplies) || quickReplies.length === 0) return undefined;
  const words: Array<{ word: string; expressions: string }> = [];
  const phrases: Array<{ phrase: string; expressions: string }> = [];
  for (const reply of quickReplies) {
    if (!isRecord(reply) || typeof reply.value !== 'string') continue;
    const value = reply.value.trim().replace(/\s+/g, ' ');
    if (value === '') continue;
    const given = typeof reply.expressions === 'string' ? reply.expressions.trim() : '';
    const expressions = given !== '' ? given : quickReplyExpression(value);
    if (expressions === '') continue;
    try {
      parseExpressions(expressions);
    } catch {
      continue;
    }
    if (value.includes(' ')) phrases.push({ phrase: value, expressions });
    else words.push({ word: value, expressions });
  }
  if (words.length === 0 && phrases.length === 0) return undefined;
  const dictionary = new RegularDictionary({ words, phrases }, (text) =>
    text === undefined ? undefined : parseExpressions(text),
  );
  return dictionary;
}

// ---------------------------------------------------------------------------------------------------------------
// Built-in dictionaries (reference §3.4)
// ---------------------------------------------------------------------------------------------------------------

const INTEGER = /^\d+$/;
const DECIMAL = /^\d+[.,]\d+$/;
const EMAIL = /^[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,4}$/i;
const ORDINAL_SUFFIX = /^(\d+)(?:st|nd|rd|th)$/;
const ORDINAL_DOT = /^(\d{1,2})\.$/;
const CLOCK = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;
const HOURS = /^(\d{1,2})h(\d{2})?$/;
const PUNCTUATION: Readonly<Record<string, string>> = {
  '!': 'exclamation_mark',
  '?': 'question_mark',
  '.': 'dot',
  ',': 'comma',
  ':': 'colon',
  ';': 'semicolon',
};

export const isDecimal = (token: string): boolean => DECIMAL.test(token);
export const isEmail = (token: string): boolean => token.includes('@') && EMAIL.test(token);

/** The number of an ordinal (`3rd`, `3.`), without leading zeros; `undefined` if the token is none. */
export function isOrdinalNumber(token: string): string | undefined {
  const match = ORDINAL_SUFFIX.exec(token.toLowerCase()) ?? ORDINAL_DOT.exec(token);
  return match === null ? undefined : match[1]!.replace(/^0+(?=\d)/, '');
}

/** Epoch milliseconds of the clock time on 1970-01-01 in the server's time zone; `undefined` if not a time. */
export function timeOf(token: string): number | undefined {
  const match = CLOCK.exec(token) ?? HOURS.exec(token);
  if (match === null) return undefined;
  let hours = Number(match[1]);
  const minutes = Number(match[2] ?? 0);
  const seconds = Number(match[3] ?? 0);
  if (minutes > 59 || seconds > 59 || hours > 24 || (hours === 24 && (minutes > 0 || seconds > 0))) return undefined;
  if (hours === 24) hours = 0;
  return new Date(1970, 0, 1, hours, minutes, seconds).getTime();
}

export const isTimeExpression = (token: string): boolean => timeOf(token) !== undefined;

function builtIn(lookupIfKnown: boolean, match: (token: string) => Expression | undefined): TokenDictionary {
  return {
    language: undefined,
    lookupIfKnown,
    lookup(token, lower, found) {
      const expression = match(token);
      if (expression !== undefined)
        found.push({ value: token, key: lower, expressions: [expression], memberOnly: false, tag: '' });
    },
  };
}

/** The built-in dictionary of a type (`dictionaries.integer`, ...), or `undefined` if there is none of that name. */
export function builtInDictionary(kind: string): TokenDictionary | undefined {
  switch (kind) {
    case 'dictionaries.integer':
      return builtIn(true, (token) => (INTEGER.test(token) ? call('integer', token) : undefined));
    case 'dictionaries.decimal':
      return builtIn(false, (token) => (DECIMAL.test(token) ? call('decimal', token.replace(',', '.')) : undefined));
    case 'dictionaries.punctuation':
      return builtIn(true, (token) => {
        const name = PUNCTUATION[token];
        return name === undefined || !Object.hasOwn(PUNCTUATION, token) ? undefined : call('punctuation', name);
      });
    case 'dictionaries.email':
      return builtIn(false, (token) => (isEmail(token) ? call('email', token) : undefined));
    case 'dictionaries.time':
      return builtIn(true, (token) => {
        const time = timeOf(token);
        return time === undefined ? undefined : call('time', String(time));
      });
    case 'dictionaries.ordinalNumber':
      return builtIn(false, (token) => {
        const number = isOrdinalNumber(token);
        return number === undefined ? undefined : call('ordinal_number', number);
      });
    default:
      return undefined;
  }
}
