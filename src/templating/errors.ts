/** Errors of the template engine. Everything `renderTemplate` throws is a `TemplateError`. */

export interface SourcePosition {
  /** 0-based offset into the template source. */
  readonly offset: number;
  /** 1-based line and column. */
  readonly line: number;
  readonly column: number;
}

export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** The template is malformed (unclosed section, bad expression, unknown helper); the message names the position. */
export class TemplateSyntaxError extends TemplateError {
  readonly position: SourcePosition;

  constructor(problem: string, source: string, offset: number) {
    const position = positionOf(source, offset);
    super(`${problem} at line ${position.line}, column ${position.column}`);
    this.name = 'TemplateSyntaxError';
    this.position = position;
  }
}

/** Rendering hit a bound (loop iterations, output or intermediate string size); no partial output is returned. */
export class TemplateLimitError extends TemplateError {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateLimitError';
  }
}

export function positionOf(source: string, offset: number): SourcePosition {
  let line = 1;
  let lineStart = 0;
  for (let index = source.indexOf('\n'); index !== -1 && index < offset; index = source.indexOf('\n', index + 1)) {
    line++;
    lineStart = index + 1;
  }
  return { offset, line, column: offset - lineStart + 1 };
}
