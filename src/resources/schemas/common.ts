import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { invalid } from '../../errors.ts';
import { kindNamed, kindOfUriType, type KindName, type SemanticProblem } from '../kinds.ts';
import { formatReference, parseReference } from '../uri.ts';
import { isRecord } from '../../shared/json.ts';
import { parseContext } from '../../runtime/context.ts';

/*
 * Helpers shared by the kind schemas: schema building blocks, the property-instruction schema (property
 * setters, HTTP-call pre/post instructions, LLM pre/post instructions), the generic alias renamer, the
 * reference-form check and JSON-path helpers.
 */

/**
 * A reference written with an upstream host or store path (`svc://ai.svc.rules/rulestore/rulesets/<id>?version=1`)
 * in the spec's form (`svc://ai.svc.behavior/behaviorstore/behaviorsets/<id>?version=1`). Anything that is not a
 * well-formed reference to a configuration kind is returned unchanged (the semantic check reports it).
 */
export function canonicalReference(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const reference = parseReference(value);
  if (!reference) return value;
  const kind = kindOfUriType(reference.type);
  if (!kind) return value;
  return formatReference(kind.uriType, kind.storePath, reference.id, reference.version);
}

/**
 * Checks that `value` is a reference (`svc://ai.svc.<type>/<store path>/<id>?version=<n>`) whose type host names a
 * configuration kind, and, when `expected` is given, one of those kinds.
 */
export function checkReference(
  value: unknown,
  path: string,
  expected?: readonly KindName[],
): SemanticProblem | undefined {
  const reference = typeof value === 'string' ? parseReference(value) : undefined;
  if (!reference) {
    return {
      path,
      message: `'${String(value)}' at ${path} is not a resource reference of the form svc://ai.svc.<type>/<store path>/<24 hex id>?version=<n>.`,
    };
  }
  const kind = kindOfUriType(reference.type)?.name;
  if (!kind) {
    return {
      path,
      message: `The reference at ${path} names the type 'ai.svc.${reference.type}', which is not a configuration kind.`,
    };
  }
  if (expected && !expected.includes(kind)) {
    const wanted = expected.map((k) => `ai.svc.${kindNamed(k).uriType}`).join(' or ');
    return { path, message: `The reference at ${path} must name ${wanted}, not 'ai.svc.${reference.type}'.` };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON paths (same notation as validation.ts: `$.a[0].b`, `$["odd key"]`)
// ---------------------------------------------------------------------------------------------------------------

export function fieldPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

export function indexPath(path: string, index: number): string {
  return `${path}[${index}]`;
}

// ---------------------------------------------------------------------------------------------------------------
// Value helpers
// ---------------------------------------------------------------------------------------------------------------

export type JsonObject = Record<string, unknown>;

/** Sets an own property, also for keys such as `__proto__` that plain assignment would treat specially. */
export function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `record[key]` when it is the record's own entry (so that keys such as `constructor` find nothing). */
export function ownEntry<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

export function isBlank(value: unknown): boolean {
  return typeof value !== 'string' || value.trim() === '';
}

/** Array members of `value[key]` with their index, or nothing when the field is absent or not an array. */
export function arrayField(value: unknown, key: string): JsonObject[] {
  if (!isRecord(value)) return [];
  const list = value[key];
  return Array.isArray(list) ? (list as JsonObject[]) : [];
}

// ---------------------------------------------------------------------------------------------------------------
// Schema building blocks
// ---------------------------------------------------------------------------------------------------------------

/** An object schema that rejects every field it does not list. */
export function closed<T extends Parameters<typeof Type.Object>[0]>(
  properties: T,
  options: { description?: string; title?: string } = {},
) {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

/** A free map of string to string (condition configs, LLM parameters, headers, query parameters, ...). */
export function stringMap(description: string) {
  return Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' }, description });
}

/** A free map whose values are scalars (string, number, boolean). */
export function scalarMap(description: string, properties: Record<string, TSchema> = {}) {
  return Type.Unsafe<Record<string, string | number | boolean>>({
    type: 'object',
    properties,
    additionalProperties: { type: ['string', 'number', 'boolean'] },
    description,
  });
}

/** Any JSON object (free form). */
export function freeObject(description: string) {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object', description });
}

/**
 * One item or a list of items. Written with if/then/else rather than anyOf so that a validation error names the
 * exact field inside the item (anyOf would report the first branch's error).
 */
export function oneOrMany<T extends TSchema>(item: T, description: string) {
  return Type.Unsafe<Static<T> | Static<T>[]>({
    description,
    if: { type: 'array' },
    then: Type.Array(item),
    else: item,
  });
}

/**
 * A schema choosing one of several closed object schemas by the value of a discriminator field. The base lists
 * the discriminator's legal values; each branch is applied with if/then, so that an unknown field is reported
 * against the branch that applies.
 */
export function discriminated<S>(
  discriminator: string,
  branches: Readonly<Record<string, TSchema>>,
  description: string,
) {
  return Type.Unsafe<S>({
    type: 'object',
    description,
    required: [discriminator],
    properties: { [discriminator]: { type: 'string', enum: Object.keys(branches) } },
    allOf: Object.entries(branches).map(([value, then]) => ({
      if: { type: 'object', required: [discriminator], properties: { [discriminator]: { const: value } } },
      then,
    })),
  });
}

/** One of a fixed set of strings (an `enum`, which reads better in errors and documents than a union of constants). */
export function stringEnum<const T extends readonly string[]>(values: T, description: string) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });
}

/** Context sent with a message: `{name: {type, value}}` (`src/runtime/context.ts` reads it). */
export const ContextSchema = Type.Record(
  Type.String(),
  closed({
    type: stringEnum(['string', 'expressions', 'object', 'array'] as const, 'Type of the value.'),
    value: Type.Unknown(),
  }),
  { description: 'Context sent with the message.' },
);

/** A context a message could not carry (a value of another type than it says) is refused when written, not at run time. */
export function checkContext(context: unknown, path: string): SemanticProblem[] {
  try {
    parseContext(context, path);
    return [];
  } catch (error) {
    return [{ path, message: (error as Error).message }];
  }
}

export const StringList = (description: string) => Type.Array(Type.String(), { description });

// ---------------------------------------------------------------------------------------------------------------
// Property instructions (property setters, HTTP-call and LLM pre/post instructions)
// ---------------------------------------------------------------------------------------------------------------

export const PROPERTY_SCOPES = ['step', 'conversation', 'longTerm', 'secret'] as const;

export const HttpCodeValidatorSchema = closed(
  {
    runOnHttpCode: Type.Optional(
      Type.Array(Type.Integer(), { description: 'Run only on these HTTP status codes (default 200, 201).' }),
    ),
    skipOnHttpCode: Type.Optional(Type.Array(Type.Integer(), { description: 'Never run on these HTTP status codes.' })),
  },
  { description: 'Decides from the HTTP status whether a post-response instruction runs (HTTP calls only).' },
);

export const PropertyInstructionSchema = closed(
  {
    name: Type.Optional(Type.String({ description: 'Property name (templated).' })),
    fromObjectPath: Type.Optional(
      Type.String({
        description: "Path of the value in the template data, e.g. 'memory.current.input' or 'properties.count+1'.",
      }),
    ),
    toObjectPath: Type.Optional(
      Type.String({
        description: 'Copies the value to this path of the transient template data instead of setting a property.',
      }),
    ),
    scope: Type.Optional(
      stringEnum(
        PROPERTY_SCOPES,
        "'step' (one turn), 'conversation' (default), 'longTerm' (across conversations of the user), 'secret' (stored in the vault).",
      ),
    ),
    valueString: Type.Optional(Type.String({ description: 'Literal text value (templated).' })),
    valueObject: Type.Optional(freeObject('Literal object value.')),
    valueList: Type.Optional(Type.Array(Type.Unknown(), { description: 'Literal list value.' })),
    valueInt: Type.Optional(Type.Integer({ description: 'Literal integer value.' })),
    valueFloat: Type.Optional(Type.Number({ description: 'Literal number value.' })),
    valueBoolean: Type.Optional(Type.Boolean({ description: 'Literal boolean value.' })),
    override: Type.Optional(
      Type.Boolean({ description: 'Overwrite an existing property of that name (default true).' }),
    ),
    convertToObject: Type.Optional(
      Type.Boolean({ description: "Parse a '{...}' text value into an object (HTTP-call instructions)." }),
    ),
    visibility: Type.Optional(
      Type.Literal('global', {
        description:
          "Sharing scope of a long-term property: only 'global' (every agent of the same user sees it, the original's default); narrower scopes are not available here and are refused.",
      }),
    ),
    runOnValidationError: Type.Optional(
      Type.Boolean({ description: 'Run even when the HTTP response failed its validation matchers (default false).' }),
    ),
    httpCodeValidator: Type.Optional(HttpCodeValidatorSchema),
  },
  { description: 'Sets one property (or copies a value inside the template data).' },
);
export type PropertyInstruction = Static<typeof PropertyInstructionSchema>;

export const PropertyInstructionList = Type.Array(PropertyInstructionSchema, {
  description: 'Property instructions, run in order.',
});

/** Upstream's action-keyed form of property instructions (`setOnActions[]`). */
export const SetOnActionSchema = closed(
  {
    actions: Type.Union([Type.Array(Type.String()), Type.String()], {
      description: "Actions that trigger these instructions ('*' = every action); a list, or one action as text.",
    }),
    setProperties: Type.Optional(PropertyInstructionList),
  },
  { description: 'Property instructions run for each matching action of the step.' },
);
export const SetOnActionList = Type.Array(SetOnActionSchema, { description: 'Action-keyed property instructions.' });

/** Instructions that set nothing at all: neither a property `name` nor a `toObjectPath`. */
export function checkPropertyInstructions(list: unknown, path: string): SemanticProblem[] {
  if (!Array.isArray(list)) return [];
  const problems: SemanticProblem[] = [];
  list.forEach((instruction, i) => {
    if (isRecord(instruction) && isBlank(instruction.name) && isBlank(instruction.toObjectPath)) {
      const at = indexPath(path, i);
      problems.push({
        path: fieldPath(at, 'name'),
        message: `The property instruction at ${at} needs a 'name' (or a 'toObjectPath').`,
      });
    }
  });
  return problems;
}

export function checkSetOnActions(list: unknown, path: string): SemanticProblem[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry, i) =>
    isRecord(entry)
      ? checkPropertyInstructions(entry.setProperties, fieldPath(indexPath(path, i), 'setProperties'))
      : [],
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Alias renaming
// ---------------------------------------------------------------------------------------------------------------

/**
 * How to translate one value of a body. Applies to the value itself, or to each member when it is an array.
 * - `aliases`: upstream field name -> spec field name, for the fields of this object;
 * - `fields`: spec field name -> how to translate that field's value;
 * - `value`: rewrites the (renamed) value, e.g. a reference or an extension type.
 */
export interface AliasSpec {
  readonly aliases?: Readonly<Record<string, string>>;
  readonly fields?: Readonly<Record<string, AliasSpec>>;
  readonly value?: (value: unknown) => unknown;
}

/**
 * Returns a copy of `value` with upstream field names replaced by the spec's, at every depth described by `spec`.
 * A name given together with its alias (or two aliases of one name) is refused, unless one of them is null.
 * Unknown fields stay where they are, for the schema to reject. The input is never modified.
 */
export function renameFields(spec: AliasSpec, value: unknown, path = '$'): unknown {
  if (Array.isArray(value)) return value.map((item, i) => renameFields(spec, item, indexPath(path, i)));
  if (!isRecord(value)) return spec.value ? spec.value(value) : value;
  const out: JsonObject = {};
  const writtenAs = new Map<string, string>();
  for (const [key, raw] of Object.entries(value)) {
    const target = ownEntry(spec.aliases, key) ?? key;
    const earlier = writtenAs.get(target);
    if (earlier !== undefined) {
      if (raw === null) continue;
      if (value[earlier] !== null) {
        throw invalid(
          `The fields '${earlier}' and '${key}' at ${path} name the same field ('${target}'; the other is an upstream alias); give only one of them.`,
          { path, fields: [earlier, key] },
        );
      }
    }
    writtenAs.set(target, key);
    const child = ownEntry(spec.fields, target);
    setOwn(out, target, child ? renameFields(child, raw, fieldPath(path, key)) : raw);
  }
  return spec.value ? spec.value(out) : out;
}

// ---------------------------------------------------------------------------------------------------------------
// Nulls given for optional fields (upstream exports write every absent field as null)
// ---------------------------------------------------------------------------------------------------------------

type SchemaNode = Record<string, unknown>;

function ifMatches(condition: SchemaNode, value: unknown): boolean {
  if (condition.type === 'array') return Array.isArray(value);
  if (!isRecord(value)) return false;
  const properties = condition.properties;
  if (!isRecord(properties)) return true;
  return Object.entries(properties).every(
    ([key, sub]) => !isRecord(sub) || !('const' in sub) || value[key] === sub.const,
  );
}

function typeMatches(schema: SchemaNode, value: unknown): boolean {
  const type = schema.type;
  if (type === 'object') return isRecord(value);
  if (type === 'array') return Array.isArray(value);
  if (type === undefined) return true;
  return typeof value === type || (type === 'integer' && typeof value === 'number');
}

/** The sub-schema that applies to `value` once if/then/else, anyOf and allOf-of-if/then are resolved. */
export function effectiveSchema(schema: SchemaNode, value: unknown): SchemaNode {
  let current = schema;
  for (let guard = 0; guard < 16; guard++) {
    const condition = current.if;
    if (isRecord(condition)) {
      const next = ifMatches(condition, value) ? current.then : current.else;
      if (!isRecord(next)) return current;
      current = next;
      continue;
    }
    const anyOf = current.anyOf;
    if (Array.isArray(anyOf)) {
      const branch = (anyOf as SchemaNode[]).find((b) => typeMatches(b, value));
      if (!branch) return current;
      current = branch;
      continue;
    }
    const allOf = current.allOf;
    if (Array.isArray(allOf)) {
      const hit = (allOf as SchemaNode[])
        .map((s) => effectiveSchema(s, value))
        .find((s) => s !== undefined && isRecord(s.properties) && !('if' in s));
      // The branch that applies refines the object's own fields (it may list only those it changes).
      if (hit) {
        const own = isRecord(current.properties) ? current.properties : {};
        const required = [current.required, hit.required].flatMap((list) => (Array.isArray(list) ? list : []));
        return { ...hit, properties: { ...own, ...(hit.properties as SchemaNode) }, required };
      }
    }
    return current;
  }
  return current;
}

/**
 * Returns a copy of `value` without the fields that are `null` where the schema declares them optional. Nulls
 * anywhere else (required fields, unknown fields, free maps) stay, for the schema to reject.
 */
export function dropNullOptionals(schema: unknown, value: unknown): unknown {
  if (!isRecord(schema)) return value;
  const effective = effectiveSchema(schema, value);
  if (Array.isArray(value)) {
    const items = effective.items;
    return isRecord(items) ? value.map((item) => dropNullOptionals(items, item)) : value;
  }
  if (!isRecord(value)) return value;
  const properties = effective.properties;
  if (!isRecord(properties)) return value;
  const required = Array.isArray(effective.required) ? (effective.required as string[]) : [];
  const out: JsonObject = {};
  for (const [key, field] of Object.entries(value)) {
    const known = Object.hasOwn(properties, key);
    if (field === null && known && !required.includes(key)) continue;
    setOwn(out, key, known ? dropNullOptionals(properties[key], field) : field);
  }
  return out;
}

/** The `renameAliases` of a kind: rename by `spec`, then drop nulls given for optional fields of `schema`. */
export function aliasRenamer(spec: AliasSpec, schema: TSchema): (body: unknown) => unknown {
  return (body) => dropNullOptionals(schema, renameFields(spec, body));
}
