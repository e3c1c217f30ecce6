import { fieldPath, indexPath } from '../resources/schemas/common.ts';
import { needsRendering } from '../templating/engine.ts';
import { hasVaultReference, redact, REDACTED } from './secret-references.ts';
import { isRecord } from '../shared/json.ts';

/**
 * Removing secrets from data, in one place (DESIGN §4.10):
 * - `scrubSecretValue`: masks one known secret value wherever it occurs in a value (texts inside objects and lists),
 *   e.g. a secret-scoped property's value in the step that carried it;
 * - `scrubSecretFields`: blanks the secret-bearing fields of a configuration body for an export (reference §12.3).
 */

/** Shorter secrets are masked only where a whole text equals them (not inside other text). */
export const MIN_SECRET_LENGTH_INSIDE_TEXT = 8;

/** `text` with the secret masked; longer secrets also inside other text, in any letter case (a parser may fold it). */
export function scrubSecretText(text: string, secret: string): string {
  if (secret === '') return text;
  if (text === secret) return REDACTED;
  if (secret.length < MIN_SECRET_LENGTH_INSIDE_TEXT) return text;
  if (text.includes(secret)) return redact(text, [secret]);
  const lower = text.toLowerCase();
  const needle = secret.toLowerCase();
  if (!lower.includes(needle)) return text;
  let result = '';
  let from = 0;
  for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, from)) {
    result += text.slice(from, at) + REDACTED;
    from = at + needle.length;
  }
  return result + text.slice(from);
}

/** `value` with the secret masked in every text inside it; the same object when nothing changed. */
export function scrubSecretValue(value: unknown, secret: string): unknown {
  if (typeof value === 'string') return scrubSecretText(value, secret);
  if (Array.isArray(value)) {
    const items = value.map((item) => scrubSecretValue(item, secret));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (isRecord(value)) {
    let changed = false;
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      copy[key] = scrubSecretValue(item, secret);
      changed ||= copy[key] !== item;
    }
    return changed ? copy : value;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------------
// Secret-bearing configuration fields (exports)
// ---------------------------------------------------------------------------------------------------------------

/*
 * Vault references (`${vault:NAME}`) are pointers and stay; any other value of a secret-bearing field is replaced
 * by an empty string:
 * - LLM task parameters named like a credential (`apiKey`, `secretAccessKey`, `token`, `password`, ...);
 * - HTTP-call request headers named like a credential (`Authorization`, `X-Api-Key`, `Cookie`, ...), unless the
 *   value is a template (`Bearer {properties.token}` holds no secret itself);
 * - agent channel settings (`appSecret`, `verificationToken`, `pageAccessToken`, and anything named like those).
 */

/** Names of settings and parameters that hold a credential. */
export const SECRET_PARAMETER = /(api[-_]?key|secret|token|password|passwd|access[-_]?key|credential)/i;
const SECRET_HEADER = /(authorization|cookie|api[-_]?key|token|secret|password|credential|auth)/i;

export interface ScrubbedField {
  /** JSON path of the blanked field, e.g. `$.tasks[0].parameters.apiKey`. */
  readonly path: string;
}

function keep(value: string, templatesAllowed: boolean): boolean {
  return value === '' || hasVaultReference(value) || (templatesAllowed && needsRendering(value));
}

function scrubMap(
  map: unknown,
  at: string,
  pattern: RegExp,
  templatesAllowed: boolean,
  scrubbed: ScrubbedField[],
): void {
  if (!isRecord(map)) return;
  for (const [name, value] of Object.entries(map)) {
    if (typeof value !== 'string' || !pattern.test(name) || keep(value, templatesAllowed)) continue;
    map[name] = '';
    scrubbed.push({ path: fieldPath(at, name) });
  }
}

function eachOf(list: unknown, at: string, visit: (item: Record<string, unknown>, path: string) => void): void {
  if (!Array.isArray(list)) return;
  for (const [index, item] of list.entries()) if (isRecord(item)) visit(item, indexPath(at, index));
}

/** A copy of a configuration body of `kind` with its literal credentials blanked, and the paths blanked. */
export function scrubSecretFields(kind: string, body: unknown): { body: unknown; scrubbed: ScrubbedField[] } {
  const copy = structuredClone(body);
  const scrubbed: ScrubbedField[] = [];
  if (!isRecord(copy)) return { body: copy, scrubbed };
  if (kind === 'llm') {
    eachOf(copy.tasks, '$.tasks', (task, at) =>
      scrubMap(task.parameters, `${at}.parameters`, SECRET_PARAMETER, false, scrubbed),
    );
  } else if (kind === 'httpcalls') {
    eachOf(copy.httpCalls, '$.httpCalls', (call, at) => {
      if (isRecord(call.request))
        scrubMap(call.request.headers, `${at}.request.headers`, SECRET_HEADER, true, scrubbed);
    });
  } else if (kind === 'mcpcalls') {
    scrubMap(copy.headers, '$.headers', SECRET_HEADER, true, scrubbed);
  } else if (kind === 'agent') {
    eachOf(copy.channels, '$.channels', (channel, at) =>
      scrubMap(channel.config, `${at}.config`, SECRET_PARAMETER, false, scrubbed),
    );
  }
  return { body: copy, scrubbed };
}

// ---------------------------------------------------------------------------------------------------------------
// Credentials inside free text (reasons shown to users)
// ---------------------------------------------------------------------------------------------------------------

const URL_USERINFO = /\b([a-z][a-z\d+.-]*:\/\/)[^\s/?#@'"]+@/gi;
const SECRET_QUERY_PARAMETER =
  /([?&][^=&\s'"#]*(?:api[-_]?key|secret|token|password|passwd|access[-_]?key|credential|auth|signature|sig|key)[^=&\s'"#]*=)[^&\s'"#]+/gi;
const AUTHORIZATION_VALUE = /\b(bearer|basic)\s+[\w\-.~+/]{8,}=*/gi;

/**
 * `text` with credentials that may sit in it without being known secret values masked: the user part of URLs
 * (`https://user:password@host`), credential-like query parameters (`?api_key=...`) and authorization values
 * (`Bearer ...`). For texts built from errors and shown to users, after the known secret values were masked.
 */
export function scrubCredentialsInText(text: string): string {
  return text
    .replace(URL_USERINFO, `$1${REDACTED}@`)
    .replace(SECRET_QUERY_PARAMETER, `$1${REDACTED}`)
    .replace(AUTHORIZATION_VALUE, `$1 ${REDACTED}`);
}
