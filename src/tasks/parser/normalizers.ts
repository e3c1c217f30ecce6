import { DeploymentError } from '../../runtime/tasks.ts';
import { readBoolean, readString, type SubExtension } from './config.ts';
import { isDecimal, isEmail, isOrdinalNumber, isTimeExpression } from './dictionaries.ts';

/**
 * Input normalisers (`extensions.normalizer`, reference §3.1), compiled at deployment into plain string
 * functions. The parser then always trims and collapses whitespace runs to one space; it never lower-cases.
 */
export type Normalizer = (input: string) => string;

const DEFAULT_PUNCTUATION = '!?:.,;';

function escapeForClass(characters: string): string {
  return characters.replace(/[\\\][^-]/g, '\\$&');
}

/**
 * `normalizers.punctuation`: puts spaces around punctuation characters (or removes them with
 * `removePunctuation`), so that `hello!` becomes the tokens `hello` and `!`. Times (`12:30`), ordinal numbers
 * (`3.`), decimal numbers (`3,5`) and e-mail addresses are kept whole, also when punctuation follows them
 * (`12:30.` -> `12:30 .`).
 */
function punctuation(extension: SubExtension): Normalizer {
  const remove = readBoolean(extension.config, 'removePunctuation', false);
  const characters = readString(extension.config, 'punctuationRegexPattern') ?? DEFAULT_PUNCTUATION;
  if (characters === '')
    throw new DeploymentError(`${extension.where}: 'punctuationRegexPattern' must name at least one character.`);
  const set = `[${escapeForClass(characters)}]`;
  const pattern = new RegExp(set, 'gu');
  const probe = new RegExp(set, 'u');
  const edges = new RegExp(`^(${set}*)(.*?)(${set}*)$`, 'su');
  const replacement = remove ? ' ' : ' $& ';
  const kept = (word: string) =>
    isTimeExpression(word) || isOrdinalNumber(word) !== undefined || isDecimal(word) || isEmail(word);
  const spaced = (word: string) => word.replace(pattern, replacement);
  return (input) =>
    input
      .split(' ')
      .map((word) => {
        if (!probe.test(word) || kept(word)) return word;
        const [, lead = '', core = '', trail = ''] = edges.exec(word) ?? [];
        return core !== '' && kept(core) ? `${spaced(lead)} ${core} ${spaced(trail)}` : spaced(word);
      })
      .join(' ');
}

const SPECIAL_CHARACTERS: Readonly<Record<string, string>> = {
  '’': "'",
  '‘': "'",
  '´': "'",
  '`': "'",
  '“': '"',
  '”': '"',
  '„': '"',
  ä: 'ae',
  ö: 'oe',
  ü: 'ue',
  Ä: 'Ae',
  Ö: 'Oe',
  Ü: 'Ue',
  ß: 'ss',
};
const SPECIAL_PATTERN = new RegExp(`[${Object.keys(SPECIAL_CHARACTERS).join('')}]`, 'gu');

/** `normalizers.specialCharacter`: typographic quotes to plain ones, German umlauts spelled out, accents stripped. */
const specialCharacter: Normalizer = (input) =>
  input
    .normalize('NFC')
    .replace(SPECIAL_PATTERN, (character) => SPECIAL_CHARACTERS[character] ?? character)
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .normalize('NFC');

const CONTRACTIONS: ReadonlyMap<string, string> = new Map([
  ["don't", 'do not'],
  ["doesn't", 'does not'],
  ["didn't", 'did not'],
  ["can't", 'cannot'],
  ["couldn't", 'could not'],
  ["won't", 'would not'],
  ["wouldn't", 'would not'],
  ["wasn't", 'was not'],
  ["weren't", 'were not'],
  ["shouldn't", 'should not'],
  ["haven't", 'have not'],
  ["hasn't", 'has not'],
  ["hadn't", 'had not'],
  ["isn't", 'is not'],
  ["aren't", 'are not'],
  ["i'm", 'i am'],
  ["you're", 'you are'],
  ["he's", 'he is'],
  ["she's", 'she is'],
  ["it's", 'it is'],
  ["they're", 'they are'],
  ["we're", 'we are'],
  ["i've", 'i have'],
  ["you've", 'you have'],
  ["we've", 'we have'],
  ["they've", 'they have'],
  ["i'll", 'i will'],
  ["you'll", 'you will'],
  ["we'll", 'we will'],
  ["they'll", 'they will'],
  ["i'd", 'i would'],
  ["let's", 'let us'],
  ["that's", 'that is'],
  ["there's", 'there is'],
  ["what's", 'what is'],
]);

/**
 * `normalizers.contractedWords`: `don't` -> `do not`, `i'm` -> `i am`, ... (whole words, any case; punctuation
 * right after the word stays).
 */
const contractedWords: Normalizer = (input) =>
  input
    .split(' ')
    .map((word) => {
      const [, core = '', trail = ''] = /^(.*?)([!?:.,;]*)$/su.exec(word) ?? [];
      const expanded = CONTRACTIONS.get(core.toLowerCase().replace(/[’‘´`]/g, "'"));
      return expanded === undefined ? word : expanded + trail;
    })
    .join(' ');

/**
 * `normalizers.allowedCharacter`: drops every character that is not a letter, a digit, whitespace or one of
 * `allowedCharacters` (default `!?:;.,`).
 */
function allowedCharacter(extension: SubExtension): Normalizer {
  const extra = readString(extension.config, 'allowedCharacters') ?? '!?:;.,';
  const disallowed = new RegExp(`[^\\p{L}\\p{N}\\s${escapeForClass(extra)}]`, 'gu');
  return (input) => input.replace(disallowed, '');
}

export function compileNormalizer(extension: SubExtension): Normalizer {
  switch (extension.kind) {
    case 'normalizers.punctuation':
      return punctuation(extension);
    case 'normalizers.specialCharacter':
      return specialCharacter;
    case 'normalizers.contractedWords':
      return contractedWords;
    case 'normalizers.allowedCharacter':
      return allowedCharacter(extension);
    default:
      throw new DeploymentError(`${extension.where}: unknown normalizer type '${extension.type}'.`);
  }
}

/** Runs the normalisers in order, then trims and collapses whitespace runs to one space. */
export function normalize(input: string, normalizers: readonly Normalizer[]): string {
  let text = input;
  for (const normalizer of normalizers) text = normalizer(text);
  return text.trim().replace(/\s+/g, ' ');
}
