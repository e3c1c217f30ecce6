import { parsePath, PathSyntaxError, resolvePath, type PathSegment } from '../templating/paths.ts';

/**
 * The `fromObjectPath` language of property instructions (reference §7.3), compiled once at deploy time:
 * - a dot path from the template data root, `[i]` indexing lists: `memory.current.httpCalls.weather.list[0].name`;
 *   `input` (the spec's short form) is the user's input, `memory.current.input`, unless the data has an `input`
 *   of its own (a context named `input`);
 * - a single-quoted literal, returned as it is: `'fixed text'` (`\'` and `\\` escape a quote and a backslash);
 * - a number literal: `1`, `2.5`;
 * - operands joined by `+` / `-`, left to right: `properties.count+1`, `properties.count - 1`,
 *   `memory.current.input+'!'`.
 *
 * Arithmetic: two numbers add or subtract (integers stay integers, anything with a fraction is a float — in
 * JavaScript both are `number`); a left side that resolves to nothing yields the right side
 * (`properties.count+1` without `count` is `1`), a right side that resolves to nothing yields the left side;
 * `+` with a non-number operand concatenates the operands' text; `-` with a non-number is an evaluation error.
 *
 * `+` always separates operands outside quotes. `-` separates operands when a space precedes it or a number
 * literal or quoted text follows it (`a-1`, `a - b`); otherwise it is part of a key (`httpCalls.my-call.value`).
 */

export class ObjectPathSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ObjectPathSyntaxError';
  }
}

/** A well-formed path that cannot be evaluated on the data at hand (e.g. subtracting from a text). */
export class ObjectPathEvaluationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ObjectPathEvaluationError';
  }
}

type Operand =
  | { readonly kind: 'path'; readonly segments: readonly PathSegment[] }
  | { readonly kind: 'literal'; readonly value: string }
  | { readonly kind: 'number'; readonly value: number };

type Operator = '+' | '-';

export interface CompiledObjectPath {
  /** The path as written. */
  readonly source: string;
  /** The value the path names in `data`; `undefined` (or `null`) when it names nothing. */
  evaluate(data: unknown): unknown;
}

const NUMBER_LITERAL = /^-?\d+(?:\.\d+)?$/;
/** After a `-`: optional spaces, then a number literal up to the end or the next operator, or a quoted text. */
const OPERAND_AHEAD = /^\s*(?:\d+(?:\.\d+)?\s*(?:$|[+-])|')/;

function operandOf(text: string, source: string): Operand {
  const trimmed = text.trim();
  if (trimmed === '') throw new ObjectPathSyntaxError(`missing operand in path '${source}'`);
  if (NUMBER_LITERAL.test(trimmed)) return { kind: 'number', value: Number(trimmed) };
  try {
    return { kind: 'path', segments: parsePath(trimmed) };
  } catch (error) {
    if (error instanceof PathSyntaxError) throw new ObjectPathSyntaxError(`${error.message} (in '${source}')`);
    throw error;
  }
}

/** Splits `source` into operands and operators; every syntax problem is reported here, at compile time. */
function parse(source: string): { operands: Operand[]; operators: Operator[] } {
  const operands: Operand[] = [];
  const operators: Operator[] = [];
  let position = 0;
  const skipSpaces = () => {
    while (position < source.length && /\s/.test(source[position]!)) position++;
  };

  for (;;) {
    skipSpaces();
    if (position >= source.length) {
      throw new ObjectPathSyntaxError(
        operands.length === 0 ? 'empty path' : `missing operand after '${operators.at(-1)}' in path '${source}'`,
      );
    }
    if (source[position] === "'") {
      let value = '';
      position++;
      for (;;) {
        const char = source[position];
        if (char === undefined) throw new ObjectPathSyntaxError(`unterminated quoted text in path '${source}'`);
        position++;
        if (char === "'") break;
        if (char === '\\' && (source[position] === "'" || source[position] === '\\')) {
          value += source[position];
          position++;
        } else {
          value += char;
        }
      }
      operands.push({ kind: 'literal', value });
    } else {
      const start = position;
      if (source[position] === '-') {
        if (!/\d/.test(source[position + 1] ?? ''))
          throw new ObjectPathSyntaxError(`unexpected '-' at position ${position} of path '${source}'`);
        position++; // a negative number literal
      }
      for (; position < source.length; position++) {
        const char = source[position]!;
        if (char === '+') break;
        if (char === "'")
          throw new ObjectPathSyntaxError(`unexpected quote at position ${position} of path '${source}'`);
        if (
          char === '-' &&
          position > start &&
          (/\s/.test(source[position - 1]!) || OPERAND_AHEAD.test(source.slice(position + 1)))
        )
          break;
      }
      operands.push(operandOf(source.slice(start, position), source));
    }
    skipSpaces();
    if (position >= source.length) return { operands, operators };
    const operator = source[position];
    if (operator !== '+' && operator !== '-') {
      throw new ObjectPathSyntaxError(`unexpected '${operator}' at position ${position} of path '${source}'`);
    }
    operators.push(operator);
    position++;
  }
}

function isNothing(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

function describe(value: unknown): string {
  return Array.isArray(value)
    ? 'a list'
    : typeof value === 'object'
      ? 'an object'
      : `the ${typeof value} ${JSON.stringify(value)}`;
}

function combine(operator: Operator, left: unknown, right: unknown, source: string): unknown {
  if (isNothing(left)) return right;
  if (isNothing(right)) return left;
  if (typeof left === 'number' && typeof right === 'number') return operator === '+' ? left + right : left - right;
  if (operator === '+') return asText(left) + asText(right);
  throw new ObjectPathEvaluationError(`cannot subtract ${describe(right)} from ${describe(left)} in path '${source}'`);
}

const CURRENT_STEP = ['memory', 'current'] as const;

/** Resolves a path from the data root; `input...` not found there is read from the current step's output. */
function resolveFromRoot(data: unknown, segments: readonly PathSegment[]): unknown {
  const found = resolvePath(data, segments);
  if (found !== undefined || segments[0] !== 'input') return found;
  return resolvePath(data, [...CURRENT_STEP, ...segments]);
}

function evaluateOperand(operand: Operand, data: unknown): unknown {
  return operand.kind === 'path' ? resolveFromRoot(data, operand.segments) : operand.value;
}

/** Compiles a `fromObjectPath`; throws `ObjectPathSyntaxError` when it is malformed. */
export function compileObjectPath(source: string): CompiledObjectPath {
  const { operands, operators } = parse(source);
  const [first, ...rest] = operands as [Operand, ...Operand[]];
  if (rest.length === 0) {
    if (first.kind === 'path') {
      const segments = first.segments;
      return { source, evaluate: (data) => resolveFromRoot(data, segments) };
    }
    const value = first.value;
    return { source, evaluate: () => value };
  }
  return {
    source,
    evaluate(data) {
      let result = evaluateOperand(first, data);
      rest.forEach((operand, index) => {
        result = combine(operators[index]!, result, evaluateOperand(operand, data), source);
      });
      return result;
    },
  };
}
