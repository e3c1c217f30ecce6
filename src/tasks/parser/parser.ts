import type { Expression } from '../../expressions/expressions.ts';
import type { Correction } from './corrections.ts';
import {
  quickReplyDictionary,
  RegularDictionary,
  unknownAlternative,
  type Alternative,
  type Phrase,
  type TokenDictionary,
} from './dictionaries.ts';
import { normalize, type Normalizer } from './normalizers.ts';

/**
 * The compiled parser of one parser extension: normalises the input, reads every token through the quick-reply
 * dictionary, the configured dictionaries and the corrections, then assembles phrases (reference §3.1-3.2).
 * Everything here is built at deployment; `parse` only looks things up.
 */

/** One element of the solution: the input text it covers and what it means. */
export interface Match {
  readonly text: string;
  readonly expressions: readonly Expression[];
  /** ` [phrase]`, ` [regex]`, ` [levenshtein]`, ... or empty. */
  readonly tag: string;
}

interface Slot {
  readonly text: string;
  /** Compared with phrase members; `undefined` for unknown tokens and assembled phrases. */
  readonly key: string | undefined;
  /** The first alternative that means something by itself. */
  readonly meaning: Alternative | undefined;
  /** The first alternative that is a phrase member. */
  readonly member: Alternative | undefined;
  readonly tag: string;
  readonly phrase?: Phrase;
}

export interface ParserParts {
  readonly normalizers: readonly Normalizer[];
  /** In configured order: regular and built-in dictionaries. */
  readonly dictionaries: readonly TokenDictionary[];
  readonly corrections: readonly Correction[];
  readonly maxInputTokens: number;
}

function indexOfSubList(list: readonly (string | undefined)[], sub: readonly (string | undefined)[]): number {
  outer: for (let start = 0; start + sub.length <= list.length; start++) {
    for (let offset = 0; offset < sub.length; offset++) if (list[start + offset] !== sub[offset]) continue outer;
    return start;
  }
  return -1;
}

const byLengthThenRank = (a: Phrase, b: Phrase) => b.members.length - a.members.length || a.rank - b.rank;

export class Parser {
  readonly #normalizers: readonly Normalizer[];
  readonly #dictionaries: readonly TokenDictionary[];
  readonly #regular: readonly RegularDictionary[];
  readonly #corrections: readonly Correction[];
  readonly #maxInputTokens: number;
  /** Whether any dictionary declares a language (otherwise the gate can be skipped). */
  readonly #gated: boolean;

  constructor(parts: ParserParts) {
    this.#normalizers = parts.normalizers;
    this.#dictionaries = parts.dictionaries;
    this.#regular = parts.dictionaries.filter((dictionary) => dictionary instanceof RegularDictionary);
    this.#corrections = parts.corrections;
    this.#maxInputTokens = parts.maxInputTokens;
    this.#gated = parts.dictionaries.some((dictionary) => dictionary.language !== undefined);
    let rank = 0;
    for (const dictionary of this.#regular) for (const phrase of dictionary.phrases) phrase.rank = rank++;
  }

  normalize(input: string): string {
    return normalize(input, this.#normalizers);
  }

  /**
   * Parses a normalised, non-blank input. `language` is the conversation's language (`Turn.language`: its `lang`
   * property, else English); dictionaries with a language are consulted only when it equals theirs; `quickReplies`
   * are the previous step's quick replies.
   */
  parse(normalized: string, language: string | undefined, quickReplies?: unknown): Match[] {
    const passes = (dictionary: TokenDictionary) =>
      dictionary.language === undefined || dictionary.language === language;
    const dictionaries = this.#gated ? this.#dictionaries.filter(passes) : this.#dictionaries;
    const regular = this.#gated ? this.#regular.filter(passes) : this.#regular;
    const temporary = quickReplyDictionary(quickReplies);
    if (temporary !== undefined)
      for (const [index, phrase] of temporary.phrases.entries()) phrase.rank = index - temporary.phrases.length;

    let tokens = normalized.split(' ');
    if (tokens.length > this.#maxInputTokens) tokens = tokens.slice(0, this.#maxInputTokens);

    const slots: Slot[] = [];
    const found: Alternative[] = [];
    for (const token of tokens) {
      const lower = token.toLowerCase();
      found.length = 0;
      temporary?.lookup(token, lower, found);
      for (const dictionary of dictionaries) {
        if (dictionary.lookupIfKnown || found.length === 0) dictionary.lookup(token, lower, found);
      }
      for (const correction of this.#corrections) {
        if (correction.lookupIfKnown || found.length === 0) correction.correct(token, lower, regular, temporary, found);
      }
      this.#addSlots(token, found, slots);
    }

    const assembled = this.#assemblePhrases(slots, regular, temporary);
    return assembled.map((slot): Match => {
      if (slot.phrase !== undefined) return { text: slot.text, expressions: slot.phrase.expressions, tag: ' [phrase]' };
      return { text: slot.text, expressions: (slot.meaning ?? slot.member)!.expressions, tag: slot.tag };
    });
  }

  /**
   * The token's reading: the first alternative wins, except that a phrase member (which means nothing by itself)
   * gives way to a later alternative that has a meaning when its phrase does not form. A merged term becomes
   * one slot per part, so its parts can still form phrases.
   */
  #addSlots(token: string, found: readonly Alternative[], slots: Slot[]): void {
    if (found.length === 0) {
      slots.push({ text: token, key: undefined, meaning: unknownAlternative(token), member: undefined, tag: '' });
      return;
    }
    const meaning = found.find((alternative) => !alternative.memberOnly);
    const member = found.find((alternative) => alternative.memberOnly);
    if (meaning?.parts !== undefined && member === undefined) {
      for (const part of meaning.parts) {
        slots.push({
          text: part.value,
          key: part.key,
          meaning: part.memberOnly ? undefined : part,
          member: part.memberOnly ? part : undefined,
          tag: meaning.tag,
        });
      }
      return;
    }
    slots.push({ text: token, key: (member ?? meaning)!.key, meaning, member, tag: (meaning ?? member)!.tag });
  }

  /**
   * Phrases, longest first: every contiguous run of tokens spelling a phrase becomes that phrase. When no phrase
   * formed and no token means anything by itself, an input that is a contiguous part of a longer phrase becomes
   * that phrase (`good` -> `good afternoon`).
   */
  #assemblePhrases(
    slots: Slot[],
    regular: readonly RegularDictionary[],
    temporary: RegularDictionary | undefined,
  ): Slot[] {
    const candidates = new Set<Phrase>();
    const sources = temporary === undefined ? regular : [temporary, ...regular];
    for (const slot of slots) {
      if (slot.key === undefined) continue;
      for (const source of sources)
        for (const phrase of source.phrasesByMember.get(slot.key) ?? []) candidates.add(phrase);
    }
    if (candidates.size === 0) return slots;
    const phrases = [...candidates].sort(byLengthThenRank);

    let formed = false;
    for (const phrase of phrases) {
      const size = phrase.members.length;
      for (let start = 0; start + size <= slots.length; start++) {
        let matches = true;
        for (let offset = 0; offset < size && matches; offset++) {
          const slot = slots[start + offset]!;
          matches = slot.phrase === undefined && slot.key === phrase.members[offset];
        }
        if (!matches) continue;
        const text = slots
          .slice(start, start + size)
          .map((slot) => slot.text)
          .join(' ');
        slots.splice(start, size, {
          text,
          key: undefined,
          meaning: undefined,
          member: undefined,
          tag: ' [phrase]',
          phrase,
        });
        formed = true;
      }
    }
    if (formed || !slots.every((slot) => slot.meaning === undefined && slot.key !== undefined)) return slots;

    const keys = slots.map((slot) => slot.key);
    for (const phrase of phrases) {
      if (phrase.members.length > keys.length && indexOfSubList(phrase.members, keys) >= 0) {
        const text = slots.map((slot) => slot.text).join(' ');
        return [{ text, key: undefined, meaning: undefined, member: undefined, tag: ' [phrase]', phrase }];
      }
    }
    return slots;
  }
}
