import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { isRecord } from '../shared/json.ts';
import { ConversationLog, ConversationLogGenerator } from './conversation-log.ts';
import { TemplateLimitError } from './errors.ts';
import type { Expr, TemplateNode } from './parser.ts';
import { child } from './paths.ts';

/**
 * Evaluates parsed templates against the data model. The evaluator is a whitelist: names resolve only to own
 * properties of data objects (`child()` from paths.ts), methods are dispatched by name to the implementations in
 * this file (never by indexing the value with the method name), and functions found in data are never called (they render as empty text).
 * Evaluation never throws except `TemplateLimitError` when a bound is hit.
 */

/** Total `{#for}`/`{#each}` iterations one render may perform (across all loops, nested ones included). */
export const MAX_ITERATIONS = 10_000;
/** Maximum length (UTF-16 code units) of the rendered text and of any intermediate string a method builds. */
export const MAX_OUTPUT_LENGTH = 1_000_000;

interface LoopScope {
  readonly alias: string;
  readonly item: unknown;
  readonly index: number;
  readonly size: number;
  readonly parent: LoopScope | undefined;
}

interface RenderState {
  readonly data: Readonly<Record<string, unknown>>;
  readonly parts: string[];
  length: number;
  iterations: number;
}

export function renderNodes(nodes: readonly TemplateNode[], data: Readonly<Record<string, unknown>>): string {
  const state: RenderState = { data, parts: [], length: 0, iterations: 0 };
  renderInto(nodes, state, undefined);
  return state.parts.join('');
}

function append(state: RenderState, text: string): void {
  if (text === '') return;
  state.length += text.length;
  if (state.length > MAX_OUTPUT_LENGTH)
    throw new TemplateLimitError(`the rendered text exceeds ${MAX_OUTPUT_LENGTH} characters`);
  state.parts.push(text);
}

function renderInto(nodes: readonly TemplateNode[], state: RenderState, scope: LoopScope | undefined): void {
  for (const node of nodes) {
    if (typeof node === 'string') {
      append(state, node);
      continue;
    }
    switch (node.kind) {
      case 'output':
        append(state, toText(evaluate(node.expr, state.data, scope)));
        break;
      case 'if': {
        const branch = node.branches.find((candidate) => isTruthy(evaluate(candidate.condition, state.data, scope)));
        const body = branch ? branch.body : node.otherwise;
        if (body) renderInto(body, state, scope);
        break;
      }
      case 'for': {
        const iterable = evaluate(node.iterable, state.data, scope);
        const size = iterationSize(iterable);
        if (size === 0) {
          if (node.otherwise) renderInto(node.otherwise, state, scope);
          break;
        }
        for (let index = 0; index < size; index++) {
          if (++state.iterations > MAX_ITERATIONS)
            throw new TemplateLimitError(`more than ${MAX_ITERATIONS} loop iterations`);
          const item = iterationItem(iterable, index);
          renderInto(node.body, state, { alias: node.alias, item, index, size, parent: scope });
        }
        break;
      }
    }
  }
}

/** Lists iterate their elements, a whole number n iterates 1..n, an object iterates `{key, value}` entries. */
function iterationSize(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
  if (isRecord(value)) return Object.keys(value).length;
  return 0;
}

function iterationItem(iterable: unknown, index: number): unknown {
  if (Array.isArray(iterable)) return iterable[index];
  if (typeof iterable === 'number') return index + 1;
  const key = Object.keys(iterable as object)[index]!;
  return { key, value: child(iterable, key) };
}

const LOOP_METADATA: Readonly<Record<string, (index: number, size: number) => unknown>> = {
  count: (index) => index + 1,
  index: (index) => index,
  hasNext: (index, size) => index < size - 1,
  isFirst: (index) => index === 0,
  first: (index) => index === 0,
  isLast: (index, size) => index === size - 1,
  last: (index, size) => index === size - 1,
  odd: (index) => (index + 1) % 2 === 1,
  isOdd: (index) => (index + 1) % 2 === 1,
  even: (index) => (index + 1) % 2 === 0,
  isEven: (index) => (index + 1) % 2 === 0,
  indexParity: (index) => ((index + 1) % 2 === 1 ? 'odd' : 'even'),
};

function lookup(name: string, data: Readonly<Record<string, unknown>>, scope: LoopScope | undefined): unknown {
  for (let current = scope; current; current = current.parent) {
    if (name === current.alias) return current.item;
    if (name.startsWith(current.alias) && name[current.alias.length] === '_') {
      const meta = name.slice(current.alias.length + 1);
      if (Object.hasOwn(LOOP_METADATA, meta)) return LOOP_METADATA[meta]!(current.index, current.size);
    }
  }
  return child(data, name);
}

export function evaluate(expr: Expr, data: Readonly<Record<string, unknown>>, scope: LoopScope | undefined): unknown {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'name':
      return lookup(expr.name, data, scope);
    case 'member': {
      const target = evaluate(expr.target, data, scope);
      const args = expr.args?.map((arg) => evaluate(arg, data, scope));
      return member(target, expr.name, args);
    }
    case 'index': {
      const target = evaluate(expr.target, data, scope);
      const index = evaluate(expr.index, data, scope);
      if (typeof index === 'number' && Number.isInteger(index) && index >= 0)
        return Array.isArray(target) ? child(target, index) : undefined;
      if (typeof index === 'string' && target !== null && typeof target === 'object') return child(target, index);
      return undefined;
    }
    case 'invoke':
      return undefined; // values are never called
    case 'call':
      return callHelper(
        expr.namespace,
        expr.name,
        expr.args.map((arg) => evaluate(arg, data, scope)),
      );
    case 'not':
      return !isTruthy(evaluate(expr.operand, data, scope));
    case 'negate': {
      const operand = numeric(evaluate(expr.operand, data, scope));
      return operand === undefined ? undefined : -operand;
    }
    case 'conditional':
      return isTruthy(evaluate(expr.test, data, scope))
        ? evaluate(expr.then, data, scope)
        : evaluate(expr.otherwise, data, scope);
    case 'binary': {
      const left = evaluate(expr.left, data, scope);
      switch (expr.operator) {
        case '&&':
          return isTruthy(left) && isTruthy(evaluate(expr.right, data, scope));
        case '||':
          return isTruthy(left) || isTruthy(evaluate(expr.right, data, scope));
        case '?:':
          return left ?? evaluate(expr.right, data, scope);
        case '==':
          return equals(left, evaluate(expr.right, data, scope));
        case '!=':
          return !equals(left, evaluate(expr.right, data, scope));
        case '+':
        case '-':
        case '*':
        case '/':
          return arithmetic(expr.operator, left, evaluate(expr.right, data, scope));
        default:
          return compare(expr.operator, left, evaluate(expr.right, data, scope));
      }
    }
  }
}

// --- values -----------------------------------------------------------------------------------------------------

/** Qute truthiness: null, false, 0, NaN, '' and empty lists/maps are false. */
export function isTruthy(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'string') return value !== '';
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return typeof value === 'bigint' ? value !== 0n : false;
}

/** A number, or a string holding exactly a decimal number. */
function numeric(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\s*-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/** Equality: missing equals null; numbers compare numerically (also against numeric strings); other primitives by text. */
function equals(left: unknown, right: unknown): boolean {
  const a = left ?? null;
  const b = right ?? null;
  if (a === b) return true;
  if (a === null || b === null) return false;
  if (typeof a === 'number' || typeof b === 'number') {
    const x = numeric(a);
    const y = numeric(b);
    return x !== undefined && y !== undefined && x === y;
  }
  if (typeof a === 'object' || typeof b === 'object')
    return typeof a === typeof b && jsonText(a) === jsonText(b) && jsonText(a) !== '';
  return toText(a) === toText(b);
}

function compare(operator: '<' | '<=' | '>' | '>=', left: unknown, right: unknown): boolean {
  const x = numeric(left);
  const y = numeric(right);
  let order: number;
  if (x !== undefined && y !== undefined) order = x < y ? -1 : x > y ? 1 : x === y ? 0 : NaN;
  else if (typeof left === 'string' && typeof right === 'string') order = left < right ? -1 : left > right ? 1 : 0;
  else return false;
  switch (operator) {
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
  }
}

/**
 * `+ - * /` on numbers (and strings holding exactly a number, as properties often do). `+` with a string that is
 * not a number joins the texts (Thymeleaf's concatenation). Anything else, a division by zero and a result that is
 * not a finite number are missing (render as '').
 */
function arithmetic(operator: '+' | '-' | '*' | '/', left: unknown, right: unknown): unknown {
  const x = numeric(left);
  const y = numeric(right);
  if (x === undefined || y === undefined) {
    const joinable = (value: unknown) => typeof value === 'string' || typeof value === 'number';
    return operator === '+' && joinable(left) && joinable(right) ? limited(toText(left) + toText(right)) : undefined;
  }
  const result = operator === '+' ? x + y : operator === '-' ? x - y : operator === '*' ? x * y : y === 0 ? NaN : x / y;
  return Number.isFinite(result) ? result : undefined;
}

/**
 * The text of a value: missing/null -> '', strings verbatim, numbers as JS prints them (integers without `.0`),
 * booleans `true`/`false`, lists in Java `toString` form `[a, b]`, objects as JSON text, functions -> ''.
 */
export function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      if (value instanceof ConversationLog) return value.toString();
      return Array.isArray(value) ? listText(value, 0) : jsonText(value);
    default:
      return '';
  }
}

function listText(list: readonly unknown[], depth: number): string {
  if (depth > 32) return '[...]';
  const parts: string[] = [];
  for (const element of list) {
    if (element === undefined || element === null) parts.push('null');
    else if (Array.isArray(element)) parts.push(listText(element, depth + 1));
    else parts.push(toText(element));
  }
  return `[${parts.join(', ')}]`;
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value ?? null, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? '';
  } catch {
    return ''; // a cycle
  }
}

function limited(text: string): string {
  if (text.length > MAX_OUTPUT_LENGTH)
    throw new TemplateLimitError(`an intermediate string exceeds ${MAX_OUTPUT_LENGTH} characters`);
  return text;
}

function integer(value: unknown): number | undefined {
  const number = numeric(value);
  return number !== undefined && Number.isSafeInteger(number) ? number : undefined;
}

// --- methods ----------------------------------------------------------------------------------------------------

type Method<T> = (target: T, args: readonly unknown[]) => unknown;

/** name -> [arity, implementation]; a method of arity 0 may be written with or without `()`. */
type MethodTable<T> = Readonly<Record<string, readonly [arity: number | readonly number[], Method<T>]>>;

function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

function replaceAll(text: string, search: string, replacement: string): string {
  if (search === '') {
    // Java: "abc".replace("", "-") == "-a-b-c-"
    const estimated = text.length + (text.length + 1) * replacement.length;
    if (estimated > MAX_OUTPUT_LENGTH)
      throw new TemplateLimitError(`an intermediate string exceeds ${MAX_OUTPUT_LENGTH} characters`);
    return replacement + text.split('').join(replacement) + replacement;
  }
  const pieces = text.split(search);
  if (text.length + (pieces.length - 1) * (replacement.length - search.length) > MAX_OUTPUT_LENGTH) {
    throw new TemplateLimitError(`an intermediate string exceeds ${MAX_OUTPUT_LENGTH} characters`);
  }
  return pieces.join(replacement);
}

function substring(text: string, from: unknown, to: unknown = text.length): string | undefined {
  const start = integer(from);
  const end = integer(to);
  if (start === undefined || end === undefined || start < 0 || end > text.length || start > end) return undefined;
  return text.slice(start, end);
}

const STRING_METHODS: MethodTable<string> = {
  toLowerCase: [0, (s) => s.toLowerCase()],
  toUpperCase: [0, (s) => s.toUpperCase()],
  replace: [2, (s, [a, b]) => replaceAll(s, toText(a), toText(b))],
  contains: [1, (s, [x]) => s.includes(toText(x))],
  indexOf: [[1, 2], (s, [x, from]) => s.indexOf(toText(x), integer(from) ?? 0)],
  lastIndexOf: [[1, 2], (s, [x, from]) => s.lastIndexOf(toText(x), integer(from) ?? Infinity)],
  startsWith: [1, (s, [x]) => s.startsWith(toText(x))],
  endsWith: [1, (s, [x]) => s.endsWith(toText(x))],
  substring: [[1, 2], (s, [from, to]) => substring(s, from, to ?? s.length)],
  substringRange: [2, (s, [from, to]) => substring(s, from, to)],
  trim: [0, (s) => javaTrim(s)],
  strip: [0, (s) => s.trim()],
  length: [0, (s) => s.length],
  size: [0, (s) => s.length],
  isEmpty: [0, (s) => s.length === 0],
  isBlank: [0, (s) => s.trim().length === 0],
  charAt: [
    1,
    (s, [i]) => {
      const index = integer(i);
      return index !== undefined && index >= 0 && index < s.length ? s.charAt(index) : undefined;
    },
  ],
  concat: [1, (s, [x]) => limited(s + toText(x))],
};

const LIST_METHODS: MethodTable<readonly unknown[]> = {
  size: [0, (list) => list.length],
  length: [0, (list) => list.length],
  isEmpty: [0, (list) => list.length === 0],
  get: [
    1,
    (list, [i]) => {
      const index = integer(i);
      return index === undefined ? undefined : child(list, index);
    },
  ],
  first: [0, (list) => list[0]],
  last: [0, (list) => list[list.length - 1]],
  contains: [1, (list, [x]) => list.some((element) => equals(element, x))],
  indexOf: [1, (list, [x]) => list.findIndex((element) => equals(element, x))],
};

const MAP_METHODS: MethodTable<Record<string, unknown>> = {
  size: [0, (map) => Object.keys(map).length],
  length: [0, (map) => Object.keys(map).length],
  isEmpty: [0, (map) => Object.keys(map).length === 0],
  keys: [0, (map) => Object.keys(map)],
  keySet: [0, (map) => Object.keys(map)],
  values: [0, (map) => Object.keys(map).map((key) => child(map, key))],
  get: [1, (map, [key]) => child(map, toText(key))],
  containsKey: [1, (map, [key]) => Object.hasOwn(map, toText(key))],
};

const LOG_GENERATOR_METHODS: MethodTable<ConversationLogGenerator> = {
  generate: [0, (generator) => generator.generate()],
};

const LOG_METHODS: MethodTable<ConversationLog> = {
  toObject: [0, (log) => log.messages],
  getConversationLogAsObject: [0, (log) => log.messages],
  messages: [0, (log) => log.messages],
  toString: [0, (log: ConversationLog): string => log.toString()] as const,
  getConversationLogAsString: [0, (log) => log.toString()],
};

function dispatch<T>(table: MethodTable<T>, target: T, name: string, args: readonly unknown[] | undefined): unknown {
  if (!Object.hasOwn(table, name)) return undefined;
  const [arity, method] = table[name]!;
  const given = args ?? [];
  const accepted = typeof arity === 'number' ? given.length === arity : arity.includes(given.length);
  return accepted ? method(target, given) : undefined;
}

/** `target.name` / `target.name(args)`. Own data properties come first for maps; everything else is a whitelisted method. */
function member(target: unknown, name: string, args: readonly unknown[] | undefined): unknown {
  if (name === 'or' && args?.length === 1) return target ?? args[0];
  if (target === undefined || target === null) return undefined;
  if (typeof target === 'string') return dispatch(STRING_METHODS, target, name, args);
  if (target instanceof ConversationLogGenerator) return dispatch(LOG_GENERATOR_METHODS, target, name, args);
  if (target instanceof ConversationLog) return dispatch(LOG_METHODS, target, name, args);
  if (Array.isArray(target)) {
    if (args === undefined && /^\d+$/.test(name)) return child(target, Number(name));
    return dispatch(LIST_METHODS, target, name, args);
  }
  if (isRecord(target)) {
    if (args === undefined && Object.hasOwn(target, name)) return child(target, name);
    return dispatch(MAP_METHODS, target, name, args);
  }
  return undefined;
}

// --- helper namespaces -----------------------------------------------------------------------------------------

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

function callHelper(namespace: string, name: string, args: readonly unknown[]): unknown {
  const [first] = args;
  switch (`${namespace}:${name}`) {
    case 'uuidUtils:generateUUID':
      return randomUUID();
    case 'uuidUtils:extractId': {
      const path = toText(first).split(/[?#]/)[0]!;
      const id = path.slice(path.lastIndexOf('/') + 1);
      return id === '' ? undefined : id;
    }
    case 'uuidUtils:extractVersion': {
      const match = /[?&]version=(\d+)/.exec(toText(first));
      return match ? Number(match[1]) : undefined;
    }
    case 'json:serialize':
      return limited(jsonText(first));
    case 'json:deserialize':
      try {
        return JSON.parse(toText(first)) as unknown;
      } catch {
        return undefined;
      }
    case 'encoder:base64':
      return base64(toText(first));
    case 'encoder:base64Url':
      // Java's Base64.getUrlEncoder(): URL-safe alphabet, padding kept.
      return base64(toText(first)).replaceAll('+', '-').replaceAll('/', '_');
    case 'encoder:base64Mime':
      // Java's Base64.getMimeEncoder(): lines of at most 76 characters separated by CRLF.
      return base64(toText(first)).replace(/.{76}(?=.)/g, '$&\r\n');
    default:
      return undefined;
  }
}
