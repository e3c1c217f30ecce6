import { readFileSync } from 'node:fs';

/**
 * Every setting of the service, in one place. A setting has a name (`svc.*`), an environment form (upper case,
 * `.` and `-` become `_`), a type and a default. Sources, strongest first: the environment, the settings file
 * (`svc.properties` in the working directory, or the file named by `SVC_CONFIG_FILE`), the default.
 */

const INVALID = Symbol('invalid');

interface SettingDefinition<T> {
  readonly description: string;
  readonly defaultValue: T;
  readonly parse: (raw: string) => T | typeof INVALID;
  readonly expected: string;
  /** A secret setting's value is never printed, not even in an error message. */
  readonly secret?: boolean;
}

const text = (defaultValue: string, description: string): SettingDefinition<string> => ({
  description,
  defaultValue,
  expected: 'a text',
  parse: (raw) => raw,
});
const optionalText = (description: string, secret = false): SettingDefinition<string | undefined> => ({
  description,
  defaultValue: undefined,
  expected: 'a text',
  secret,
  parse: (raw) => (raw === '' ? undefined : raw),
});
const integer = (
  defaultValue: number,
  description: string,
  min = Number.MIN_SAFE_INTEGER,
): SettingDefinition<number> => ({
  description,
  defaultValue,
  expected: `an integer >= ${min}`,
  parse: (raw) => (/^-?\d+$/.test(raw.trim()) && Number(raw) >= min ? Number(raw) : INVALID),
});
const port = (defaultValue: number, description: string): SettingDefinition<number> => ({
  description,
  defaultValue,
  expected: 'a port number between 0 and 65535',
  parse: (raw) => (/^\d+$/.test(raw.trim()) && Number(raw) <= 65535 ? Number(raw) : INVALID),
});
const flag = (defaultValue: boolean, description: string): SettingDefinition<boolean> => ({
  description,
  defaultValue,
  expected: '`true` or `false`',
  parse: (raw) => ({ true: true, false: false })[raw.trim().toLowerCase() as 'true' | 'false'] ?? INVALID,
});
const oneOf = <const V extends string>(
  values: readonly V[],
  defaultValue: V,
  description: string,
): SettingDefinition<V> => ({
  description,
  defaultValue,
  expected: `one of ${values.join(', ')}`,
  parse: (raw) => values.find((value) => value === raw.trim().toLowerCase()) ?? INVALID,
});

export const settingDefinitions = {
  'svc.http.port': port(7070, 'HTTP listening port (0 picks a free port)'),
  'svc.http.host': text('0.0.0.0', 'HTTP listening address'),
  'svc.http.body-limit-bytes': integer(26_214_400, 'largest accepted request body; larger bodies answer 413', 1),
  'svc.http.max-json-depth': integer(
    100,
    'deepest nesting of arrays and objects in a JSON body or an imported JSON file; deeper ones answer 400',
    1,
  ),
  'svc.http.headers-timeout-millis': integer(
    30_000,
    'a request whose headers have not all arrived this long after it began answers 408 and its connection is closed',
    1,
  ),
  'svc.http.request-timeout-millis': integer(
    120_000,
    'a request (headers and body) not fully received this long after it began answers 408 and its connection is closed',
    1,
  ),
  'svc.http.max-connections': integer(
    10_000,
    'open connections at most; more are closed as they open (0 = no limit; keep it below the file descriptor limit)',
    0,
  ),
  'svc.http.max-connections-per-address': integer(
    256,
    'open connections from one client address at most; more are closed as they open (0 = no limit; behind a reverse proxy every client has the proxy address)',
    0,
  ),
  'svc.datastore.type': oneOf(['sqlite', 'postgres'], 'sqlite', 'storage adapter: embedded sqlite or PostgreSQL'),
  'svc.datastore.sqlite.path': text('./data/svc.db', 'embedded database file'),
  'svc.datastore.postgres.url': text('postgres://localhost:5432/svc', 'PostgreSQL connection string'),
  'svc.datastore.postgres.query-timeout-millis': integer(
    30_000,
    'a PostgreSQL query without an answer this long fails (the request answers 503) and its connection is closed: the network to the database cut, or the database frozen; 0 = wait as long as it takes',
    0,
  ),
  'svc.vault.master-key': optionalText('enables the secrets vault; unset = secret endpoints answer 503', true),
  'svc.oidc.tenant-enabled': flag(false, 'authentication with bearer tokens from an OIDC identity provider'),
  'svc.oidc.auth-server-url': optionalText('OIDC issuer URL'),
  'svc.oidc.client-id': optionalText('OIDC client id (audience)'),
  'svc.oidc.public-url': optionalText('public URL of the identity provider'),
  'svc.oidc.clock-tolerance-seconds': integer(
    5,
    'seconds of clock skew allowed when checking the exp and nbf of a token',
    0,
  ),
  'svc.authorization.enabled': flag(false, 'enforce access levels per resource'),
  'svc.workspaces.enabled': flag(false, 'enforce workspaces'),
  'svc.caller-identity.allowed-origins': text(
    '',
    'comma-separated origins (scheme://host:port) besides the service itself that HTTP-call headers may send ${caller:token} / ${caller:userId} to',
  ),
  'svc.security.ssrf-protection.enabled': flag(false, 'outbound URL guard for HTTP-call, MCP and A2A targets'),
  'svc.a2a.capabilities.enabled': flag(false, 'agent-to-agent capability endpoints'),
  'svc.a2a.capabilities.public': flag(false, 'capability endpoints readable anonymously'),
  'svc.a2a.public-token-endpoint': optionalText('token endpoint advertised in agent cards'),
  'svc.audit.max-queue-size': integer(100_000, 'audit ledger queue bound; overflow is dropped and counted', 1),
  'svc.audit.dead-letter-path': text(
    './data/audit-dead-letter.jsonl',
    'JSONL file receiving audit entries whose write failed after the retries',
  ),
  'svc.usermemories.deleteOlderThanDays': integer(
    -1,
    'user-memory entries and long-term properties not written for this many days are deleted by the retention sweep; -1 = off',
    -1,
  ),
  'svc.conversations.deleteEndedConversationsOnceOlderThanDays': integer(
    -1,
    'ENDED conversations last modified more than this many days ago are deleted by the retention sweep; -1 = off',
    -1,
  ),
  'svc.conversations.deleteIdleConversationsOnceOlderThanDays': integer(
    -1,
    'conversations in any other state not modified for this many days are deleted by the retention sweep; -1 = off',
    -1,
  ),
  'svc.retention.interval-seconds': integer(
    3600,
    'how often each instance tries the retention sweep (one instance at a time runs it)',
    1,
  ),
  'svc.retention.batch-size': integer(
    100,
    'conversations the retention sweep lists and deletes per batch before it yields to other work',
    1,
  ),
  'svc.conversations.redo-cache-size': integer(20, 'undone steps kept per conversation', 0),
  'svc.conversations.retry-window-steps': integer(
    100,
    'a message retried with the same Idempotency-Key is answered from its step while that is among the last this many steps; on the embedded store a cached conversation holds the text of this many steps and one more',
    1,
  ),
  'svc.conversations.cache-size': integer(
    10_000,
    'conversations kept in memory; the least recently used beyond it are read from the store again',
    1,
  ),
  'svc.conversations.cache-megabytes': integer(
    256,
    "megabytes the conversations kept in memory take at most (their steps' text and objects); the least recently used beyond it are read from the store again",
    1,
  ),
  'svc.conversations.turn-timeout-seconds': integer(60, 'a turn past this answers 408', 1),
  'svc.hitl.timeout-seconds': integer(
    0,
    'a turn waiting for a person this long gets the timeout policy (0 = it waits until someone decides)',
    0,
  ),
  'svc.hitl.timeout-policy': oneOf(
    ['reject', 'approve', 'escalate'],
    'reject',
    'what happens to a turn nobody decided on in time: rejected, approved, or escalated (flagged in the inbox and logged as a warning; it keeps waiting)',
  ),
  'svc.openai-compat.enabled': flag(true, 'the OpenAI-compatible API under /v1'),
  'svc.openai-compat.model-aliases': text(
    '',
    'model names of the OpenAI-compatible API besides the agent ids: alias=agentId or alias=agentId@test, comma-separated',
  ),
  'svc.conversations.claim-margin-millis': integer(
    10_000,
    'with several instances: how long past the turn timeout the others wait before taking over a conversation whose instance stopped answering in a turn',
    1000,
  ),
  'svc.schedules.poll-interval-millis': integer(
    1000,
    'how often each instance looks for due schedule runs; 0 = this instance runs no schedules',
    0,
  ),
  'svc.schedules.missed-after-seconds': integer(
    60,
    "a schedule run found due longer ago than this was missed (every instance was down); the schedule's missedRuns says what happens",
    1,
  ),
  'svc.channels.facebook.api-url': text(
    'https://graph.facebook.com/v21.0',
    'base URL of the Messenger Send API (replies go to <url>/me/messages)',
  ),
  'svc.channels.slack.api-url': text('https://slack.com/api', 'base URL of the Slack Web API (chat.postMessage)'),
  'svc.channels.slack.timestamp-window-seconds': integer(
    300,
    'a Slack request whose X-Slack-Request-Timestamp is further from now than this is refused (replay protection)',
    1,
  ),
  'svc.channels.retry-interval-millis': integer(
    5000,
    'how often each instance picks up channel messages whose instance died after acknowledging them; 0 = never',
    0,
  ),
  'svc.shutdown.drain-timeout-seconds': integer(
    30,
    'on SIGTERM: how long running and queued turns and writes in flight may take to finish (readiness fails, new requests get 503) before the service stops anyway',
    0,
  ),
  'svc.coordinator.max-active-conversations': integer(10_000, 'conversations with queued work; beyond answers 503', 1),
  'svc.logs.buffer-size': integer(10_000, 'log entries kept in memory for /administration/logs', 1),
  'svc.public-url': optionalText(
    'public base URL of this service (agent cards, links); default: derived from the request',
  ),
  'svc.httpcalls.default-timeout-millis': integer(30_000, 'timeout of an HTTP call that sets none', 1),
  'svc.httpcalls.connect-timeout-millis': integer(
    10_000,
    'connect timeout of every outbound request (HTTP calls, web tools, LLM providers)',
    1,
  ),
  'svc.httpcalls.default-max-response-size-bytes': integer(
    2_000_000,
    'responses beyond this are truncated before they are stored',
    1,
  ),
  'svc.httpcalls.max-redirects': integer(5, 'redirects an HTTP call follows', 0),
  'svc.ollama.default-base-url': text('http://localhost:11434', 'Ollama server of LLM tasks that name none'),
  'svc.tools.rate-limit-per-minute': integer(100, 'default calls per minute of each LLM tool', 1),
  'svc.backup.max-zip-bytes': integer(52_428_800, 'largest accepted import ZIP (and its unpacked size)', 1),
  'svc.backup.max-entries': integer(10_000, 'most entries an import ZIP may hold', 1),
  'svc.rag.max-document-bytes': integer(26_214_400, 'largest document a knowledge-base upload accepts', 1),
  'svc.rag.max-documents': integer(100, 'most documents one knowledge-base ingestion accepts', 1),
  'svc.rag.max-upload-bytes': integer(104_857_600, 'most bytes of all documents of one multipart ingestion', 1),
  'svc.rag.approximate-search-enabled': flag(
    true,
    'search large knowledge bases through an approximate (HNSW) index built in the background; false: always exactly',
  ),
  'svc.rag.approximate-search-min-chunks': integer(
    20_000,
    'chunks a knowledge base needs before an approximate index is built for it',
    1,
  ),
  'svc.rag.ingestion-heartbeat-millis': integer(
    30_000,
    'how often a running ingestion records that it is alive; one silent for four times as long counts as failed',
    10,
  ),
  'svc.tracing.otlp-endpoint': optionalText(
    'OTLP/HTTP traces endpoint (e.g. http://collector:4318/v1/traces); unset = OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else traces are off',
  ),
  'svc.tracing.service-name': text('svc-agents', 'service.name of the exported spans'),
  'svc.log.level': oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info', 'log level'),
} as const;

type Definitions = typeof settingDefinitions;
export type SettingName = keyof Definitions;
export type Settings = {
  readonly [K in SettingName]: Definitions[K] extends SettingDefinition<infer T> ? T : never;
};

export class SettingsError extends Error {}

export function environmentName(settingName: string): string {
  return settingName.toUpperCase().replace(/[.-]/g, '_');
}

/** Reads a Java-style properties file: `name=value` or `name: value` lines, `#` and `!` comments. */
export function parsePropertiesFile(content: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const rawLine of content.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const separator = line.search(/[=:]/);
    if (separator < 0) continue;
    entries.set(line.slice(0, separator).trim(), line.slice(separator + 1).trim());
  }
  return entries;
}

function readSettingsFile(env: NodeJS.ProcessEnv): Map<string, string> {
  const explicitPath = env.SVC_CONFIG_FILE;
  const path = explicitPath ?? 'svc.properties';
  try {
    return parsePropertiesFile(readFileSync(path, 'utf8'));
  } catch (error) {
    if (!explicitPath && (error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new SettingsError(`cannot read the settings file ${path}: ${(error as Error).message}`);
  }
}

/**
 * Resolves every setting. `overrides` (used by tests and embedders) win over the environment.
 * A malformed value stops start-up with a message naming the setting and what it expects.
 */
/**
 * The OTLP/HTTP traces URL: `svc.tracing.otlp-endpoint`, else the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`; undefined = traces are off.
 */
export function otlpTracesUrl(setting: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (setting !== undefined && setting.trim() !== '') return setting.trim();
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return `${base.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

export function loadSettings(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<SettingName, string | number | boolean>> = {},
): Settings {
  const file = readSettingsFile(env);
  const resolved: Record<string, unknown> = {};
  const unknownInFile = [...file.keys()].filter((key) => !(key in settingDefinitions));
  if (unknownInFile.length > 0) {
    throw new SettingsError(`unknown setting(s) in the settings file: ${unknownInFile.join(', ')}`);
  }
  for (const [name, definition] of Object.entries(settingDefinitions) as [SettingName, SettingDefinition<unknown>][]) {
    const envName = environmentName(name);
    const override = overrides[name];
    const [raw, source] =
      override !== undefined
        ? [String(override), 'override']
        : env[envName] !== undefined
          ? [env[envName], `environment variable ${envName}`]
          : file.has(name)
            ? [file.get(name), 'settings file']
            : [undefined, 'default'];
    if (raw === undefined) {
      resolved[name] = definition.defaultValue;
      continue;
    }
    const value = definition.parse(raw);
    if (value === INVALID) {
      const shown = definition.secret ? '(hidden)' : JSON.stringify(raw);
      throw new SettingsError(`setting ${name} (${source}) is ${shown}, expected ${definition.expected}`);
    }
    resolved[name] = value;
  }
  return Object.freeze(resolved) as Settings;
}
