import { resolveCallerPlaceholders, type CallerIdentity } from '../../security/auth-caller.ts';
import type { SecretResolver } from '../../security/secret-references.ts';
import { scrubCredentialsInText } from '../../security/secret-scrubbing.ts';
import type { CompiledHttpCall } from './compile.ts';
import { maskedRequestHeaders } from './credentials.ts';
import { CALLER_MARKER, resolveSecrets, SecretValues } from './field-template.ts';
import type { OutgoingRequest } from './transport.ts';

/**
 * Builds the request of a call (reference §8.3): URL = targetServerUrl + path (an absolute `http…` path as it
 * is), templated, values in the path percent-encoded; method; query parameters, headers and body templated; then
 * `${vault:NAME}` references of the configuration resolved in every field. Also builds the request record for the
 * memory, in which every secret is `<REDACTED>` and credential headers are masked whatever they hold.
 */

/** What the memory keeps of a request (`httpCalls:<name>Request`). */
export interface RequestRecord {
  readonly uri: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly queryParams: Record<string, string>;
  readonly body?: string;
}

export interface BuiltRequest {
  readonly outgoing: OutgoingRequest;
  readonly record: RequestRecord;
  /** The secret values that went into the request (to mask them in anything shown about it). */
  readonly secrets: SecretValues;
}

export class InvalidRequestUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRequestUrlError';
  }
}

const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD']);

function parseUrl(text: string, secrets: SecretValues): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidRequestUrlError(`the URL '${scrubCredentialsInText(secrets.mask(text))}' is not valid`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidRequestUrlError(`the URL scheme '${url.protocol.replace(/:$/, '')}' is not http or https`);
  }
  return url;
}

export async function buildRequest(
  call: CompiledHttpCall,
  data: Readonly<Record<string, unknown>>,
  resolver: SecretResolver,
  caller?: CallerIdentity,
): Promise<BuiltRequest> {
  const { request, secretNames } = call;
  const secrets = new SecretValues();
  const resolve = (rendered: string) => resolveSecrets(rendered, secretNames, resolver, secrets);

  // Render everything first (template errors before any secret is touched), then resolve the secrets.
  const renderedUrl = request.absolute
    ? request.path.render(data)
    : request.base.render(data) + request.path.render(data);
  const renderedQuery = request.queryParams.map(([name, template]) => [name, template.render(data)] as const);
  const renderedHeaders = request.headers.map(([name, template]) => [name, template.render(data)] as const);
  const renderedBody = request.body?.render(data);

  const url = await resolve(renderedUrl);
  const target = parseUrl(url.text, secrets);
  // The record's URL carries the redacted query values: a copy, needed only when there are any.
  const recordUrl = renderedQuery.length === 0 ? target : new URL(target.href);
  const queryParams: Record<string, string> = {};
  for (const [name, rendered] of renderedQuery) {
    const value = await resolve(rendered);
    target.searchParams.append(name, value.text);
    recordUrl.searchParams.append(name, value.redacted);
    queryParams[name] = value.redacted;
  }
  const recordUri = recordUrl.href;

  const headers: Record<string, string> = {};
  const recordHeaders: Record<string, string> = {};
  const sensitiveHeaders = new Set<string>();
  for (const [index, [name, rendered]] of renderedHeaders.entries()) {
    const value = await resolve(rendered);
    headers[name] = value.text;
    recordHeaders[name] = value.redacted;
    if (value.text !== value.redacted) sensitiveHeaders.add(name.toLowerCase());
    // `${caller:token}` / `${caller:userId}` written in the configuration (markers by now; one that came in with
    // the data stays text): the chatting user's identity, only to the service itself or an allow-listed origin
    // (src/security/auth-caller.ts); masked like a secret.
    if (request.headers[index]![1].hasCaller) {
      const resolved = resolveCallerPlaceholders(value.text, caller, target, CALLER_MARKER);
      for (const sent of resolved.values) secrets.add(sent);
      headers[name] = resolved.text;
      recordHeaders[name] = resolveCallerPlaceholders(value.redacted, caller, target, CALLER_MARKER).text;
      if (resolved.values.length > 0) sensitiveHeaders.add(name.toLowerCase());
    }
  }

  let body: string | undefined;
  let recordBody: string | undefined;
  if (renderedBody !== undefined && !METHODS_WITHOUT_BODY.has(request.method)) {
    const value = await resolve(renderedBody);
    body = value.text;
    recordBody = value.redacted;
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
      headers['content-type'] = request.contentType;
      recordHeaders['content-type'] = request.contentType;
    }
  }

  // Masking by value as well catches a secret that also came in through data, or a reference in the host part.
  const record: RequestRecord = {
    uri: secrets.mask(recordUri),
    method: request.method,
    headers: secrets.maskValues(maskedRequestHeaders(recordHeaders)),
    queryParams: secrets.maskValues(queryParams),
    ...(recordBody === undefined ? {} : { body: secrets.mask(recordBody) }),
  };
  return { outgoing: { url: target, method: request.method, headers, body, sensitiveHeaders }, record, secrets };
}
