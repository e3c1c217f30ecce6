import type { TSchema } from '@sinclair/typebox';
import { isRecord } from '../shared/json.ts';
import type { KindBody, KindName } from './kinds.ts';
import { effectiveSchema, setOwn, type JsonObject } from './schemas/common.ts';
import { migrateLocationSubstrings } from './upstream-locations.ts';

/*
 * The migrations the original service applies to the files its users bring (exports of releases 4.x to 6.x, and
 * bodies written in its documentation's form), applied here to every configuration body on input: store bodies
 * and ZIP imports alike (DESIGN §4.23). Each migration is one function from a body to a new body; none modifies
 * its input, and each leaves a body already in this service's form as it is. A migration only rewrites a shape
 * that the original wrote and this service's schema refuses, so strict validation of our own format stays:
 * anything the migrations do not recognise still reaches the schema, which names it in a 400.
 */

/** A copy of `value` with `key` set, also for keys such as `__proto__`. */
function withField(value: JsonObject, key: string, field: unknown): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    setOwn(out, k, v);
  }
  setOwn(out, key, field);
  return out;
}

function without(value: JsonObject, ...keys: string[]): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (!keys.includes(k)) setOwn(out, k, v);
  }
  return out;
}

/** Renames `from` to `to` when only `from` is given (both given: left for the schema to refuse `from`). */
function renamed(value: JsonObject, from: string, to: string): JsonObject {
  if (!Object.hasOwn(value, from) || Object.hasOwn(value, to)) return value;
  return withField(without(value, from), to, value[from]);
}

/** `value[key]` mapped member by member when it is an array; the value unchanged otherwise. */
function mapList(value: JsonObject, key: string, migrate: (item: unknown) => unknown): JsonObject {
  const list = value[key];
  return Array.isArray(list) ? withField(value, key, list.map(migrate)) : value;
}

function mapObject(value: JsonObject, key: string, migrate: (item: JsonObject) => JsonObject): JsonObject {
  const field = value[key];
  return isRecord(field) ? withField(value, key, migrate(field)) : value;
}

// ---------------------------------------------------------------------------------------------------------------
// Agents
// ---------------------------------------------------------------------------------------------------------------

/** Releases 4.x kept Git backup settings in the agent; later releases dropped the feature and the field. */
export function dropGitBackupSettings(agent: JsonObject): JsonObject {
  return without(agent, 'gitBackupSettings');
}

// ---------------------------------------------------------------------------------------------------------------
// Output sets
// ---------------------------------------------------------------------------------------------------------------

const KEPT_FIELDS_OF_INFERRED_ITEM: Readonly<Record<string, readonly string[]>> = {
  text: ['text', 'delay'],
  image: ['uri', 'alt'],
  inputField: ['subType', 'label', 'defaultValue', 'placeholder', 'validation'],
  button: ['buttonType', 'label', 'onPress'],
};

const filled = (value: unknown) => value !== undefined && value !== null && value !== '';

/**
 * An output item written before items were typed: its type is inferred from its fields as the original does
 * (text, uri, expressions, placeholder, onPress; anything else is `other`), an `isPassword` input field becomes
 * `subType: "password"`, and the fields the inferred type does not have are dropped (`other` keeps its text fields).
 * The avatar item's retired type name `botFace` becomes `agentFace`. Typed items stay as they are.
 */
export function typeLegacyOutputItem(item: unknown): unknown {
  if (!isRecord(item)) return item;
  if (item.type === 'botFace') return withField(item, 'type', 'agentFace');
  if (filled(item.type) && item.type !== 'other') return item;
  let type = 'other';
  if (filled(item.text)) type = 'text';
  else if (filled(item.uri)) type = 'image';
  else if (filled(item.expressions)) type = 'quickReply';
  else if (filled(item.placeholder)) type = 'inputField';
  else if (filled(item.onPress)) type = 'button';
  let typed = withField(item, 'type', type);
  if (type === 'inputField' && String(item.isPassword) === 'true') typed = withField(typed, 'subType', 'password');
  const kept = KEPT_FIELDS_OF_INFERRED_ITEM[type];
  if (kept) return without(typed, ...Object.keys(typed).filter((key) => key !== 'type' && !kept.includes(key)));
  if (type === 'quickReply') return migrateQuickReplyDefault(without(typed, 'isPassword'));
  return without(typed, ...Object.keys(typed).filter((key) => typed[key] !== null && typeof typed[key] !== 'string'));
}

/** Quick replies: the original serialised its `isDefault` flag as `default`. */
export function migrateQuickReplyDefault(reply: unknown): unknown {
  return isRecord(reply) ? renamed(reply, 'default', 'isDefault') : reply;
}

/**
 * Output sets: each output position once carried a `type` (`text`, `textInput`, ...) that later releases dropped
 * (the items carry their types); untyped items are typed (`typeLegacyOutputItem`); quick replies' `default`
 * becomes `isDefault`.
 */
export function migrateOutputSet(set: JsonObject): JsonObject {
  return mapList(set, 'outputSet', (entry) => {
    if (!isRecord(entry)) return entry;
    const withOutputs = mapList(entry, 'outputs', (output) => {
      if (!isRecord(output)) return output;
      return mapList(without(output, 'type'), 'valueAlternatives', typeLegacyOutputItem);
    });
    return mapList(withOutputs, 'quickReplies', migrateQuickReplyDefault);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Behavior sets
// ---------------------------------------------------------------------------------------------------------------

/**
 * A rule condition of releases 4.x: its parameters were `values` (now `configs`, every value as text) and its
 * child conditions `children` (now `conditions`).
 */
export function migrateLegacyCondition(condition: unknown): unknown {
  if (!isRecord(condition)) return condition;
  let out = renamed(renamed(condition, 'values', 'configs'), 'children', 'conditions');
  out = mapObject(out, 'configs', (configs) => {
    const text: JsonObject = {};
    for (const [key, value] of Object.entries(configs)) {
      const scalar = typeof value === 'number' || typeof value === 'boolean';
      setOwn(text, key, scalar ? String(value) : value);
    }
    return text;
  });
  return mapList(out, 'conditions', migrateLegacyCondition);
}

/** Behavior sets: a rule's conditions were once its `children`; conditions migrate as `migrateLegacyCondition`. */
export function migrateBehaviorSet(set: JsonObject): JsonObject {
  const migrateRule = (rule: unknown) =>
    isRecord(rule) ? mapList(renamed(rule, 'children', 'conditions'), 'conditions', migrateLegacyCondition) : rule;
  const migrateGroup = (group: unknown) => (isRecord(group) ? mapList(group, 'behaviorRules', migrateRule) : group);
  return mapList(set, 'behaviorGroups', migrateGroup);
}

// ---------------------------------------------------------------------------------------------------------------
// Property instructions (property setters, HTTP calls)
// ---------------------------------------------------------------------------------------------------------------

const LEGACY_UUID_EXPRESSIONS = [
  '[[${@java.util.UUID@randomUUID()}]]',
  '[# th:with="uuid=${@java.util.UUID@randomUUID()}"][[${uuid}]][/]',
];

/**
 * A property instruction of releases before 5: one untyped `value` instead of the typed `valueString`,
 * `valueObject`, `valueList`, `valueBoolean`, `valueInt` and `valueFloat`. The value moves to the field of its
 * JSON type; the Java UUID expression becomes `{uuidUtils:generateUUID()}`. An instruction that gives `value`
 * besides a typed field is left for the schema to refuse.
 */
export function migrateUntypedPropertyValue(instruction: unknown): unknown {
  if (!isRecord(instruction) || !Object.hasOwn(instruction, 'value')) return instruction;
  const typedFields = ['valueString', 'valueObject', 'valueList', 'valueBoolean', 'valueInt', 'valueFloat'];
  if (typedFields.some((field) => Object.hasOwn(instruction, field))) return instruction;
  let value = instruction.value;
  let field: string;
  if (value === null || typeof value === 'string') {
    field = 'valueString';
    if (typeof value === 'string' && LEGACY_UUID_EXPRESSIONS.includes(value)) value = '{uuidUtils:generateUUID()}';
  } else if (Array.isArray(value)) field = 'valueList';
  else if (isRecord(value)) field = 'valueObject';
  else if (typeof value === 'boolean') field = 'valueBoolean';
  else if (typeof value === 'number') field = Number.isInteger(value) ? 'valueInt' : 'valueFloat';
  else return instruction;
  return value === null ? without(instruction, 'value') : withField(without(instruction, 'value'), field, value);
}

/** Property setters: `setOnActions[].setProperties[]` migrate as `migrateUntypedPropertyValue`. */
export function migratePropertySetter(setter: JsonObject): JsonObject {
  return mapList(setter, 'setOnActions', (entry) =>
    isRecord(entry) ? mapList(entry, 'setProperties', migrateUntypedPropertyValue) : entry,
  );
}

/**
 * HTTP-call sets: the base URL was `targetServer` (later `targetServerUri`) before `targetServerUrl`; the property
 * instructions before a request and after a response migrate as `migrateUntypedPropertyValue`.
 */
export function migrateHttpCallSet(set: JsonObject): JsonObject {
  const base = renamed(renamed(set, 'targetServer', 'targetServerUrl'), 'targetServerUri', 'targetServerUrl');
  const instructions = (part: JsonObject) => mapList(part, 'propertyInstructions', migrateUntypedPropertyValue);
  return mapList(base, 'httpCalls', (call) =>
    isRecord(call) ? mapObject(mapObject(call, 'preRequest', instructions), 'postResponse', instructions) : call,
  );
}

/**
 * LLM configurations: `injectionStrategy` and `contextTemplate` on a task's `knowledgeBases[]` and `ragDefaults`
 * were never read by the original (context always goes to the system message); it drops them on load, so do we.
 */
export function migrateLlmConfiguration(configuration: JsonObject): JsonObject {
  const unread = (entry: JsonObject) => without(entry, 'injectionStrategy', 'contextTemplate');
  return mapList(configuration, 'tasks', (task) =>
    isRecord(task)
      ? mapObject(
          mapList(task, 'knowledgeBases', (entry) => (isRecord(entry) ? unread(entry) : entry)),
          'ragDefaults',
          unread,
        )
      : task,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Templates (every string of every kind)
// ---------------------------------------------------------------------------------------------------------------

const INLINE = /\[\[\$\{\s*([^}]*?)\s*\}\]\]|\[\(\$\{\s*([^}]*?)\s*\}\)\]/g;
const BLOCK = /\[#\s*th:(each|if|unless)\s*=\s*"([^"]*)"\s*\]|\[\/(?:th:block)?\]/g;
const EACH = /^\s*(\w+)\s*(?:,\s*\w+\s*)?:\s*\$\{\s*(.+?)\s*\}\s*$/;
const CONDITION = /^\s*\$\{\s*(.+?)\s*\}\s*$/;
const LEGACY_VAULT = /\$\{[A-Za-z][\w-]*vault:/g;
/** `#strings.outer(#strings.inner(target, args))` */
const NESTED_STRINGS_CALL = /#strings\.(\w+)\(\s*#strings\.(\w+)\(\s*([^,()]+?)\s*(?:,\s*([^()]*?))?\s*\)\s*\)/g;
const HELPER_NAMESPACE = /#(uuidUtils|json|encoder)\./g;
/** `json.serialize(x)` without the `#` (Bot Father 1.0 writes it so): the JSON helper, not a data name. */
const BARE_JSON_HELPER = /(?<![\w.#])json\.(serialize|deserialize)\(/g;

function migrateBlocks(text: string): string {
  const open: string[] = [];
  return text.replace(BLOCK, (whole, kind: string | undefined, attribute: string | undefined) => {
    if (kind === undefined) return open.pop() ?? whole;
    if (kind === 'each') {
      const each = EACH.exec(attribute ?? '');
      if (!each) return whole;
      open.push('{/for}');
      return `{#for ${each[1]} in ${each[2]}}`;
    }
    const condition = CONDITION.exec(attribute ?? '');
    if (!condition) return whole;
    open.push('{/if}');
    return kind === 'if' ? `{#if ${condition[1]}}` : `{#if !(${condition[1]})}`;
  });
}

/**
 * Thymeleaf's utility objects as the engine's methods and helper namespaces: `#strings.substring(x, 3)` becomes
 * `x.substring(3)`, `#strings.toLowerCase(#strings.replace(x, ' ', '-'))` becomes `x.replace(' ', '-').toLowerCase()`,
 * `#uuidUtils.generateUUID()` becomes `uuidUtils:generateUUID()` (also `#json.`, `#encoder.`, and `json.serialize(`
 * without the `#`); a `#strings.` call among another's arguments is migrated too. Applies inside both
 * the `[[${...}]]` and the brace forms (the `#` goes with the name, so `{#strings.length(x)}` becomes `{x.length()}`
 * instead of reading as an unknown section).
 */
export function migrateTemplateHelpers(text: string): string {
  if (!text.includes('#') && !text.includes('json.')) return text;
  const args = (list: string | undefined) => (list === undefined ? '' : list.trim());
  const nested = text.replace(
    NESTED_STRINGS_CALL,
    (_whole, outer: string, inner: string, target: string, list: string | undefined) =>
      `${target}.${inner}(${args(list)}).${outer}()`,
  );
  return migrateStringsCalls(nested).replace(HELPER_NAMESPACE, '$1:').replace(BARE_JSON_HELPER, 'json:$1(');
}

/** The index of the `)` closing the `(` at `open` (quoted literals respected), or -1. */
function closingParenthesis(text: string, open: number): number {
  let depth = 0;
  let quote = '';
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== '') {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/** The top-level, comma-separated arguments of an argument list (without its parentheses). */
function splitArguments(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    if (quote !== '') {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(list.slice(start).trim());
  return parts.filter((part, i) => part !== '' || i > 0);
}

const STRINGS_METHOD = /#strings\.(\w+)\(/g;
const SIMPLE_TARGET = /^[\w$.]+(?:\(\))?$/;

/**
 * `#strings.method(target, args)` calls with any arguments (calls and arithmetic among them, `#strings.substring(x,
 * 1, #strings.length(x) - 2)`) as `target.method(args)`, arguments migrated first; a target that is not a plain path
 * is put in parentheses. A call whose parentheses do not close is left as it is.
 */
function migrateStringsCalls(text: string): string {
  if (!text.includes('#strings.')) return text;
  let out = '';
  let cursor = 0;
  STRINGS_METHOD.lastIndex = 0;
  for (let match = STRINGS_METHOD.exec(text); match; match = STRINGS_METHOD.exec(text)) {
    const open = match.index + match[0].length - 1;
    const close = closingParenthesis(text, open);
    if (close === -1) break;
    const [target = '', ...rest] = splitArguments(text.slice(open + 1, close)).map(migrateStringsCalls);
    const receiver = SIMPLE_TARGET.test(target) ? target : `(${target})`;
    out += `${text.slice(cursor, match.index)}${receiver}.${match[1]}(${rest.join(', ')})`;
    cursor = close + 1;
    STRINGS_METHOD.lastIndex = cursor;
  }
  return out + text.slice(cursor);
}

const OUTPUT_DELIMITERS: readonly (readonly [string, string])[] = [
  ['[[${', '}]]'],
  ['[(${', '})]'],
];

/** The index of `closing` after `from`, outside quoted literals (`'...'`, `"..."`, `\` escaping), or -1. */
function closingIndex(text: string, from: number, closing: string): number {
  let quote = '';
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== '') {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (text.startsWith(closing, i)) return i;
  }
  return -1;
}

/** The `+`-separated operands of an expression, `+` inside quoted literals excepted. */
function operands(expression: string): string[] {
  const parts: string[] = [];
  let quote = '';
  let start = 0;
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i]!;
    if (quote !== '') {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '+') {
      parts.push(expression.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(expression.slice(start).trim());
  return parts;
}

const QUOTED = /^(['"])(.*)\1$/s;

/**
 * Thymeleaf string concatenation in an output expression, `[[${properties.a + '/' + properties.b}]]`, as the
 * engine's text and expressions: `{properties.a}/{properties.b}`. Only an expression with a quoted literal among
 * its operands is a concatenation (`count + 1` is arithmetic and stays); a literal holding a brace or a template
 * delimiter cannot be written as plain text and leaves the expression as it is.
 */
export function migrateConcatenation(text: string): string {
  if (!text.includes('+')) return text;
  let out = '';
  let cursor = 0;
  for (;;) {
    let open = -1;
    let delimiters: readonly [string, string] | undefined;
    for (const candidate of OUTPUT_DELIMITERS) {
      const at = text.indexOf(candidate[0], cursor);
      if (at !== -1 && (open === -1 || at < open)) [open, delimiters] = [at, candidate];
    }
    if (open === -1 || delimiters === undefined) break;
    const bodyStart = open + delimiters[0].length;
    const close = closingIndex(text, bodyStart, delimiters[1]);
    if (close === -1) break;
    const parts = operands(text.slice(bodyStart, close));
    const literals = parts.map((part) => QUOTED.exec(part)?.[2]?.replace(/\\(['"\\])/g, '$1'));
    const convertible =
      parts.length > 1 &&
      literals.some((literal) => literal !== undefined) &&
      parts.every((part) => part !== '') &&
      literals.every((literal) => literal === undefined || !/[{}]|\[\[|\[\(|\$\{/.test(literal));
    out += text.slice(cursor, open);
    out += convertible
      ? parts.map((part, i) => literals[i] ?? `{${part}}`).join('')
      : text.slice(open, close + delimiters[1].length);
    cursor = close + delimiters[1].length;
  }
  return out + text.slice(cursor);
}

const QUOTED_LITERAL = String.raw`(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")`;
const LITERALS = String.raw`(${QUOTED_LITERAL}(?:\s*\+\s*${QUOTED_LITERAL})*)`;
/** `[[ 'a' + 'b' ]]` or `[( 'a' + 'b' )]`: a Thymeleaf inline expression made only of quoted literals. */
const LITERAL_INLINE = new RegExp(String.raw`\[\[\s*${LITERALS}\s*\]\]|\[\(\s*${LITERALS}\s*\)\]`, 'g');

/**
 * Quoted literals that together spell a template, `[['[[${' + 'properties.api' + '}]]']]`: the original's agents
 * that build agents (Bot Father) write templates into the resources they create this way. Such an expression
 * becomes that template, migrated, as raw text (`{|{properties.api}|}`), which the engine writes out unrendered.
 * Literals that spell no template, or a template holding `|}`, are left as they are.
 */
export function migrateWrittenTemplates(text: string): string {
  if (!text.includes("[['") && !text.includes("[('")) return text;
  return text.replace(LITERAL_INLINE, (whole, escaped: string | undefined, raw: string | undefined) => {
    const spelled = operands(escaped ?? raw ?? '')
      .map((part) => QUOTED.exec(part)?.[2]?.replace(/\\(['"\\])/g, '$1') ?? '')
      .join('');
    if (!/\[\[\$\{|\[\(\$\{|\{/.test(spelled)) return whole;
    const template = migrateText(spelled);
    return template.includes('|}') ? whole : `{|${template}|}`;
  });
}

/** Raw text `{|...|}` is literal for the original's Qute as for our engine: migrations leave it as written. */
const RAW_TEXT = /\{\|[\s\S]*?\|\}/g;

/**
 * Template text of the original's older releases in the engine's brace form: Thymeleaf inline expressions
 * `[[${expr}]]` / `[(${expr})]` become `{expr}`, textual blocks `[# th:each|if|unless="..."]…[/]` become
 * `{#for}`/`{#if}` sections, string concatenation becomes text and expressions (`migrateConcatenation`), utility
 * objects become methods and helpers (`migrateTemplateHelpers`), the Java UUID
 * expression becomes `{uuidUtils:generateUUID()}`, and product-prefixed vault references (`${xyzvault:NAME}`)
 * become `${vault:NAME}`. Raw text `{|...|}` and everything else is left as it is.
 */
export function migrateText(text: string): string {
  if (!text.includes('{|')) return migrateTemplateText(text);
  let migrated = '';
  let position = 0;
  for (const raw of text.matchAll(RAW_TEXT)) {
    migrated += migrateTemplateText(text.slice(position, raw.index)) + raw[0];
    position = raw.index + raw[0].length;
  }
  return migrated + migrateTemplateText(text.slice(position));
}

function migrateTemplateText(text: string): string {
  if (text === '') return text;
  let result = LEGACY_UUID_EXPRESSIONS.includes(text) ? '{uuidUtils:generateUUID()}' : text;
  result = migrateWrittenTemplates(result);
  result = result.replace(LEGACY_VAULT, '${vault:');
  result = migrateConcatenation(migrateTemplateHelpers(migrateLocationSubstrings(result)));
  if (result.includes('[[${') || result.includes('[(${')) {
    result = result.replace(INLINE, (_whole, escaped: string | undefined, raw: string | undefined) => {
      return `{${escaped ?? raw}}`;
    });
  }
  if (result.includes('th:')) result = migrateBlocks(result);
  return result;
}

/** A copy of a JSON value with every string (not the keys) migrated by `migrateText`. */
export function migrateTemplates(value: unknown): unknown {
  if (typeof value === 'string') return migrateText(value);
  if (Array.isArray(value)) return value.map(migrateTemplates);
  if (isRecord(value)) {
    const out: JsonObject = {};
    for (const [key, child] of Object.entries(value)) {
      setOwn(out, key, migrateTemplates(child));
    }
    return out;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// Text forms of booleans and numbers (after renaming, against the schema)
// ---------------------------------------------------------------------------------------------------------------

const INTEGER_TEXT = /^-?\d{1,15}$/;
const NUMBER_TEXT = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** `"true"`/`"false"` and numbers written as text, where the schema wants that scalar; anything else unchanged. */
function scalarOf(type: unknown, value: string): unknown {
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  if (type === 'integer' && INTEGER_TEXT.test(value.trim())) return Number(value.trim());
  if (type === 'number' && NUMBER_TEXT.test(value.trim()) && Number.isFinite(Number(value))) return Number(value);
  return value;
}

/**
 * The original's files write booleans and numbers as text in places (`"lookupIfKnown": "false"`,
 * `"distance": "2"`, `"timesOccurred": "0"`) and its JSON reader accepts them. Wherever the schema declares a
 * boolean, an integer or a number and the body has the text form of one, the value is converted. Text that is
 * not such a form stays text, for the schema to refuse.
 */
export function convertTextScalars(schema: unknown, value: unknown): unknown {
  if (!isRecord(schema)) return value;
  const effective = effectiveSchema(schema, value);
  if (typeof value === 'string') return scalarOf(effective.type, value);
  if (Array.isArray(value)) {
    const items = effective.items;
    return isRecord(items) ? value.map((item) => convertTextScalars(items, item)) : value;
  }
  if (!isRecord(value)) return value;
  const properties = effective.properties;
  if (!isRecord(properties)) return value;
  const out: JsonObject = {};
  for (const [key, field] of Object.entries(value)) {
    const converted = Object.hasOwn(properties, key) ? convertTextScalars(properties[key], field) : field;
    setOwn(out, key, converted);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The whole input path of a body
// ---------------------------------------------------------------------------------------------------------------

const STRUCTURAL: Partial<Record<KindName, (body: JsonObject) => JsonObject>> = {
  agent: dropGitBackupSettings,
  output: migrateOutputSet,
  behavior: migrateBehaviorSet,
  property: migratePropertySetter,
  httpcalls: migrateHttpCallSet,
  llm: migrateLlmConfiguration,
};

/**
 * A body as it arrives (store request or ZIP entry), in this service's form: the original's structures and
 * templates migrated, upstream names translated (`renameAliases`), then text forms of scalars converted.
 */
export function readBody(kind: KindBody & { readonly name: KindName }, raw: unknown): unknown {
  const migrate = STRUCTURAL[kind.name];
  const structured = migrate && isRecord(raw) ? migrate(raw) : raw;
  return convertTextScalars(kind.schema as TSchema, kind.renameAliases(migrateTemplates(structured)));
}
