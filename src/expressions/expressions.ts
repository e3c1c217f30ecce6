/**
 * The expression language of dictionaries, the parser and the rules: `name` or `name(sub, sub, ...)`, nested
 * at any depth, lists separated by commas (`greeting(hello), unknown(Vienna)`). A leading `domain.` is split off
 * a name (`a.b(x)`: domain `a`, name `b`) unless the whole name is a number (`decimal(3.14)`).
 */
export interface Expression {
  readonly name: string;
  readonly domain?: string;
  readonly args: readonly Expression[];
}

export class ExpressionSyntaxError extends Error {}

const NUMBER = /^-?\d+(\.\d+)?$/;

function makeExpression(rawName: string, args: Expression[]): Expression {
  const name = rawName.trim();
  const dot = name.indexOf('.');
  if (dot > 0 && dot < name.length - 1 && !NUMBER.test(name)) {
    return { domain: name.slice(0, dot), name: name.slice(dot + 1), args };
  }
  return { name, args };
}

/** Parses a comma-separated list of expressions. Blank text is the empty list. */
export function parseExpressions(text: string): Expression[] {
  let position = 0;
  const source = text;

  const parseList = (closing: string | undefined): Expression[] => {
    const list: Expression[] = [];
    for (;;) {
      list.push(parseOne());
      skipSpaces();
      const next = source[position];
      if (next === ',') {
        position++;
        continue;
      }
      if (next === closing) return list;
      if (next === undefined && closing === undefined) return list;
      throw new ExpressionSyntaxError(
        `unexpected ${next === undefined ? 'end' : `'${next}'`} at position ${position} of '${source}'`,
      );
    }
  };
  const skipSpaces = () => {
    while (source[position] === ' ' || source[position] === '\t' || source[position] === '\n') position++;
  };
  const parseOne = (): Expression => {
    skipSpaces();
    const start = position;
    while (position < source.length && !'(),'.includes(source[position]!)) position++;
    const name = source.slice(start, position).trim();
    if (name === '') throw new ExpressionSyntaxError(`missing name at position ${start} of '${source}'`);
    if (source[position] !== '(') return makeExpression(name, []);
    position++;
    skipSpaces();
    if (source[position] === ')') {
      position++;
      return makeExpression(name, []);
    }
    const args = parseList(')');
    position++;
    return makeExpression(name, args);
  };

  if (source.trim() === '') return [];
  return parseList(undefined);
}

export function formatExpression(expression: Expression): string {
  const name = expression.domain === undefined ? expression.name : `${expression.domain}.${expression.name}`;
  return expression.args.length === 0 ? name : `${name}(${expression.args.map(formatExpression).join(', ')})`;
}

export function formatExpressions(expressions: readonly Expression[]): string {
  return expressions.map(formatExpression).join(', ');
}

function sameName(a: Expression, b: Expression): boolean {
  if (a.name === '*' || b.name === '*') return true;
  if ((a.domain ?? '') !== (b.domain ?? '')) return false;
  if (a.name === b.name) return true;
  return NUMBER.test(a.name) && NUMBER.test(b.name) && Number(a.name) === Number(b.name);
}

/**
 * Expression equality with wildcards: names equal (numbers numerically), the same number of subs, subs equal
 * pairwise; `*` on either side matches anything, sub-trees included. `greeting` does not match `greeting(hello)`.
 */
export function matches(pattern: Expression, actual: Expression): boolean {
  if (pattern.name === '*' && pattern.args.length === 0) return true;
  if (actual.name === '*' && actual.args.length === 0) return true;
  if (!sameName(pattern, actual) || pattern.args.length !== actual.args.length) return false;
  for (let index = 0; index < pattern.args.length; index++)
    if (!matches(pattern.args[index]!, actual.args[index]!)) return false;
  return true;
}

/** True when `pattern` occurs in `list` as a contiguous, ordered run. An empty pattern is always contained. */
export function containsSequence(list: readonly Expression[], pattern: readonly Expression[]): boolean {
  if (pattern.length === 0) return true;
  // Plain loops: rules evaluate this for every rule of every turn, and closures here were most of a turn's garbage.
  for (let start = 0; start + pattern.length <= list.length; start++) {
    let offset = 0;
    while (offset < pattern.length && matches(pattern[offset]!, list[start + offset]!)) offset++;
    if (offset === pattern.length) return true;
  }
  return false;
}
