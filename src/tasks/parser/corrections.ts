import snowball from 'snowball-stemmers';
import doubleMetaphone from 'talisman/phonetics/double-metaphone.js';
import soundex from 'talisman/phonetics/soundex.js';
import { DeploymentError } from '../../runtime/tasks.ts';
import { readBoolean, readInteger, readString, type SubExtension } from './config.ts';
import type { Alternative, RegularDictionary } from './dictionaries.ts';

/**
 * Corrections (reference §3.5; stemming per DESIGN §4.9/§4.16): each builds its indexes over the vocabulary of
 * the configured regular dictionaries at deployment, so a turn only computes the token's key and looks it up.
 * A correction runs for a token only while nothing matched it, unless its `lookupIfKnown` is true; only the
 * dictionaries that pass the language gate are consulted.
 */
export interface Correction {
  readonly lookupIfKnown: boolean;
  /**
   * Adds the corrections of `token` to `found`. `dictionaries` are the configured regular dictionaries that pass
   * the language gate; `temporary` is the quick-reply dictionary of the turn, if any.
   */
  correct(
    token: string,
    lower: string,
    dictionaries: readonly RegularDictionary[],
    temporary: RegularDictionary | undefined,
    found: Alternative[],
  ): void;
}

const tagged = (entry: Alternative, tag: string): Alternative => ({ ...entry, tag });

function indexPerDictionary<T>(
  dictionaries: readonly RegularDictionary[],
  build: (dictionary: RegularDictionary) => T,
): Map<RegularDictionary, T> {
  return new Map(dictionaries.map((dictionary) => [dictionary, build(dictionary)]));
}

// ---------------------------------------------------------------------------------------------------------------
// Damerau-Levenshtein (optimal string alignment: an adjacent transposition costs 1)
// ---------------------------------------------------------------------------------------------------------------

let rows: [Int32Array, Int32Array, Int32Array] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/** The edit distance of `a` and `b`, or any number above `max` as soon as it is certain to exceed `max`. */
export function damerauLevenshtein(a: string, b: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (n === 0 || m === 0) return Math.max(n, m);
  if (rows[0].length < m + 1) rows = [new Int32Array(m + 1), new Int32Array(m + 1), new Int32Array(m + 1)];
  let [before, previous, current] = rows;
  for (let j = 0; j <= m; j++) previous[j] = j;
  for (let i = 1; i <= n; i++) {
    current[0] = i;
    let smallest = i;
    const ai = a.charCodeAt(i - 1);
    const aPrevious = i > 1 ? a.charCodeAt(i - 2) : -1;
    for (let j = 1; j <= m; j++) {
      const bj = b.charCodeAt(j - 1);
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (ai === bj ? 0 : 1));
      if (j > 1 && ai === b.charCodeAt(j - 2) && aPrevious === bj) value = Math.min(value, before[j - 2]! + 1);
      current[j] = value;
      if (value < smallest) smallest = value;
    }
    if (smallest > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[m]!;
}

/** Position masks of the current pattern's characters (bit i = pattern[i]); cleared after every use. */
const positions = new Int32Array(65536);

const usesBits = (pattern: string) => pattern.length > 0 && pattern.length <= 31;

function withPattern<T>(pattern: string, run: () => T): T {
  for (let i = 0; i < pattern.length; i++) positions[pattern.charCodeAt(i)]! |= 1 << i;
  try {
    return run();
  } finally {
    for (let i = 0; i < pattern.length; i++) positions[pattern.charCodeAt(i)] = 0;
  }
}

/** Hyyrö 2003 (optimal string alignment), for the pattern whose masks are in `positions`. */
function bitParallel(m: number, text: string): number {
  const last = 1 << (m - 1);
  let vp = (2 ** m - 1) | 0;
  let vn = 0;
  let d0 = 0;
  let previous = 0;
  let distance = m;
  for (let j = 0; j < text.length; j++) {
    const pm = positions[text.charCodeAt(j)]!;
    const transposed = ((~d0 & pm) << 1) & previous;
    d0 = (((pm & vp) + vp) ^ vp) | pm | vn | transposed | 0;
    let hp = vn | ~(d0 | vp);
    const hn = d0 & vp;
    if ((hp & last) !== 0) distance++;
    if ((hn & last) !== 0) distance--;
    hp = (hp << 1) | 1;
    vp = (hn << 1) | ~(d0 | hp);
    vn = hp & d0;
    previous = pm;
  }
  return distance;
}

/**
 * The same distance as `damerauLevenshtein`, bit-parallel for a pattern of 1 to 31 UTF-16 units: one pass over
 * `text` with a handful of bit operations per character.
 */
export function damerauLevenshteinBitParallel(pattern: string, text: string): number {
  return usesBits(pattern)
    ? withPattern(pattern, () => bitParallel(pattern.length, text))
    : damerauLevenshtein(pattern, text);
}

interface Candidate {
  readonly distance: number;
  readonly entry: Alternative;
}

function levenshtein(extension: SubExtension, dictionaries: readonly RegularDictionary[]): Correction {
  const distance = readInteger(extension.config, 'distance', 2);
  const maxCandidates = readInteger(extension.config, 'maxCandidates', 5);
  const lookupIfKnown = readBoolean(extension.config, 'lookupIfKnown', false);
  const TAG = ' [levenshtein]';
  /** Per dictionary: vocabulary bucketed by length (index = length). */
  const bucket = (dictionary: RegularDictionary) => {
    const byLength: Alternative[][] = [];
    for (const entry of dictionary.vocabulary) (byLength[entry.value.length] ??= []).push(tagged(entry, TAG));
    return byLength;
  };
  const indexes = indexPerDictionary(dictionaries, bucket);

  const collect = (lower: string, byLength: readonly (Alternative[] | undefined)[], candidates: Candidate[]) => {
    const from = Math.max(1, lower.length - distance);
    const to = Math.min(byLength.length - 1, lower.length + distance);
    const bits = usesBits(lower);
    for (let length = from; length <= to; length++) {
      for (const entry of byLength[length] ?? []) {
        const found = bits ? bitParallel(lower.length, entry.key!) : damerauLevenshtein(lower, entry.key!, distance);
        // A correction keeps at least one character: short tokens are not replaced wholesale.
        if (found <= distance && found < length && found < lower.length) candidates.push({ distance: found, entry });
      }
    }
  };

  return {
    lookupIfKnown,
    correct(_token, lower, active, temporary, found) {
      const candidates: Candidate[] = [];
      const scan = () => {
        if (temporary !== undefined) collect(lower, bucket(temporary), candidates);
        for (const dictionary of active) collect(lower, indexes.get(dictionary) ?? bucket(dictionary), candidates);
      };
      if (usesBits(lower)) withPattern(lower, scan);
      else scan();
      if (candidates.length === 0) return;
      candidates.sort((a, b) => a.distance - b.distance);
      for (const { entry } of candidates.slice(0, maxCandidates)) found.push(entry);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Merged terms: `hellobye` -> `hello` + `bye`
// ---------------------------------------------------------------------------------------------------------------

const MERGED_TERM_MAX_LENGTH = 100;

function mergedTerms(extension: SubExtension): Correction {
  const lookupIfKnown = readBoolean(extension.config, 'lookupIfKnown', false);
  return {
    lookupIfKnown,
    correct(token, lower, active, temporary, found) {
      if (lower.length < 2 || lower.length > MERGED_TERM_MAX_LENGTH) return;
      const sources = temporary === undefined ? active : [temporary, ...active];
      const longest = sources.reduce((most, dictionary) => Math.max(most, dictionary.longest), 0);
      const part = (text: string) => {
        for (const dictionary of sources) {
          const entry = dictionary.entry(text);
          if (entry !== undefined) return entry;
        }
        return undefined;
      };
      // Longest prefix first; a dead end backtracks to the next shorter prefix. Positions known not to split are
      // remembered, so the search stays linear in the token length times the longest word.
      const failed = new Uint8Array(lower.length);
      const split = (start: number): Alternative[] | undefined => {
        if (start === lower.length) return [];
        if (failed[start] === 1) return undefined;
        for (let end = Math.min(lower.length, start + longest); end > start; end--) {
          const entry = part(lower.slice(start, end));
          if (entry === undefined) continue;
          const rest = split(end);
          if (rest !== undefined) return [entry, ...rest];
        }
        failed[start] = 1;
        return undefined;
      };
      const parts = split(0);
      if (parts === undefined || parts.length < 2) return;
      found.push({
        value: token,
        key: undefined,
        expressions: parts.flatMap((entry) => entry.expressions),
        memberOnly: false,
        tag: ' [mergedTerms]',
        parts,
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Phonetic: Refined Soundex and Double Metaphone
// ---------------------------------------------------------------------------------------------------------------

function phoneticCodes(word: string): { soundex: string; metaphone: string[] } {
  const [primary, alternate] = doubleMetaphone(word);
  const metaphone = primary === alternate ? [primary] : [primary, alternate];
  return { soundex: soundex.refined(word), metaphone: metaphone.filter((code) => code !== '') };
}

function phonetic(extension: SubExtension, dictionaries: readonly RegularDictionary[]): Correction {
  const lookupIfKnown = readBoolean(extension.config, 'lookupIfKnown', false);
  const TAG = ' [phonetic]';
  const add = (map: Map<string, Alternative[]>, code: string, entry: Alternative) => {
    if (code === '') return;
    const list = map.get(code) ?? [];
    list.push(entry);
    map.set(code, list);
  };
  const indexes = indexPerDictionary(dictionaries, (dictionary) => {
    const bySoundex = new Map<string, Alternative[]>();
    const byMetaphone = new Map<string, Alternative[]>();
    for (const entry of dictionary.vocabulary) {
      const codes = phoneticCodes(entry.key!);
      const marked = tagged(entry, TAG);
      add(bySoundex, codes.soundex, marked);
      for (const code of codes.metaphone) add(byMetaphone, code, marked);
    }
    return { bySoundex, byMetaphone };
  });
  return {
    lookupIfKnown,
    correct(_token, lower, active, _temporary, found) {
      const codes = phoneticCodes(lower);
      const matches = new Set<Alternative>();
      for (const dictionary of active) {
        const index = indexes.get(dictionary);
        if (index === undefined) continue;
        for (const entry of index.bySoundex.get(codes.soundex) ?? []) matches.add(entry);
        for (const code of codes.metaphone) for (const entry of index.byMetaphone.get(code) ?? []) matches.add(entry);
      }
      for (const entry of matches) found.push(entry);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Stemming (Snowball)
// ---------------------------------------------------------------------------------------------------------------

const SNOWBALL = new Set(snowball.algorithms());
const ISO_LANGUAGES: Readonly<Record<string, string>> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  cs: 'czech',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  hu: 'hungarian',
  it: 'italian',
  ga: 'irish',
  no: 'norwegian',
  nb: 'norwegian',
  nn: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  es: 'spanish',
  sl: 'slovene',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
};

/** The Snowball algorithm for a language given as a Snowball name (`english`) or an ISO code (`en`, `en-GB`). */
export function snowballAlgorithm(language: string): string | undefined {
  const name = language.trim().toLowerCase();
  if (SNOWBALL.has(name)) return name;
  const primary = name.split(/[-_]/)[0] ?? '';
  return Object.hasOwn(ISO_LANGUAGES, primary) ? ISO_LANGUAGES[primary] : undefined;
}

function stemming(extension: SubExtension, dictionaries: readonly RegularDictionary[]): Correction {
  const language = readString(extension.config, 'language');
  if (language === undefined || language.trim() === '')
    throw new DeploymentError(`${extension.where}: 'language' is required.`);
  const algorithm = snowballAlgorithm(language);
  if (algorithm === undefined) {
    throw new DeploymentError(
      `${extension.where}: unknown stemming language '${language}'; use a Snowball name (${[...SNOWBALL].join(', ')}) or its ISO code.`,
    );
  }
  const lookupIfKnown = readBoolean(extension.config, 'lookupIfKnown', false);
  const stemmer = snowball.newStemmer(algorithm);
  const TAG = ' [stemming]';
  const indexes = indexPerDictionary(dictionaries, (dictionary) => {
    const byStem = new Map<string, Alternative[]>();
    for (const entry of dictionary.vocabulary) {
      const stem = stemmer.stem(entry.key!);
      const list = byStem.get(stem) ?? [];
      list.push(tagged(entry, TAG));
      byStem.set(stem, list);
    }
    return byStem;
  });
  return {
    lookupIfKnown,
    correct(_token, lower, active, _temporary, found) {
      const stem = stemmer.stem(lower);
      for (const dictionary of active) for (const entry of indexes.get(dictionary)?.get(stem) ?? []) found.push(entry);
    },
  };
}

export function compileCorrection(extension: SubExtension, dictionaries: readonly RegularDictionary[]): Correction {
  switch (extension.kind) {
    case 'corrections.levenshtein':
      return levenshtein(extension, dictionaries);
    case 'corrections.mergedTerms':
      return mergedTerms(extension);
    case 'corrections.phonetic':
      return phonetic(extension, dictionaries);
    case 'corrections.stemming':
      return stemming(extension, dictionaries);
    default:
      throw new DeploymentError(`${extension.where}: unknown correction type '${extension.type}'.`);
  }
}
