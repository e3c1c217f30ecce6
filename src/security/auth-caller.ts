/**
 * Caller identity (SPEC "Authentication" 6, reference §15.2/§8.3): an HTTP call whose header values hold
 * `${caller:token}` or `${caller:userId}` sends the bearer token / the principal of the user who is chatting, so
 * that the action runs as that user.
 *
 * Rules:
 * - only header values resolve the placeholders (like upstream), and only placeholders written in the
 *   configuration (`{caller:token}` in a template renders to the same placeholder);
 * - only towards the service's own origin (the origin the chatting request came to, and `svc.public-url`) or an
 *   origin listed in `svc.caller-identity.allowed-origins`; towards anything else the placeholders resolve to
 *   empty text, so a token never leaves for a foreign host;
 * - without an authenticated caller (authentication off, or a turn that no user request started) they resolve
 *   to empty text;
 * - the stored request record and every log line show `<REDACTED>` instead of the values.
 */

export interface CallerIdentity {
  readonly principal: string;
  /** The caller's bearer token. Never log it, never store it. */
  readonly token: string;
  /** Origins (`scheme://host[:port]`) that may receive it: the service's own and the allow-listed ones. */
  readonly allowedOrigins: readonly string[];
}

export const CALLER_PLACEHOLDER = /\$\{caller:(token|userId)\}/g;

function normalizeOrigin(text: string): string | undefined {
  try {
    const url = new URL(text.trim());
    return url.origin === 'null' ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/** Whether the caller's identity may be sent to `target`. */
export function mayReceiveCallerIdentity(caller: CallerIdentity, target: URL): boolean {
  return caller.allowedOrigins.some((candidate) => normalizeOrigin(candidate) === target.origin);
}

export function hasCallerPlaceholder(text: string): boolean {
  CALLER_PLACEHOLDER.lastIndex = 0;
  return CALLER_PLACEHOLDER.test(text);
}

/**
 * Resolves the placeholders of one header value: `text` goes out, `values` are what must be masked wherever the
 * request is shown. Without a caller, or towards a target that may not receive it, they become empty text.
 * `placeholder` matches them (group 1: `token` or `userId`): the HTTP calls pass the markers their compiled
 * headers put where the configuration wrote a placeholder, so that none arriving through data is resolved.
 */
export function resolveCallerPlaceholders(
  value: string,
  caller: CallerIdentity | undefined,
  target: URL,
  placeholder: RegExp,
): { text: string; values: string[] } {
  const permitted = caller !== undefined && mayReceiveCallerIdentity(caller, target);
  const values: string[] = [];
  const text = value.replace(placeholder, (_match, which: string) => {
    if (!permitted) return '';
    const resolved = which === 'token' ? caller.token : caller.principal;
    values.push(resolved);
    return resolved;
  });
  return { text, values };
}
