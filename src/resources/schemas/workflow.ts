import { Type, type Static } from '@sinclair/typebox';
import type { ResourceKindDefinition, SemanticProblem } from '../kinds.ts';
import { parseExtensionType } from '../uri.ts';
import {
  aliasRenamer,
  arrayField,
  canonicalReference,
  checkReference,
  checkSetOnActions,
  closed,
  fieldPath,
  indexPath,
  kindLocations,
  ownEntry,
  scalarMap,
  SetOnActionList,
  type AliasSpec,
  type JsonObject,
  type KindName,
} from './common.ts';
import { isRecord } from '../../shared/json.ts';

const uri = Type.Optional(
  Type.String({ description: 'Reference of the resource the extension uses: svc://ai.svc.<type>/<store path>/<id>?version=<n>.' }),
);

export const ExtensionConfigSchema = closed(
  {
    uri,
    appendActions: Type.Optional(Type.Boolean({ description: "Behavior: append the produced actions to the step's actions (overrides the behavior set)." })),
    expressionsAsActions: Type.Optional(Type.Boolean({ description: 'Behavior: also add the names of the input expressions as actions.' })),
    setOnActions: Type.Optional(SetOnActionList),
    appendExpressions: Type.Optional(Type.Boolean({ description: 'Parser: merge with expressions already parsed in this step (default true).' })),
    includeUnused: Type.Optional(Type.Boolean({ description: "Parser: keep 'unused(...)' expressions (default true)." })),
    includeUnknown: Type.Optional(Type.Boolean({ description: "Parser: keep 'unknown(...)' expressions (default true)." })),
    maxInputTokens: Type.Optional(Type.Integer({ minimum: 1, description: 'Parser: tokens parsed at most (default 200).' })),
    maxSuggestions: Type.Optional(Type.Integer({ minimum: 1, description: 'Parser: alternative combinations tried at most (default 1000).' })),
    maxSolutions: Type.Optional(Type.Integer({ minimum: 1, description: 'Parser: solutions kept at most (default 100).' })),
  },
  { description: 'Type-specific configuration of a workflow extension; each field says which extension reads it.' },
);

export const SubExtensionSchema = closed(
  {
    type: Type.String({ description: "Type of a parser dictionary, correction or normalizer, e.g. 'svc://ai.svc.parser.dictionaries.regular'." }),
    config: Type.Optional(
      scalarMap('Configuration of the dictionary, correction or normalizer.', {
        uri: Type.String({ description: 'Regular dictionary: reference of the dictionary.' }),
        distance: Type.Integer({ description: 'Levenshtein: largest edit distance (default 2).' }),
        maxCandidates: Type.Integer({ description: 'Levenshtein: candidates kept (default 5).' }),
        lookupIfKnown: Type.Boolean({ description: 'Corrections: also correct tokens that are already known.' }),
        language: Type.String({ description: "Stemming: language ('english', 'german', ... or 'en', 'de', ...)." }),
        removePunctuation: Type.Boolean({ description: 'Punctuation normalizer: remove punctuation instead of spacing it out.' }),
        punctuationRegexPattern: Type.String({ description: 'Punctuation normalizer: the punctuation characters.' }),
      }),
    ),
  },
  { description: 'A parser dictionary, correction or normalizer.' },
);

export const ExtensionsSchema = closed(
  {
    uri,
    dictionaries: Type.Optional(Type.Array(SubExtensionSchema, { description: 'Parser: dictionaries, consulted in order.' })),
    corrections: Type.Optional(Type.Array(SubExtensionSchema, { description: 'Parser: corrections, tried in order.' })),
    normalizer: Type.Optional(Type.Array(SubExtensionSchema, { description: 'Parser: input normalizers, run in order.' })),
  },
  { description: 'Nested definitions of an extension.' },
);

export const PackageExtensionSchema = closed(
  {
    type: Type.String({ description: "Extension type 'svc://ai.svc.<name>': parser, behavior, property, httpcalls, llm, output, templating." }),
    extensions: Type.Optional(ExtensionsSchema),
    config: Type.Optional(ExtensionConfigSchema),
  },
  { description: 'One workflow extension (lifecycle task).' },
);

export const WorkflowSchema = closed(
  {
    packageExtensions: Type.Array(PackageExtensionSchema, { description: 'Extensions, in execution order.' }),
  },
  { title: 'Workflow', description: 'A workflow (package): an ordered list of lifecycle extensions.' },
);
export type Workflow = Static<typeof WorkflowSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Aliases: upstream field names, extension types and reference hosts/paths
// ---------------------------------------------------------------------------------------------------------------

const EXTENSION_TYPE_ALIASES: Readonly<Record<string, string>> = {
  'svc://ai.svc.rules': 'svc://ai.svc.behavior',
  'svc://ai.svc.apicalls': 'svc://ai.svc.httpcalls',
};

const reference: AliasSpec = { value: canonicalReference };
const subExtension: AliasSpec = { fields: { config: { fields: { uri: reference } } } };

const aliases: AliasSpec = {
  aliases: { workflowSteps: 'packageExtensions', workflowExtensions: 'packageExtensions' },
  fields: {
    packageExtensions: {
      fields: {
        type: { value: (type) => (typeof type === 'string' ? (ownEntry(EXTENSION_TYPE_ALIASES, type) ?? type) : type) },
        config: { fields: { uri: reference } },
        extensions: { fields: { uri: reference, dictionaries: subExtension, corrections: subExtension, normalizer: subExtension } },
      },
    },
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Semantic checks
// ---------------------------------------------------------------------------------------------------------------

interface ExtensionRules {
  /** `config` fields the extension reads. */
  readonly config: readonly string[];
  /** `extensions` fields the extension reads. */
  readonly extensions: readonly string[];
  /** Kind a `uri` of this extension must reference. */
  readonly references?: KindName;
}

const PARSER_CONFIG = ['appendExpressions', 'includeUnused', 'includeUnknown', 'maxInputTokens', 'maxSuggestions', 'maxSolutions'];

/** The extension types the service knows; other well-formed types are accepted here and fail at deployment. */
const KNOWN_EXTENSIONS: Readonly<Record<string, ExtensionRules>> = {
  'svc://ai.svc.parser': { config: PARSER_CONFIG, extensions: ['dictionaries', 'corrections', 'normalizer'] },
  'svc://ai.svc.behavior': { config: ['uri', 'appendActions', 'expressionsAsActions'], extensions: ['uri'], references: 'behavior' },
  'svc://ai.svc.property': { config: ['uri', 'setOnActions'], extensions: ['uri'], references: 'property' },
  'svc://ai.svc.httpcalls': { config: ['uri'], extensions: ['uri'], references: 'httpcalls' },
  'svc://ai.svc.llm': { config: ['uri'], extensions: ['uri'], references: 'llm' },
  'svc://ai.svc.output': { config: ['uri'], extensions: ['uri'], references: 'output' },
  'svc://ai.svc.templating': { config: [], extensions: [] },
};

function checkType(type: unknown, path: string, problems: SemanticProblem[]): void {
  if (typeof type !== 'string' || parseExtensionType(type) === undefined) {
    problems.push({ path, message: `The extension type '${String(type)}' at ${path} is not of the form svc://ai.svc.<name>.` });
  }
}

function checkUri(holder: unknown, path: string, expected: readonly KindName[] | undefined, problems: SemanticProblem[]): void {
  if (!isRecord(holder) || holder['uri'] === undefined) return;
  const problem = checkReference(holder['uri'], fieldPath(path, 'uri'), expected);
  if (problem) problems.push(problem);
}

function checkUnread(holder: unknown, path: string, type: string, allowed: readonly string[], problems: SemanticProblem[]): void {
  if (!isRecord(holder)) return;
  for (const key of Object.keys(holder)) {
    if (!allowed.includes(key)) {
      const at = fieldPath(path, key);
      problems.push({ path: at, message: `The field '${key}' at ${at} is not used by the extension '${type}'.` });
    }
  }
}

function checkSubExtensions(list: unknown, path: string, expected: readonly KindName[] | undefined, problems: SemanticProblem[]): void {
  if (!Array.isArray(list)) return;
  list.forEach((sub, i) => {
    if (!isRecord(sub)) return;
    const at = indexPath(path, i);
    checkType(sub['type'], fieldPath(at, 'type'), problems);
    checkUri(sub['config'], fieldPath(at, 'config'), expected, problems);
  });
}

function checkExtension(extension: JsonObject, path: string, problems: SemanticProblem[]): void {
  const type = extension['type'];
  checkType(type, fieldPath(path, 'type'), problems);
  const rules = typeof type === 'string' ? ownEntry(KNOWN_EXTENSIONS, type) : undefined;
  const expected = rules?.references ? [rules.references] : undefined;
  const config = extension['config'];
  const extensions = extension['extensions'];
  const configPath = fieldPath(path, 'config');
  const extensionsPath = fieldPath(path, 'extensions');

  checkUri(config, configPath, expected, problems);
  checkUri(extensions, extensionsPath, expected, problems);
  if (isRecord(config) && isRecord(extensions) && typeof config['uri'] === 'string' && typeof extensions['uri'] === 'string') {
    if (canonicalReference(config['uri']) !== canonicalReference(extensions['uri'])) {
      problems.push({
        path: fieldPath(extensionsPath, 'uri'),
        message: `The extension at ${path} gives two different references in 'config.uri' and 'extensions.uri'; give one.`,
      });
    }
  }
  if (isRecord(extensions)) {
    checkSubExtensions(extensions['dictionaries'], fieldPath(extensionsPath, 'dictionaries'), ['dictionary'], problems);
    checkSubExtensions(extensions['corrections'], fieldPath(extensionsPath, 'corrections'), undefined, problems);
    checkSubExtensions(extensions['normalizer'], fieldPath(extensionsPath, 'normalizer'), undefined, problems);
  }
  if (isRecord(config)) problems.push(...checkSetOnActions(config['setOnActions'], fieldPath(configPath, 'setOnActions')));
  if (rules && typeof type === 'string') {
    checkUnread(config, configPath, type, rules.config, problems);
    checkUnread(extensions, extensionsPath, type, rules.extensions, problems);
  }
}

function checkSemantics(body: unknown): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  arrayField(body, 'packageExtensions').forEach((extension, i) => checkExtension(extension, indexPath('$.packageExtensions', i), problems));
  return problems;
}

export const workflowKind: ResourceKindDefinition = {
  name: 'workflow',
  title: 'workflow',
  ...kindLocations.workflow,
  schema: WorkflowSchema,
  renameAliases: aliasRenamer(aliases, WorkflowSchema),
  checkSemantics,
};
