import type { Outbound } from '../security/outbound.ts';

/**
 * Fetching a web page for the `webscraper` / `fetch_page` tools: every URL (also every redirect target) passes
 * the URL check first, and the request goes out through the given fetch (in the service, the guarded outbound
 * dispatcher, which checks again at connect time); the answer is reduced to readable text of at most 5000
 * characters.
 */

export type CheckUrl = (url: string) => Promise<void>;

/** How the web tools reach the web: the early URL check and the fetch that sends. */
export interface WebAccess {
  readonly checkUrl: CheckUrl;
  readonly fetch: typeof globalThis.fetch;
}

export const MAX_PAGE_TEXT = 5000;
const MAX_REDIRECTS = 5;
const MAX_BODY_BYTES = 2_000_000;

/** The default check when no URL guard is given: only http and https URLs. */
export const allowHttpUrls: CheckUrl = async (url) => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`'${url}' is not a valid URL.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`Only http and https URLs can be fetched, not ${parsed.protocol}.`);
};

/** Without a URL guard: http and https URLs, through the global fetch. */
export const unguardedWebAccess: WebAccess = { checkUrl: allowHttpUrls, fetch: (input, init) => fetch(input, init) };

export async function fetchPageText(
  url: string,
  options: { web: WebAccess; signal: AbortSignal; maxChars?: number },
): Promise<string> {
  let target = url;
  for (let redirects = 0; ; redirects++) {
    await options.web.checkUrl(target);
    const response = await options.web.fetch(target, {
      redirect: 'manual',
      signal: options.signal,
      headers: { accept: 'text/html, text/plain;q=0.9, */*;q=0.5' },
    });
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      if (redirects >= MAX_REDIRECTS) throw new Error(`Too many redirects from ${url}.`);
      target = new URL(location, target).toString();
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`The page ${target} answered with status ${response.status}.`);
    }
    const body = await readLimited(response, MAX_BODY_BYTES);
    const type = response.headers.get('content-type') ?? '';
    const pageText = /html|xml/i.test(type) || /^\s*</.test(body) ? htmlToText(body) : body.replace(/\s+/g, ' ').trim();
    return pageText.slice(0, options.maxChars ?? MAX_PAGE_TEXT);
  }
}

async function readLimited(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.byteLength;
    if (size >= maxBytes) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(parts).toString('utf8');
}

const entities: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|template|svg|head)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<\/?(p|div|br|li|h[1-6]|tr|section|article|header|footer|ul|ol|table)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name.startsWith('#x') || name.startsWith('#X'))
        return String.fromCodePoint(Number.parseInt(name.slice(2), 16) || 32);
      if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10) || 32);
      return entities[name.toLowerCase()] ?? whole;
    })
    .replace(/[ \t\f\v\r]+/g, ' ')
    .replace(/ *\n[\s]*/g, '\n')
    .trim();
}

/** Web access through a guarded outbound dispatcher: its URL guard checks early, its fetch at connect time. */
export function guardedWebAccess(outbound: Outbound): WebAccess {
  const checkUrl: CheckUrl = async (url) => {
    await allowHttpUrls(url);
    await outbound.guard.check(new URL(url));
  };
  return { checkUrl, fetch: outbound.fetch };
}
