import { positionOf, TemplateSyntaxError } from './errors.ts';

/**
 * The template parser: source text -> a tree of text, expression and section nodes (Qute-like brace form plus the
 * older `[[${expr}]]` form). Expressions are parsed into a small AST evaluated by `evaluator.ts`; nothing here
 * or there ever hands text to `eval`/`Function`.
 *
 * Expressions know arithmetic (`+ - * /`, unary `-`, `*`/`/` before `+`/`-`, both before comparisons); a name may
 * hold `-` between its parts (`content-type`), so a subtraction of two names needs spaces (`a - b`).
 *
 * Tags: `{expr}`, `{#if c}…{#else if c}…{#else}…{/if}`, `{#for x in list}…{#else}…{/for}`, `{#each list}…{/each}`
 * (`{/}` closes the innermost section), `{! comment !}`, `{| raw text |}`, `[[${expr}]]`, and `\{` before a tag
 * start for a literal brace. A `{` not followed by a letter, `#`, `/`, `!` or `|` is plain text, and so is a `{`
 * right after `$`: `${vault:x}` and `${caller:token}` are placeholders resolved by later stages, never tags.
 */

// --- AST -------------------------------------------------------------------------------------------------------

export type BinaryOperator = '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||' | '?:' | '+' | '-' | '*' | '/';

export type Expr =
  | { readonly kind: 'literal'; readonly value: unknown }
  | { readonly kind: 'name'; readonly name: string }
  /** `target.name` (args undefined) or `target.name(args)`. */
  | {
      readonly kind: 'member';
      readonly target: Expr;
      readonly name: string;
      readonly args: readonly Expr[] | undefined;
    }
  | { readonly kind: 'index'; readonly target: Expr; readonly index: Expr }
  /** `target(args)`: calling a value; it is parsed so that such templates fail safe, and it is always missing. */
  | { readonly kind: 'invoke'; readonly target: Expr; readonly args: readonly Expr[] }
  | { readonly kind: 'call'; readonly namespace: string; readonly name: string; readonly args: readonly Expr[] }
  | { readonly kind: 'not'; readonly operand: Expr }
  /** `-operand`: arithmetic negation. */
  | { readonly kind: 'negate'; readonly operand: Expr }
  | { readonly kind: 'binary'; readonly operator: BinaryOperator; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'conditional'; readonly test: Expr; readonly then: Expr; readonly otherwise: Expr };

export interface IfBranch {
  readonly condition: Expr;
  readonly body: readonly TemplateNode[];
}

export type TemplateNode =
  | string
  | { readonly kind: 'output'; readonly expr: Expr }
  | {
      readonly kind: 'if';
      readonly branches: readonly IfBranch[];
      readonly otherwise: readonly TemplateNode[] | undefined;
    }
  | {
      readonly kind: 'for';
      readonly alias: string;
      readonly iterable: Expr;
      readonly body: readonly TemplateNode[];
      readonly otherwise: readonly TemplateNode[] | undefined;
    };

/** Helper namespaces and their functions' arities (checked when the template is compiled). */
export const NAMESPACE_FUNCTIONS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  uuidUtils: { generateUUID: 0, extractId: 1, extractVersion: 1 },
  json: { serialize: 1, deserialize: 1 },
  encoder: { base64: 1, base64Url: 1, base64Mime: 1 },
};

// --- template scanning ------------------------------------------------------------------------------------------

const SCAN = /\\?(?<!\$)\{[\p{L}#/!|]|\[\[\$\{/gu;

interface IfFrame {
  readonly kind: 'if';
  readonly at: number;
  readonly branches: IfBranch[];
  otherwise: TemplateNode[] | undefined;
  current: TemplateNode[];
}

interface ForFrame {
  readonly kind: 'for';
  readonly tag: 'for' | 'each';
  readonly at: number;
  readonly alias: string;
  readonly iterable: Expr;
  readonly body: TemplateNode[];
  otherwise: TemplateNode[] | undefined;
  current: TemplateNode[];
}

type Frame = IfFrame | ForFrame;

/** Sections and sub-expressions nested deeper than this are rejected (keeps parsing and rendering off the stack's edge). */
export const MAX_NESTING = 64;

export function parseTemplate(source: string): readonly TemplateNode[] {
  const root: TemplateNode[] = [];
  const stack: Frame[] = [];
  let nodes = root;
  let text = '';
  const flush = () => {
    if (text === '') return;
    const last = nodes[nodes.length - 1];
    if (typeof last === 'string') nodes[nodes.length - 1] = last + text;
    else nodes.push(text);
    text = '';
  };
  const fail = (problem: string, offset: number): never => {
    throw new TemplateSyntaxError(problem, source, offset);
  };

  let position = 0;
  SCAN.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = SCAN.exec(source)) !== null) {
    const at = match.index;
    text += source.slice(position, at);
    const found = match[0];
    if (found.startsWith('\\')) {
      // `\{` before a tag start: a literal brace; the rest is text.
      text += '{';
      position = at + 2;
      SCAN.lastIndex = position;
      continue;
    }
    if (found === '[[${') {
      const close = findClosingBrace(source, at + 4);
      if (close === -1 || !source.startsWith(']]', close + 1)) fail("unclosed '[[${' expression (expected '}]]')", at);
      flush();
      nodes.push(outputNode(source, at + 4, close));
      position = close + 3;
      SCAN.lastIndex = position;
      continue;
    }
    const kind = source[at + 1]!;
    if (kind === '!') {
      const end = source.indexOf('!}', at + 2);
      if (end === -1) fail("unclosed comment (expected '!}')", at);
      position = end + 2;
    } else if (kind === '|') {
      const end = source.indexOf('|}', at + 2);
      if (end === -1) fail("unclosed raw text (expected '|}')", at);
      text += source.slice(at + 2, end);
      position = end + 2;
    } else {
      const close = findClosingBrace(source, at + 1);
      if (close === -1) fail("unclosed tag (expected '}')", at);
      flush();
      if (kind === '#') {
        const frame = openSection(source, at, close, stack.at(-1));
        if (frame !== 'else') {
          if (stack.length >= MAX_NESTING) fail(`sections nested deeper than ${MAX_NESTING}`, at);
          stack.push(frame);
        }
        nodes = (stack.at(-1) as Frame).current;
      } else if (kind === '/') {
        const name = source.slice(at + 2, close).trim();
        const frame = stack.pop();
        if (!frame) return fail(`'{/${name}}' closes no open section`, at);
        const opened = frame.kind === 'if' ? 'if' : frame.tag;
        if (name !== '' && name !== opened && !(opened !== 'if' && (name === 'for' || name === 'each'))) {
          fail(`'{/${name}}' does not match '{#${opened}}' opened at ${where(source, frame.at)}`, at);
        }
        nodes = stack.at(-1)?.current ?? root;
        nodes.push(
          frame.kind === 'if'
            ? { kind: 'if', branches: frame.branches, otherwise: frame.otherwise }
            : {
                kind: 'for',
                alias: frame.alias,
                iterable: frame.iterable,
                body: frame.body,
                otherwise: frame.otherwise,
              },
        );
      } else {
        nodes.push(outputNode(source, at + 1, close));
      }
      position = close + 1;
    }
    SCAN.lastIndex = position;
  }
  text += source.slice(position);
  flush();
  const open = stack.at(-1);
  if (open) {
    fail(
      `unclosed section '{#${open.kind === 'if' ? 'if' : open.tag}}' (expected '{/${open.kind === 'if' ? 'if' : open.tag}}')`,
      open.at,
    );
  }
  return root;
}

function where(source: string, offset: number): string {
  const { line, column } = positionOf(source, offset);
  return `line ${line}, column ${column}`;
}

function openSection(source: string, at: number, close: number, top: Frame | undefined): Frame | 'else' {
  const header = /^#([A-Za-z]+)/.exec(source.slice(at + 1, close));
  const name = header?.[1] ?? '';
  const argsStart = at + 1 + (header?.[0].length ?? 1);
  const fail = (problem: string, offset = at): never => {
    throw new TemplateSyntaxError(problem, source, offset);
  };
  switch (name) {
    case 'if': {
      const condition = parseExpression(source, argsStart, close);
      const body: TemplateNode[] = [];
      return { kind: 'if', at, branches: [{ condition, body }], otherwise: undefined, current: body };
    }
    case 'for': {
      const tokens = tokenize(source, argsStart, close);
      const alias = tokens[0];
      const keyword = tokens[1];
      if (alias?.type !== 'ident' || keyword?.type !== 'ident' || keyword.text !== 'in' || tokens.length < 3) {
        fail("expected '{#for <name> in <expression>}'");
      }
      const iterable = new ExpressionParser(source, tokens.slice(2), close).parseAll();
      const body: TemplateNode[] = [];
      return { kind: 'for', tag: 'for', at, alias: alias!.text, iterable, body, otherwise: undefined, current: body };
    }
    case 'each': {
      const iterable = parseExpression(source, argsStart, close);
      const body: TemplateNode[] = [];
      return { kind: 'for', tag: 'each', at, alias: 'it', iterable, body, otherwise: undefined, current: body };
    }
    case 'else': {
      if (!top) fail("'{#else}' outside a section");
      const frame = top as Frame;
      if (frame.otherwise) fail(`a second '{#else}' in the section opened at ${where(source, frame.at)}`);
      const rest = tokenize(source, argsStart, close);
      if (rest.length > 0) {
        if (frame.kind !== 'if' || rest[0]!.type !== 'ident' || rest[0]!.text !== 'if')
          fail("'{#else}' takes no arguments here (only '{#else if <condition>}' in '{#if}')");
        const condition = new ExpressionParser(source, rest.slice(1), close).parseAll();
        const body: TemplateNode[] = [];
        (frame as IfFrame).branches.push({ condition, body });
        frame.current = body;
      } else {
        const body: TemplateNode[] = [];
        frame.otherwise = body;
        frame.current = body;
      }
      return 'else';
    }
    default:
      return fail(name === '' ? "missing section name after '{#'" : `unknown section '{#${name}}'`);
  }
}

function outputNode(source: string, start: number, end: number): TemplateNode {
  const content = source.slice(start, end);
  // `{caller:…}` passes through as the `${caller:…}` placeholder resolved later by the HTTP-call task.
  if (/^caller:/.test(content)) return `\${${content}}`;
  return { kind: 'output', expr: parseExpression(source, start, end) };
}

/** The index of the `}` closing a tag whose content starts at `from` (quotes respected), or -1. */
function findClosingBrace(source: string, from: number): number {
  for (let index = from; index < source.length; index++) {
    const char = source[index];
    if (char === '}') return index;
    if (char === '"' || char === "'") {
      index = skipString(source, index);
      if (index === -1) return -1;
    }
  }
  return -1;
}

/** The index of the quote closing the string literal opening at `start`, or -1. */
function skipString(source: string, start: number): number {
  const quote = source[start];
  for (let index = start + 1; index < source.length; index++) {
    const char = source[index];
    if (char === '\\') index++;
    else if (char === quote) return index;
  }
  return -1;
}

// --- expressions ------------------------------------------------------------------------------------------------

type TokenType = 'ident' | 'namespace' | 'number' | 'string' | 'punct' | 'op';

interface Token {
  readonly type: TokenType;
  readonly text: string;
  readonly value?: unknown;
  readonly at: number;
}

const IDENT = /[\p{L}_$][\p{L}\p{N}_$]*(?:-[\p{L}\p{N}_$]+)*/uy;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[lLdDfF]?/y;
const DIGITS = /\d+/y;
const OPERATORS = ['==', '!=', '<=', '>=', '&&', '||', '?:', '<', '>', '!', '?', ':', '+', '-', '*', '/'];
const PUNCTUATION = '.()[],';

function tokenize(source: string, start: number, end: number): Token[] {
  const tokens: Token[] = [];
  let index = start;
  const fail = (problem: string, at: number): never => {
    throw new TemplateSyntaxError(problem, source, at);
  };
  while (index < end) {
    const char = source[index]!;
    if (/\s/.test(char)) {
      index++;
      continue;
    }
    const previous = tokens.at(-1);
    if (char === '"' || char === "'") {
      const close = skipString(source, index);
      if (close === -1 || close >= end) fail('unclosed string literal', index);
      tokens.push({
        type: 'string',
        text: source.slice(index, close + 1),
        value: unescapeLiteral(source.slice(index + 1, close)),
        at: index,
      });
      index = close + 1;
      continue;
    }
    const afterDot = previous?.type === 'punct' && previous.text === '.';
    const numberPattern = afterDot ? DIGITS : NUMBER;
    numberPattern.lastIndex = index;
    // A `-` starts a negative number only where no operand precedes it: `length()-2` is a subtraction.
    const signAllowed =
      !previous || previous.type === 'op' || (previous.type === 'punct' && '([,'.includes(previous.text));
    const number = /\d/.test(char) || (char === '-' && signAllowed) ? numberPattern.exec(source) : null;
    if (number && number.index === index && number[0] !== '-' && index + number[0].length <= end) {
      const text = number[0];
      tokens.push({ type: 'number', text, value: Number(text.replace(/[lLdDfF]$/, '')), at: index });
      index += text.length;
      continue;
    }
    IDENT.lastIndex = index;
    const ident = IDENT.exec(source);
    if (ident && index + ident[0].length <= end) {
      const text = ident[0];
      const next = index + text.length;
      // `ns:name` (no space around the colon) is a helper-namespace call.
      if (source[next] === ':' && next + 1 < end && /[\p{L}_$]/u.test(source[next + 1]!) && !afterDot) {
        tokens.push({ type: 'namespace', text, at: index });
        index = next + 1;
      } else {
        tokens.push({ type: 'ident', text, at: index });
        index = next;
      }
      continue;
    }
    if (PUNCTUATION.includes(char)) {
      tokens.push({ type: 'punct', text: char, at: index });
      index++;
      continue;
    }
    const operator = OPERATORS.find(
      (candidate) => source.startsWith(candidate, index) && index + candidate.length <= end,
    );
    if (operator) {
      tokens.push({ type: 'op', text: operator, at: index });
      index += operator.length;
      continue;
    }
    fail(`unexpected character '${char}' in expression`, index);
  }
  return tokens;
}

function unescapeLiteral(text: string): string {
  return text.replace(/\\(.)/gs, (_, char: string) => (char === 'n' ? '\n' : char === 't' ? '\t' : char));
}

const WORD_OPERATORS: Readonly<Record<string, BinaryOperator>> = {
  and: '&&',
  or: '||',
  eq: '==',
  is: '==',
  ne: '!=',
  lt: '<',
  le: '<=',
  gt: '>',
  ge: '>=',
};

const PRECEDENCE: ReadonlyArray<readonly BinaryOperator[]> = [
  ['?:'],
  ['||'],
  ['&&'],
  ['==', '!='],
  ['<', '<=', '>', '>='],
  ['+', '-'],
  ['*', '/'],
];

/** Parses the expression in `source[start, end)`. */
export function parseExpression(source: string, start: number, end: number): Expr {
  return new ExpressionParser(source, tokenize(source, start, end), end).parseAll();
}

class ExpressionParser {
  readonly #source: string;
  readonly #tokens: readonly Token[];
  readonly #end: number;
  #index = 0;
  #depth = 0;

  constructor(source: string, tokens: readonly Token[], end: number) {
    this.#source = source;
    this.#tokens = tokens;
    this.#end = end;
  }

  parseAll(): Expr {
    if (this.#tokens.length === 0) this.#fail('empty expression', this.#end);
    const expr = this.#conditional();
    const rest = this.#peek();
    if (rest) this.#fail(`unexpected '${rest.text}' in expression`, rest.at);
    return expr;
  }

  #fail(problem: string, at: number): never {
    throw new TemplateSyntaxError(problem, this.#source, at);
  }

  #peek(): Token | undefined {
    return this.#tokens[this.#index];
  }

  #isPunct(text: string): boolean {
    const token = this.#peek();
    return token !== undefined && token.type === 'punct' && token.text === text;
  }

  #isOp(text: string): boolean {
    const token = this.#peek();
    return token !== undefined && token.type === 'op' && token.text === text;
  }

  #expectPunct(text: string): void {
    if (!this.#isPunct(text)) {
      const token = this.#peek();
      this.#fail(token ? `expected '${text}' but found '${token.text}'` : `expected '${text}'`, token?.at ?? this.#end);
    }
    this.#index++;
  }

  #conditional(): Expr {
    if (++this.#depth > MAX_NESTING)
      this.#fail(`expression nested deeper than ${MAX_NESTING}`, this.#peek()?.at ?? this.#end);
    try {
      return this.#conditionalBody();
    } finally {
      this.#depth--;
    }
  }

  #conditionalBody(): Expr {
    const test = this.#binary(0);
    if (!this.#isOp('?')) return test;
    this.#index++;
    const then = this.#conditional();
    if (!this.#isOp(':')) this.#fail("expected ':' in conditional expression", this.#peek()?.at ?? this.#end);
    this.#index++;
    const otherwise = this.#conditional();
    return { kind: 'conditional', test, then, otherwise };
  }

  #binaryOperator(level: number): BinaryOperator | undefined {
    const token = this.#peek();
    if (!token) return undefined;
    const operator =
      token.type === 'op'
        ? (token.text as BinaryOperator)
        : token.type === 'ident'
          ? WORD_OPERATORS[token.text]
          : undefined;
    return operator !== undefined && PRECEDENCE[level]!.includes(operator) ? operator : undefined;
  }

  #binary(level: number): Expr {
    if (level === PRECEDENCE.length) return this.#unary();
    let left = this.#binary(level + 1);
    for (let operator = this.#binaryOperator(level); operator; operator = this.#binaryOperator(level)) {
      this.#index++;
      if (!this.#peek()) this.#fail(`missing operand after '${operator}'`, this.#end);
      const right = this.#binary(level + 1);
      left = { kind: 'binary', operator, left, right };
    }
    return left;
  }

  #unary(): Expr {
    if (this.#isOp('!')) {
      this.#index++;
      if (++this.#depth > MAX_NESTING)
        this.#fail(`expression nested deeper than ${MAX_NESTING}`, this.#peek()?.at ?? this.#end);
      const operand = this.#unary();
      this.#depth--;
      return { kind: 'not', operand };
    }
    if (this.#isOp('-')) {
      this.#index++;
      if (++this.#depth > MAX_NESTING)
        this.#fail(`expression nested deeper than ${MAX_NESTING}`, this.#peek()?.at ?? this.#end);
      const operand = this.#unary();
      this.#depth--;
      return { kind: 'negate', operand };
    }
    return this.#postfix(this.#primary());
  }

  #primary(): Expr {
    const token = this.#peek();
    if (!token) return this.#fail('missing operand', this.#end);
    this.#index++;
    switch (token.type) {
      case 'number':
      case 'string':
        return { kind: 'literal', value: token.value };
      case 'ident':
        if (token.text === 'true') return { kind: 'literal', value: true };
        if (token.text === 'false') return { kind: 'literal', value: false };
        if (token.text === 'null') return { kind: 'literal', value: null };
        return { kind: 'name', name: token.text };
      case 'namespace':
        return this.#namespaceCall(token);
      case 'punct':
        if (token.text === '(') {
          const inner = this.#conditional();
          this.#expectPunct(')');
          return inner;
        }
        break;
      case 'op':
        break;
    }
    return this.#fail(`unexpected '${token.text}' in expression`, token.at);
  }

  #namespaceCall(token: Token): Expr {
    const nameToken = this.#peek();
    if (nameToken?.type !== 'ident')
      return this.#fail(`expected a function name after '${token.text}:'`, nameToken?.at ?? this.#end);
    this.#index++;
    if (token.text === 'caller') return { kind: 'literal', value: `\${caller:${nameToken.text}}` };
    const functions = Object.hasOwn(NAMESPACE_FUNCTIONS, token.text) ? NAMESPACE_FUNCTIONS[token.text] : undefined;
    if (!functions || !Object.hasOwn(functions, nameToken.text)) {
      this.#fail(`unknown function '${token.text}:${nameToken.text}'`, token.at);
    }
    const args = this.#isPunct('(') ? this.#arguments() : [];
    const arity = functions![nameToken.text]!;
    if (args.length !== arity)
      this.#fail(
        `'${token.text}:${nameToken.text}' takes ${arity} argument${arity === 1 ? '' : 's'}, not ${args.length}`,
        token.at,
      );
    return { kind: 'call', namespace: token.text, name: nameToken.text, args };
  }

  #arguments(): Expr[] {
    this.#expectPunct('(');
    const args: Expr[] = [];
    if (this.#isPunct(')')) {
      this.#index++;
      return args;
    }
    for (;;) {
      args.push(this.#conditional());
      if (this.#isPunct(',')) {
        this.#index++;
        continue;
      }
      this.#expectPunct(')');
      return args;
    }
  }

  #postfix(target: Expr): Expr {
    let expr = target;
    for (;;) {
      if (this.#isPunct('.')) {
        this.#index++;
        const name = this.#peek();
        if (!name || (name.type !== 'ident' && name.type !== 'number'))
          this.#fail("expected a name after '.'", name?.at ?? this.#end);
        this.#index++;
        const args = this.#isPunct('(') ? this.#arguments() : undefined;
        expr = { kind: 'member', target: expr, name: name!.text, args };
      } else if (this.#isPunct('[')) {
        this.#index++;
        const index = this.#conditional();
        this.#expectPunct(']');
        expr = { kind: 'index', target: expr, index };
      } else if (this.#isPunct('(')) {
        expr = { kind: 'invoke', target: expr, args: this.#arguments() };
      } else {
        return expr;
      }
    }
  }
}
