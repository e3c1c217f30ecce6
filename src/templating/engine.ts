import { LRUCache } from 'lru-cache';
import { TemplateSyntaxError } from './errors.ts';
import { MAX_ITERATIONS, MAX_OUTPUT_LENGTH, renderNodes } from './evaluator.ts';
import { parseTemplate, type TemplateNode } from './parser.ts';

/**
 * The template engine used by output templating, HTTP calls, property setting and the LLM task (reference §6).
 *
 * Syntax (Qute-like): `{expr}`, `{#if c}…{#else if c}…{#else}…{/if}`, `{#for x in list}…{#else}…{/for}`,
 * `{#each list}…{/each}` (item `it`), loop metadata `{x_index}` (0-based), `{x_count}` (1-based), `{x_hasNext}`,
 * `{x_isFirst}`, `{x_isLast}`, `{x_odd}`, `{x_even}`, `{x_indexParity}`; `{! comment !}`, `{| raw |}`, `\{` for a
 * literal brace before a tag start; the older `[[${expr}]]` form with the same expressions. Expressions: dot paths
 * with `[i]`/`['key']` indexes, whitelisted methods (string, list and map methods), helper namespaces
 * (`uuidUtils:`, `json:`, `encoder:`, `caller:`), literals, `== != < <= > >= && || !` (also `eq ne lt le gt ge
 * and or is`), `a ? b : c` and `a ?: b` (default when missing/null), `x.or(y)`.
 *
 * Rendering is TEXT mode (no escaping). Missing values render as ''. Bounds: at most `MAX_ITERATIONS` loop
 * iterations per render and `MAX_OUTPUT_LENGTH` characters of output (or of any string a method builds); past a
 * bound the render fails with `TemplateLimitError` (no truncated output: a cut-off HTTP body or JSON is worse than
 * a clear failure). Everything `renderTemplate` throws is a `TemplateError`.
 */

export { TemplateError, TemplateLimitError, TemplateSyntaxError } from './errors.ts';
export type { SourcePosition } from './errors.ts';
export { MAX_ITERATIONS, MAX_OUTPUT_LENGTH };

export interface CompiledTemplate {
  readonly source: string;
  /** Renders against the data model; throws `TemplateLimitError` when a bound is hit. */
  render(data: Readonly<Record<string, unknown>>): string;
}

const NEEDS_RENDERING = /(?<!\$)\{[\p{L}#/!|]|\[\[\$\{/u;

/**
 * The fast path: only a string containing `{` directly followed by a letter, `#`, `/`, `!` or `|`, or the older
 * `[[${` form, is a template. Anything else (`{"a":1}`, `{ x }`, plain text) is used unchanged. A `{` right after
 * `$` never starts a tag: `${vault:NAME}` / `${caller:token}` are placeholders for later stages (DESIGN §4.10).
 */
export function needsRendering(source: string): boolean {
  return NEEDS_RENDERING.test(source);
}

/** How many distinct sources are kept compiled; the least recently used one is dropped first. */
export const TEMPLATE_CACHE_SIZE = 2_000;
/** Sources longer than this are compiled on every use rather than cached (keeps the cache's memory bounded). */
const MAX_CACHED_SOURCE_LENGTH = 64 * 1024;

const cache = new LRUCache<string, CompiledTemplate | TemplateSyntaxError>({ max: TEMPLATE_CACHE_SIZE });
let compilations = 0;

function build(source: string, nodes: readonly TemplateNode[]): CompiledTemplate {
  if (nodes.length === 0) return { source, render: () => '' };
  if (nodes.length === 1 && typeof nodes[0] === 'string') {
    const text = nodes[0];
    return { source, render: () => text };
  }
  return { source, render: (data) => renderNodes(nodes, data) };
}

function compileUncached(source: string): CompiledTemplate {
  compilations++;
  return build(source, parseTemplate(source));
}

/**
 * Compiles a template (cached by source). Throws `TemplateSyntaxError` for a malformed template. Tasks may call
 * this at deployment to report syntax errors early and keep the compiled template.
 */
export function compileTemplate(source: string): CompiledTemplate {
  if (!needsRendering(source)) return { source, render: () => source };
  const cached = cache.get(source);
  if (cached !== undefined) {
    if (cached instanceof TemplateSyntaxError) throw cached;
    return cached;
  }
  let compiled: CompiledTemplate | TemplateSyntaxError;
  try {
    compiled = compileUncached(source);
  } catch (error) {
    if (!(error instanceof TemplateSyntaxError)) throw error;
    compiled = error;
  }
  if (source.length <= MAX_CACHED_SOURCE_LENGTH) cache.set(source, compiled);
  if (compiled instanceof TemplateSyntaxError) throw compiled;
  return compiled;
}

/** Renders `source` against `data`. Strings that need no rendering are returned unchanged without parsing. */
export function renderTemplate(source: string, data: Record<string, unknown>): string {
  if (!needsRendering(source)) return source;
  return compileTemplate(source).render(data);
}

/** Counters for tests and metrics: how many templates were parsed, how many are cached. */
export function templateEngineStats(): { compilations: number; cached: number } {
  return { compilations, cached: cache.size };
}

/** Empties the compiled-template cache (tests). */
export function clearTemplateCache(): void {
  cache.clear();
}
