/**
 * A small arithmetic evaluator for the `calculator` tool (no `eval`): numbers (also `1.5e3`), `+ - * / %`, `^`
 * (power, right-associative), parentheses, unary signs, the constants `pi` and `e`, and the functions
 * abs, sqrt, cbrt, exp, ln, log (base 10; `log(x, base)`), sin, cos, tan, asin, acos, atan, round, floor, ceil,
 * min, max, pow. Anything else is a `CalculatorError` naming the position.
 */

export class CalculatorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CalculatorError';
  }
}

const constants: Readonly<Record<string, number>> = { pi: Math.PI, e: Math.E };

const functions: Readonly<Record<string, { arity: [number, number]; apply: (...args: number[]) => number }>> = {
  abs: { arity: [1, 1], apply: Math.abs },
  sqrt: { arity: [1, 1], apply: Math.sqrt },
  cbrt: { arity: [1, 1], apply: Math.cbrt },
  exp: { arity: [1, 1], apply: Math.exp },
  ln: { arity: [1, 1], apply: Math.log },
  log: { arity: [1, 2], apply: (x, base) => (base === undefined ? Math.log10(x) : Math.log(x) / Math.log(base)) },
  sin: { arity: [1, 1], apply: Math.sin },
  cos: { arity: [1, 1], apply: Math.cos },
  tan: { arity: [1, 1], apply: Math.tan },
  asin: { arity: [1, 1], apply: Math.asin },
  acos: { arity: [1, 1], apply: Math.acos },
  atan: { arity: [1, 1], apply: Math.atan },
  round: { arity: [1, 1], apply: Math.round },
  floor: { arity: [1, 1], apply: Math.floor },
  ceil: { arity: [1, 1], apply: Math.ceil },
  min: { arity: [1, 100], apply: Math.min },
  max: { arity: [1, 100], apply: Math.max },
  pow: { arity: [2, 2], apply: Math.pow },
};

const MAX_LENGTH = 1000;
const MAX_DEPTH = 100;

type Token =
  | { kind: 'number'; value: number; at: number }
  | { kind: 'name'; value: string; at: number }
  | { kind: 'symbol'; value: string; at: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const pattern =
    /\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([A-Za-z_][A-Za-z_0-9]*)|(\*\*|[-+*/%^(),×÷]))/y;
  let position = 0;
  while (position < source.length) {
    if (/^\s*$/.test(source.slice(position))) break;
    pattern.lastIndex = position;
    const match = pattern.exec(source);
    if (!match)
      throw new CalculatorError(
        `Unexpected character '${source.slice(position).trim()[0]}' at position ${position + 1}.`,
      );
    const at = match.index + match[0].length - (match[1] ?? match[2] ?? match[3] ?? '').length;
    if (match[1] !== undefined) tokens.push({ kind: 'number', value: Number(match[1]), at });
    else if (match[2] !== undefined) tokens.push({ kind: 'name', value: match[2].toLowerCase(), at });
    else {
      const symbol = match[3]!;
      tokens.push({
        kind: 'symbol',
        value: symbol === '**' ? '^' : symbol === '×' ? '*' : symbol === '÷' ? '/' : symbol,
        at,
      });
    }
    position = pattern.lastIndex;
  }
  return tokens;
}

class Parser {
  readonly #tokens: Token[];
  #index = 0;
  #depth = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  parse(): number {
    if (this.#tokens.length === 0) throw new CalculatorError('The expression is empty.');
    const value = this.#sum();
    const rest = this.#tokens[this.#index];
    if (rest) throw new CalculatorError(`Unexpected '${rest.value}' at position ${rest.at + 1}.`);
    return value;
  }

  #peek(symbol: string): boolean {
    const token = this.#tokens[this.#index];
    return token?.kind === 'symbol' && token.value === symbol;
  }

  #expect(symbol: string): void {
    if (!this.#peek(symbol)) {
      const token = this.#tokens[this.#index];
      throw new CalculatorError(
        token ? `Expected '${symbol}' at position ${token.at + 1}.` : `Expected '${symbol}' at the end.`,
      );
    }
    this.#index++;
  }

  #sum(): number {
    let value = this.#product();
    while (this.#peek('+') || this.#peek('-')) {
      const operator = this.#tokens[this.#index++]!.value;
      const right = this.#product();
      value = operator === '+' ? value + right : value - right;
    }
    return value;
  }

  #product(): number {
    let value = this.#unary();
    while (this.#peek('*') || this.#peek('/') || this.#peek('%')) {
      const operator = this.#tokens[this.#index++]!.value;
      const right = this.#unary();
      if ((operator === '/' || operator === '%') && right === 0) throw new CalculatorError('Division by zero.');
      value = operator === '*' ? value * right : operator === '/' ? value / right : value % right;
    }
    return value;
  }

  #unary(): number {
    if (this.#peek('-')) {
      this.#index++;
      return -this.#unary();
    }
    if (this.#peek('+')) {
      this.#index++;
      return this.#unary();
    }
    return this.#power();
  }

  #power(): number {
    const base = this.#primary();
    if (this.#peek('^')) {
      this.#index++;
      return base ** this.#unary();
    }
    return base;
  }

  #primary(): number {
    if (++this.#depth > MAX_DEPTH) throw new CalculatorError('The expression is nested too deeply.');
    try {
      const token = this.#tokens[this.#index++];
      if (!token) throw new CalculatorError('The expression ends too early.');
      if (token.kind === 'number') return token.value;
      if (token.kind === 'symbol') {
        if (token.value !== '(') throw new CalculatorError(`Unexpected '${token.value}' at position ${token.at + 1}.`);
        const value = this.#sum();
        this.#expect(')');
        return value;
      }
      const fn = functions[token.value];
      if (fn && this.#peek('(')) {
        this.#index++;
        const args = [this.#sum()];
        while (this.#peek(',')) {
          this.#index++;
          args.push(this.#sum());
        }
        this.#expect(')');
        const [least, most] = fn.arity;
        if (args.length < least || args.length > most)
          throw new CalculatorError(
            `${token.value} takes ${least === most ? least : `${least} to ${most}`} argument(s).`,
          );
        return fn.apply(...args);
      }
      const constant = constants[token.value];
      if (constant !== undefined) return constant;
      throw new CalculatorError(`Unknown name '${token.value}' at position ${token.at + 1}.`);
    } finally {
      this.#depth--;
    }
  }
}

export function calculate(expression: string): number {
  if (expression.length > MAX_LENGTH)
    throw new CalculatorError(`The expression is longer than ${MAX_LENGTH} characters.`);
  const value = new Parser(tokenize(expression)).parse();
  if (!Number.isFinite(value)) throw new CalculatorError('The result is not a finite number.');
  return value;
}

/** The result as text, without floating-point noise (`0.1 + 0.2` -> `0.3`). */
export function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number.parseFloat(value.toPrecision(12)));
}
