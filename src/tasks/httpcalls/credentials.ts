import type { IncomingHttpHeaders } from 'node:http';
import { REDACTED } from '../../security/secret-references.ts';

/**
 * Headers that carry credentials. Their values are always `<REDACTED>` in the stored request record, are left
 * out of stored response headers, and do not follow a redirect to another origin.
 */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'set-cookie2',
  'www-authenticate',
  'proxy-authenticate',
  'x-api-key',
  'api-key',
  'apikey',
  'x-auth-token',
  'x-access-token',
  'x-csrf-token',
  'x-xsrf-token',
  'x-amz-security-token',
  'x-goog-api-key',
]);

const CREDENTIAL_WORDS = /secret|token|password|passwd|api[-_]?key|credential|session/i;

export function isCredentialHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return CREDENTIAL_HEADERS.has(lower) || CREDENTIAL_WORDS.test(lower);
}

/** Request headers for the memory: credential headers masked. */
export function maskedRequestHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const masked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) masked[name] = isCredentialHeader(name) ? REDACTED : value;
  return masked;
}

/**
 * Response headers for the memory: credential headers left out, repeated headers as lists. Each is kept under its
 * lower-case name and, as the original service's files read them (`EDDIResponseHeader.Location`), under its
 * canonical name (`Location`, `Content-Type`, `X-Request-Id`).
 */
export function storableResponseHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || isCredentialHeader(name)) continue;
    kept[name] = value;
    kept[canonicalHeaderName(name)] = value;
  }
  return kept;
}

/** `content-type` → `Content-Type`: a lower-case letter at the start or after a dash in upper case. */
function canonicalHeaderName(name: string): string {
  // A loop: a regular expression with a replacer function costs twice as much per name.
  let canonical = '';
  let wordStart = true;
  for (let index = 0; index < name.length; index++) {
    const char = name[index]!;
    canonical += wordStart && char >= 'a' && char <= 'z' ? char.toUpperCase() : char;
    wordStart = char === '-';
  }
  return canonical;
}
