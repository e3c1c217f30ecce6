import { Type, type Static } from '@sinclair/typebox';
import { kindNamed, type ResourceKindDefinition } from '../kinds.ts';
import type { SemanticProblem } from '../kinds.ts';
import { aliasRenamer, arrayField, closed, fieldPath, indexPath, type AliasSpec } from './common.ts';

const expressions = Type.Optional(
  Type.String({
    description:
      "Expressions emitted on a match, comma-separated, each of the form '<category>(<entity>)', e.g. 'greeting(hello)'. Without it the entry yields 'unused(<entry>)'.",
  }),
);

export const DictionaryWordSchema = closed(
  {
    word: Type.String({
      pattern: '^\\S+$',
      description: 'A single word (no spaces); matched case-insensitively against a whole input token.',
    }),
    expressions,
    frequency: Type.Optional(Type.Integer({ description: 'Weight used by a randomizer.' })),
  },
  { description: 'A dictionary word.' },
);

export const DictionaryPhraseSchema = closed(
  {
    phrase: Type.String({ minLength: 1, description: 'Several words separated by spaces.' }),
    expressions,
  },
  { description: 'A dictionary phrase.' },
);

export const DictionaryRegExSchema = closed(
  {
    regEx: Type.String({
      minLength: 1,
      description: 'Regular expression matched against a whole token (tried when nothing else matched).',
    }),
    expressions,
  },
  { description: 'A dictionary regular expression.' },
);

export const DictionarySchema = closed(
  {
    language: Type.Optional(
      Type.String({
        description:
          "Language code; when set, the dictionary is consulted only when it equals the conversation's 'lang' property.",
      }),
    ),
    words: Type.Optional(Type.Array(DictionaryWordSchema, { description: 'Single words.' })),
    phrases: Type.Optional(Type.Array(DictionaryPhraseSchema, { description: 'Multi-word phrases.' })),
    regExs: Type.Optional(Type.Array(DictionaryRegExSchema, { description: 'Regular expressions.' })),
  },
  {
    title: 'Dictionary',
    description: 'A regular dictionary: words, phrases and regular expressions mapped to expressions.',
  },
);
export type Dictionary = Static<typeof DictionarySchema>;

const entry: AliasSpec = { aliases: { exp: 'expressions', exps: 'expressions' } };

const aliases: AliasSpec = {
  aliases: { lang: 'language' },
  fields: { words: entry, phrases: entry, regExs: entry },
};

/** Regular expressions must compile (they are compiled at deployment). */
function checkSemantics(body: unknown): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  arrayField(body, 'regExs').forEach((entry, i) => {
    const path = fieldPath(indexPath('$.regExs', i), 'regEx');
    try {
      new RegExp(String(entry.regEx));
    } catch (error) {
      problems.push({
        path,
        message: `The regular expression at ${path} does not compile: ${(error as Error).message}.`,
      });
    }
  });
  return problems;
}

export const dictionaryKind: ResourceKindDefinition = {
  ...kindNamed('dictionary'),
  schema: DictionarySchema,
  renameAliases: aliasRenamer(aliases, DictionarySchema),
  checkSemantics,
  patchLists: {
    words: (entry) => String(entry.word),
    phrases: (entry) => String(entry.phrase),
    regExs: (entry) => String(entry.regEx),
  },
};
