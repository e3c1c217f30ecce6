import { randomBytes } from 'node:crypto';
import { compileTemplate, needsRendering } from '../../templating/engine.ts';
import { renderNodes } from '../../templating/evaluator.ts';
import { parseTemplate, type TemplateNode } from '../../templating/parser.ts';
import { redact, REDACTED, VAULT_REFERENCE, type SecretResolver } from '../../security/secret-references.ts';

/**
 * A templated HTTP-call field (URL, path, query value, header value, body) or LLM-task parameter that may hold
 * `${vault:NAME}` references (DESIGN §4.10: every field resolves them, at run time only).
 *
 * Order: the template is rendered first, then the vault references are resolved. Only references written in the
 * configuration are resolved: at compile time each one is replaced by an unguessable marker (a per-process nonce
 * between NUL characters) that the template engine treats as plain text; after rendering, the markers are swapped
 * for the secret values. A `${vault:...}` that arrives through data (a user's input, a response, an LLM's tool
 * argument) is left as literal text and never reaches the resolver, so nobody can make a call send a secret the
 * configuration did not put there.
 */

const NONCE = randomBytes(12).toString('hex');
const MARKER = new RegExp(`\u0000vault-${NONCE}-(\\d+)\u0000`, 'g');
const MARKER_START = `\u0000vault-${NONCE}-`;
const marker = (index: number) => `${MARKER_START}${index}\u0000`;

/** `${caller:token}` / `${caller:userId}` written in a header, also as the tag `{caller:…}` (not `\{` escaped). */
const CONFIGURED_CALLER = /(?<!\\)\$?\{caller:(token|userId)\}/g;
/**
 * The marker a configured caller placeholder becomes (group 1: `token` or `userId`): pass it to
 * `resolveCallerPlaceholders`, so that a `${caller:…}` arriving through data stays literal text, like a vault
 * reference.
 */
export const CALLER_MARKER = new RegExp(`\u0000caller-${NONCE}-(token|userId)\u0000`, 'g');

export interface FieldTemplate {
  readonly source: string;
  /** Whether the field holds vault references. */
  readonly hasSecrets: boolean;
  /** Whether the field holds caller placeholders (compiled with `callerPlaceholders`; markers after rendering). */
  readonly hasCaller: boolean;
  /** Renders the template; vault references are still markers in the result (pass it to `resolveSecrets`). */
  render(data: Readonly<Record<string, unknown>>): string;
}

/** The vault references of one rendered field set, resolved. */
export interface ResolvedField {
  /** The text to send. */
  readonly text: string;
  /** The same text with every secret replaced by `<REDACTED>` (for the memory and logs). */
  readonly redacted: string;
}

/**
 * Percent-encodes a value substituted into a URL path as a path segment: everything except `A-Z a-z 0-9 - _ ~` is
 * encoded (reference §8.3), so `.` and `/` in a value can never walk the path (`..` becomes `%2E%2E`).
 */
export function encodePathSegment(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*.]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Compiles a field. `secretNames` collects the field's vault references (their markers index into it); without
 * it the field resolves none (fields whose result goes into the memory: property values, outputs, quick replies),
 * and `${vault:...}` stays literal text. With `encodeValues`, values of top-level `{expr}` tags are path-segment
 * encoded (URL paths); text produced by `{#if}` / `{#for}` sections is inserted as it renders. With
 * `callerPlaceholders` (header values), configured caller placeholders become `CALLER_MARKER`s the same way. Throws
 * `TemplateSyntaxError`.
 */
export function compileFieldTemplate(
  source: string,
  secretNames?: string[],
  options: { encodeValues?: boolean; callerPlaceholders?: boolean } = {},
): FieldTemplate {
  let hasSecrets = false;
  let hasCaller = false;
  VAULT_REFERENCE.lastIndex = 0;
  const names = secretNames ?? [];
  let marked =
    secretNames === undefined
      ? source
      : source.replace(VAULT_REFERENCE, (_match, name: string) => {
          hasSecrets = true;
          let index = names.indexOf(name);
          if (index < 0) index = names.push(name) - 1;
          return marker(index);
        });
  if (options.callerPlaceholders)
    marked = marked.replace(CONFIGURED_CALLER, (_match, which: string) => {
      hasCaller = true;
      return `\u0000caller-${NONCE}-${which}\u0000`;
    });
  if (!needsRendering(marked)) return { source, hasSecrets, hasCaller, render: () => marked };
  if (!options.encodeValues) {
    const template = compileTemplate(marked);
    return { source, hasSecrets, hasCaller, render: (data) => template.render(data) };
  }
  compileTemplate(marked); // reports syntax errors the same way as every other field
  const nodes: readonly TemplateNode[] = parseTemplate(marked);
  return {
    source,
    hasSecrets,
    hasCaller,
    render(data) {
      let text = '';
      for (const node of nodes) {
        if (typeof node === 'string') text += node;
        else if (node.kind === 'output') text += encodePathSegment(renderNodes([node], data));
        else text += renderNodes([node], data);
      }
      return text;
    },
  };
}

/** Secret values met while resolving one request; used to mask them wherever request text could be shown. */
export class SecretValues {
  readonly #values = new Set<string>();

  add(value: string): void {
    if (value === '') return;
    // Also the forms the value takes once it is put into a URL, a query or a JSON text.
    for (const form of [
      value,
      encodeURIComponent(value),
      new URLSearchParams({ v: value }).toString().slice(2),
      JSON.stringify(value).slice(1, -1),
    ]) {
      if (form !== '') this.#values.add(form);
    }
  }

  get size(): number {
    return this.#values.size;
  }

  /** Every known form of every value, longest first (so a value containing another is masked whole). */
  get values(): readonly string[] {
    return [...this.#values].sort((a, b) => b.length - a.length);
  }

  /** Masks every known secret value in `text`. */
  mask(text: string): string {
    if (this.#values.size === 0) return text;
    return redact(text, this.values);
  }

  /** `values` with each value masked (the same object when no secret is known). */
  maskValues(values: Record<string, string>): Record<string, string> {
    if (this.#values.size === 0) return values;
    return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, this.mask(value)]));
  }
}

/**
 * Swaps the markers of a rendered field for the secrets (through the resolver, which rejects with
 * `MissingSecretError` naming an unknown secret) and for `<REDACTED>` in the redacted copy.
 */
export async function resolveSecrets(
  rendered: string,
  names: readonly string[],
  secrets: SecretResolver,
  seen: SecretValues,
): Promise<ResolvedField> {
  // Most fields hold no reference: no marker to look for.
  if (!rendered.includes(MARKER_START)) return { text: rendered, redacted: rendered };
  const matches = [...rendered.matchAll(MARKER)];
  if (matches.length === 0) return { text: rendered, redacted: rendered };
  const values = new Map<number, string>();
  for (const match of matches) {
    const index = Number(match[1]);
    if (values.has(index)) continue;
    const resolved = await secrets.resolve(`\${vault:${names[index]!}}`);
    values.set(index, resolved.text);
    seen.add(resolved.text);
    for (const value of resolved.secretValues) seen.add(value);
  }
  return {
    text: rendered.replace(MARKER, (_match, index: string) => values.get(Number(index)) ?? ''),
    redacted: rendered.replace(MARKER, REDACTED),
  };
}
