/**
 * Credential stripping for connection URLs: use `redactUrl` for anything logged, `scrubSecrets` on error
 * messages that might echo the URL or its password.
 */

/** The URL with its password (and a `password` query parameter) replaced by `***`; the user name stays. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '<unparseable connection URL>';
  }
  if (parsed.password !== '') parsed.password = '***';
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
  return parsed.toString();
}

/** Removes every form of the URL's password (raw, percent-decoded) and the URL itself from a message. */
export function scrubSecrets(message: string, url: string): string {
  const secrets = new Set<string>([url]);
  try {
    const parsed = new URL(url);
    for (const value of [parsed.password, parsed.searchParams.get('password') ?? '']) {
      if (value === '') continue;
      secrets.add(value);
      secrets.add(safeDecode(value));
    }
  } catch {
    // unparseable: only the whole URL is scrubbed
  }
  let result = message;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret !== '') result = result.split(secret).join(secret === url ? redactUrl(url) : '***');
  }
  return result;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
