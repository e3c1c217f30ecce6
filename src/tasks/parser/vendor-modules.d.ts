// Type declarations for the untyped phonetics and stemming packages the parser uses.

declare module 'talisman/phonetics/double-metaphone.js' {
  /** Primary and alternate Double Metaphone codes (empty strings when the word has no letters). */
  const doubleMetaphone: (word: string) => [string, string];
  export default doubleMetaphone;
}

declare module 'talisman/phonetics/soundex.js' {
  const soundex: ((word: string) => string) & {
    /** Refined Soundex code (empty string when the word has no letters). */
    readonly refined: (word: string) => string;
  };
  export default soundex;
}

declare module 'snowball-stemmers' {
  interface SnowballStemmer {
    stem(word: string): string;
  }
  const snowball: {
    newStemmer(algorithm: string): SnowballStemmer;
    algorithms(): string[];
  };
  export default snowball;
}
