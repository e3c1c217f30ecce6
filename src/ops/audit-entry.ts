import { createHmac, createSecretKey, type KeyObject, pbkdf2, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { canonicalJson } from '../shared/json.ts';

/**
 * The audit ledger's entry, its bounded summaries and its signature (BEHAVIOUR §17.1, §17.2).
 *
 * Signing: key = PBKDF2-HMAC-SHA256(master key, fixed salt `svc-audit-hmac-v1`, 600,000 iterations, 256 bit);
 * `hmac` = `v1:` + hex(HMAC-SHA256(key, `v1|` + canonical(entry without `hmac`) + `|` + previousHmac)), where
 * canonical is JSON with object keys sorted and `previousHmac` is the signature of the entry written before it in
 * the same conversation (empty for the first). Changing, removing or re-ordering an entry thus breaks either its
 * own signature or the link of the entry after it.
 */

export interface AuditEntry {
  readonly id: string;
  readonly conversationId: string;
  readonly agentId: string;
  readonly agentVersion: number;
  readonly userId: string;
  readonly environment: string;
  /** Index of the conversation step the task ran in (0 = the conversation start). */
  readonly stepIndex: number;
  readonly workflowId: string;
  /** `<workflowId>:<position of the task in its workflow>`. */
  readonly taskId: string;
  /** The task type id, e.g. `ai.svc.parser`. */
  readonly taskType: string;
  /** Position of the task in the agent's whole pipeline, from 0. */
  readonly taskIndex: number;
  readonly durationMs: number;
  /** The step's actions after the task ran. */
  readonly actions: readonly string[];
  /** What the task found: the user input of the step (as memory holds it), the context names, the actions before it. */
  readonly input: Readonly<Record<string, unknown>>;
  /** The step data the task wrote, key by key, values bounded and secrets masked. */
  readonly output: Readonly<Record<string, unknown>>;
  /** `audit:*` step data the task wrote (LLM evidence), or null. */
  readonly llmDetail: Readonly<Record<string, unknown>> | null;
  readonly outcome: 'ok' | 'error';
  /** The error message when the task failed. */
  readonly error: string | null;
  /** When the task finished, ISO-8601 with milliseconds. */
  readonly timestamp: string;
  /** Per conversation, strictly increasing from 1. */
  readonly sequence: number;
  readonly previousHmac: string | null;
  /** Null when the ledger runs without a master key (entries are then unsigned). */
  readonly hmac: string | null;
}

/** An entry before signing. */
export type AuditDraft = Omit<AuditEntry, 'previousHmac' | 'hmac'>;

const HMAC_VERSION = 'v1';
const KEY_SALT = 'svc-audit-hmac-v1';
export const AUDIT_KDF_ITERATIONS = 600_000;

const pbkdf2Async = promisify(pbkdf2);

/**
 * The signing key derived from the vault's master key, as a `KeyObject`: an HMAC keyed with one costs ~2 µs, with
 * the key's bytes ~14 µs (Node prepares a key from them for every HMAC).
 */
export async function deriveAuditKey(masterKey: string, iterations = AUDIT_KDF_ITERATIONS): Promise<KeyObject> {
  return createSecretKey(await pbkdf2Async(masterKey, KEY_SALT, iterations, 32, 'sha256'));
}

/** The signature of `entry` (its own `hmac` member ignored) chained to `previousHmac`. */
export function signatureOf(
  key: KeyObject,
  entry: Omit<AuditEntry, 'hmac'> & { hmac?: unknown },
  previousHmac: string | null,
): string {
  const { hmac: _, ...signed } = entry;
  // Signed in the form it is stored: canonical JSON writes what JSON writes of undefined, NaN, -0 and the like.
  const digest = createHmac('sha256', key)
    .update(`${HMAC_VERSION}|${canonicalJson({ ...signed, previousHmac })}|${previousHmac ?? ''}`)
    .digest('hex');
  return `${HMAC_VERSION}:${digest}`;
}

export function sign(key: KeyObject | undefined, draft: AuditDraft, previousHmac: string | null): AuditEntry {
  if (!key) return { ...draft, previousHmac: null, hmac: null };
  const unsigned = { ...draft, previousHmac };
  return { ...unsigned, hmac: signatureOf(key, unsigned, previousHmac) };
}

/** Whether the stored entry's `hmac` is the signature of its content. */
export function hasValidSignature(key: KeyObject, entry: AuditEntry): boolean {
  if (typeof entry.hmac !== 'string') return false;
  const expected = Buffer.from(signatureOf(key, entry, entry.previousHmac ?? null));
  const actual = Buffer.from(entry.hmac);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

// --- bounded, secret-free summaries -----------------------------------------------------------------------------

const MAX_TEXT = 200;
const MAX_ITEMS = 20;
const MAX_DEPTH = 4;
export const REDACTED = '<REDACTED>';

const SENSITIVE_KEY =
  /^(api[_-]?key|token|access[_-]?token|refresh[_-]?token|secret|client[_-]?secret|password|passwd|authorization|proxy-authorization|cookie|set-cookie|x-api-key)$/i;
const SECRET_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bsk-(ant-)?[A-Za-z0-9_-]{20,}/g, 'sk-$1<REDACTED>'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 <REDACTED>'],
  [
    /\b(api[_-]?key|apikey|token|secret|password|authorization)(["']?\s*[:=]\s*["']?)(?!\$\{vault:)([^"'&\s,;}]{8,})/gi,
    '$1$2<REDACTED>',
  ],
];

/** Matches wherever one of `SECRET_PATTERNS` could: most texts have none of these words and skip the patterns. */
const MAY_HOLD_SECRET = /sk-|bearer|basic|api[_-]?key|token|secret|password|authorization/i;

/** Masks well-known credential shapes in free text (`${vault:...}` references are pointers and stay). */
export function redactText(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let result = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) result = result.replace(pattern, replacement);
  return result;
}

function boundedText(text: string, max = MAX_TEXT): string {
  // Masked before the final cut, so a credential is never half-shown at the edge.
  const masked = redactText(text.length > max * 4 ? text.slice(0, max * 4) : text);
  return masked.length > max ? `${masked.slice(0, max)}… (${text.length} chars)` : masked;
}

/** Values (texts, numbers, members, items) one summary shows at most; the rest is elided. */
const MAX_NODES = 200;

/**
 * A small copy of `value` for the ledger: texts cut to 200 characters, at most 20 items or members per level,
 * 4 levels deep and 200 values in all; values under credential-like names and credential-like text masked.
 * The cost is bounded whatever the size of `value`.
 */
export function summarize(value: unknown): unknown {
  return summarizeWithin(value, 0, { left: MAX_NODES });
}

function summarizeWithin(value: unknown, depth: number, budget: { left: number }): unknown {
  if (budget.left-- <= 0) return '…';
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return boundedText(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'object') return boundedText(String(value));
  if (Array.isArray(value)) {
    if (depth >= MAX_DEPTH) return `[${value.length} items]`;
    const items = value.slice(0, MAX_ITEMS).map((item) => summarizeWithin(item, depth + 1, budget));
    if (value.length > MAX_ITEMS) items.push(`… ${value.length - MAX_ITEMS} more items`);
    return items;
  }
  if (depth >= MAX_DEPTH) return '{…}';
  const summary: Record<string, unknown> = {};
  let shown = 0;
  let more = false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (shown === MAX_ITEMS) {
      more = true;
      break;
    }
    const item = (value as Record<string, unknown>)[key];
    summary[key] = SENSITIVE_KEY.test(key) && !isHarmless(item) ? REDACTED : summarizeWithin(item, depth + 1, budget);
    shown++;
  }
  if (more) summary['…'] = 'more members';
  return summary;
}

/** Values under a credential-like name that may be shown: nothing, an already masked value, a vault reference. */
function isHarmless(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  return typeof value === 'string' && (value === REDACTED || /^\$\{vault:[^}\s]+\}$/.test(value));
}

/** An error's message, bounded and masked. */
export function errorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return boundedText(message, 1000);
}
