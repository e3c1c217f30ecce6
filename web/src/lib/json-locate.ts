/**
 * JSON text <-> line numbers, for the JSON editor: where a parse error is, and which line a server problem's
 * `path` (`$.behaviorGroups[0].behaviorRules[1].bogus`) points at. Pure: no DOM, importable by Node's tests.
 */

export interface Located {
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly column: number;
  /** 0-based offset into the text. */
  readonly offset: number;
}

export interface JsonIssue extends Located {
  readonly message: string;
}

type Segment = string | number;

/** 0-based offset -> 1-based line and column. */
export function locate(text: string, offset: number): Located {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1, offset: end };
}

class JsonSyntaxError extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(message);
    this.offset = offset;
  }
}

/**
 * Parses JSON strictly (no comments, no trailing commas) and records where every value and key starts, by path
 * key (`$`, `$.a`, `$.a[0]`). Throws JsonSyntaxError with the offset of the problem.
 */
function scan(text: string): Map<string, number> {
  const where = new Map<string, number>();
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw new JsonSyntaxError(message, at);
  };
  const space = () => {
    for (;;) {
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
      else if (c === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) fail(t('jsonLocate.commentsAreNotAllowed'));
      else return;
    }
  };
  const describe = (c: string | undefined) => (c === undefined ? 'end of text' : `'${c}'`);
  const string = (): string => {
    const start = i;
    i++; // opening quote
    let out = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) fail(t('jsonLocate.unterminatedString'), start);
      if (c === '"') {
        i++;
        return out;
      }
      if (c === '\n') fail(t('jsonLocate.lineBreakInsideA'), start);
      if (c === '\\') {
        const e = text[i + 1];
        const simple: Record<string, string> = {
          '"': '"',
          '\\': '\\',
          '/': '/',
          b: '\b',
          f: '\f',
          n: '\n',
          r: '\r',
          t: '\t',
        };
        if (e !== undefined && simple[e] !== undefined) {
          out += simple[e];
          i += 2;
        } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else fail(t('jsonLocate.invalidEscapeInString'));
      } else {
        out += c;
        i++;
      }
    }
  };
  const value = (path: string): void => {
    space();
    where.set(path, i);
    const c = text[i];
    if (c === '{') {
      i++;
      space();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        space();
        if (text[i] !== '"')
          fail(
            text[i] === '}'
              ? t('jsonLocate.trailingCommaBefore')
              : t('jsonLocate.expectedAPropertyName', { found: describe(text[i]) }),
          );
        const keyAt = i;
        const key = string();
        const child = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
        space();
        if (text[i] !== ':') fail(t('jsonLocate.expectedAfterPropertyName', { found: describe(text[i]) }));
        i++;
        value(child);
        where.set(`${child}#key`, keyAt);
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(t('jsonLocate.expectedOrAfterA', { found: describe(text[i]) }));
      }
    }
    if (c === '[') {
      i++;
      space();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let index = 0; ; index++) {
        space();
        if (text[i] === ']') fail(t('jsonLocate.trailingCommaBefore2'));
        value(`${path}[${index}]`);
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail(t('jsonLocate.expectedOrAfterAn', { found: describe(text[i]) }));
      }
    }
    if (c === '"') {
      string();
      return;
    }
    const literal = /^(true|false|null|-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (literal) {
      i += literal[0].length;
      return;
    }
    fail(
      c === undefined
        ? t('jsonLocate.unexpectedEndOfText')
        : t('jsonLocate.unexpectedExpectedAValue', { found: describe(c) }),
    );
  };
  value('$');
  space();
  if (i < text.length) fail(t('jsonLocate.unexpectedAfterTheEnd', { found: describe(text[i]) }));
  return where;
}

/** The problem with a JSON text, at its line, or undefined when it parses. */
export function jsonSyntaxIssue(text: string): JsonIssue | undefined {
  try {
    scan(text);
    return undefined;
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { ...locate(text, error.offset), message: error.message };
    throw error;
  }
}

/** The kinds of path segment: `.name`, `[0]`, `['quoted name']` / `["quoted name"]`. */
const SEGMENT_PATTERNS: readonly (readonly [RegExp, (m: RegExpExecArray) => Segment])[] = [
  [/^\.([^.[\]]+)/, (m) => m[1]!],
  [/^\[(\d+)\]/, (m) => Number(m[1])],
  [/^\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]/, (m) => (m[1] ?? m[2]!).replace(/\\(.)/g, '$1')],
];

/** The segment at the start of `rest` and how many characters it takes, or undefined when none is recognised. */
function leadingSegment(rest: string): { segment: Segment; length: number } | undefined {
  for (const [pattern, read] of SEGMENT_PATTERNS) {
    const m = pattern.exec(rest);
    if (m) return { segment: read(m), length: m[0].length };
  }
  return undefined;
}

/** `$.a[0]['b c'].d` -> ['a', 0, 'b c', 'd']. Unparseable parts end the list. */
export function parsePath(path: string): Segment[] {
  const segments: Segment[] = [];
  let rest = path.trim().replace(/^\$/, '');
  while (rest.length > 0) {
    const next = leadingSegment(rest);
    if (!next) break;
    segments.push(next.segment);
    rest = rest.slice(next.length);
  }
  return segments;
}

function pathKey(segments: readonly Segment[]): string {
  let key = '$';
  for (const s of segments) {
    if (typeof s === 'number') key += `[${s}]`;
    else key += /^[A-Za-z_$][\w$]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
  }
  return key;
}

/**
 * The line a problem path points at: the key of a named member (an unknown field's own line), else the value;
 * when the path does not exist in the text (a missing required field), the deepest part of it that does.
 * Undefined when the text does not parse.
 */
export function lineOfPath(text: string, path: string): Located | undefined {
  let where: Map<string, number>;
  try {
    where = scan(text);
  } catch {
    return undefined;
  }
  const segments = parsePath(path);
  for (let n = segments.length; n >= 0; n--) {
    const key = pathKey(segments.slice(0, n));
    const at = where.get(`${key}#key`) ?? where.get(key);
    if (at !== undefined) return locate(text, at);
  }
  return undefined;
}

/** A server problem (`{detail, path}`) as an issue at its line; without a usable path, at line 1. */
export function problemIssue(text: string, problem: { detail?: unknown; title?: unknown; path?: unknown }): JsonIssue {
  const message = String(problem.detail ?? problem.title ?? t('jsonLocate.theServiceRefusedThis'));
  const at = typeof problem.path === 'string' ? lineOfPath(text, problem.path) : undefined;
  return { ...(at ?? locate(text, 0)), message };
}
import { t } from '../i18n/index.ts';
