import { invalid } from '../errors.ts';
import { isRecord } from '../shared/json.ts';
import type { KindName } from './kinds.ts';
import { arrayField, fieldPath, indexPath, type JsonObject } from './schemas/common.ts';

/**
 * Fields of the original service's 6.x configurations for features this service does not have. A body may carry
 * one only with a value that asks for nothing (`null`, `false`, empty, or the original's default where that is
 * what this service does anyway): the original writes those defaults into every export, so they are dropped.
 * Any other value answers 400 saying the feature is not available, instead of being accepted and ignored.
 * Fields this service implements are in the kinds' schemas; the README lists both ("Coming from the original
 * service").
 */
interface UnavailableField {
  /** The feature, as the message names it. */
  readonly feature: string;
  /** True for a value that asks for nothing this service would not do. */
  readonly asksNothing: (value: unknown) => boolean;
}

const empty = (value: unknown) =>
  value === null ||
  value === undefined ||
  value === false ||
  (Array.isArray(value) && value.length === 0) ||
  (isRecord(value) && Object.keys(value).length === 0);
/** Only `null` or the original's default asks for nothing (`false` may switch something off). */
const nullOr =
  (...accepted: unknown[]) =>
  (value: unknown) =>
    value === null || accepted.includes(value);
const notAvailable = (feature: string, asksNothing: (value: unknown) => boolean = empty): UnavailableField => ({
  feature,
  asksNothing,
});

const AGENT: Readonly<Record<string, UnavailableField>> = {
  capabilities: notAvailable('the A2A capability registry (capability-based routing)'),
  identity: notAvailable('cryptographic agent identities'),
  security: notAvailable('signed inter-agent messages'),
  memoryPolicy: notAvailable('memory policies (strict write discipline)'),
  sessionManagement: notAvailable('conversation checkpoints'),
  hitlConfig: notAvailable(
    'human-in-the-loop settings per agent (the timeout policy is svc.hitl.timeout-seconds and svc.hitl.timeout-policy)',
  ),
  dynamicOrigin: notAvailable('sub-agents created by agents'),
};

/** Parts of `userMemoryConfig` this service does not have (the rest is implemented, `src/user-memory/config.ts`). */
const USER_MEMORY_CONFIG: Readonly<Record<string, UnavailableField>> = {
  // Off, the original's block asks for nothing (its exports carry it with `enabled: false`).
  dream: notAvailable(
    'Dream memory consolidation (retention is svc.usermemories.deleteOlderThanDays)',
    (value) => empty(value) || (isRecord(value) && (value.enabled === false || value.enabled === undefined)),
  ),
  // Reserved and not applied in the original either; its store writes the default into every agent.
  autoRecallCategories: notAvailable(
    'auto-recall categories',
    (value) => empty(value) || JSON.stringify(value) === JSON.stringify(['preference', 'fact']),
  ),
  contradictionResolution: notAvailable('contradiction resolution', nullOr('keep_newest')),
};

const ALWAYS_ON = ' (it is always on here)';
const LLM_TASK: Readonly<Record<string, UnavailableField>> = {
  retrievalAugmentor: notAvailable('a custom retrieval augmentor (use knowledgeBases)'),
  maxBudgetPerConversation: notAvailable('a spending budget per conversation'),
  enableCostTracking: notAvailable(`switching cost tracking off${ALWAYS_ON}`, nullOr(true)),
  enableToolCaching: notAvailable(`switching the tool result cache off${ALWAYS_ON}`, nullOr(true)),
  enableRateLimiting: notAvailable(`switching tool rate limits off${ALWAYS_ON}`, nullOr(true)),
  defaultRateLimit: notAvailable(
    'a rate limit per task (set svc.tools.rate-limit-per-minute, or PUT /llm/tools/ratelimit/<tool>)',
    nullOr(100),
  ),
  toolRateLimits: notAvailable('rate limits per task (use PUT /llm/tools/ratelimit/<tool>)'),
  enableParallelExecution: notAvailable('parallel tool execution'),
  parallelExecutionTimeoutMs: notAvailable('parallel tool execution', nullOr(30_000)),
  mcpServers: notAvailable('MCP servers as tools of a task'),
};

const KNOWLEDGE_BASE: Readonly<Record<string, UnavailableField>> = {
  sources: notAvailable('ingestion sources (web crawls and uploaded-file sources run on a schedule)'),
};

type FieldTable = Readonly<Record<string, UnavailableField>>;
type Holder = readonly [object: JsonObject, path: string, fields: FieldTable];

/** Where each kind's bodies may hold such fields: the objects to look at, with their JSON paths. */
const HOLDERS: Partial<Record<KindName, (body: JsonObject) => Holder[]>> = {
  agent: (body) => [
    [body, '$', AGENT],
    ...(isRecord(body.userMemoryConfig)
      ? [[body.userMemoryConfig, '$.userMemoryConfig', USER_MEMORY_CONFIG] as Holder]
      : []),
  ],
  rag: (body) => [[body, '$', KNOWLEDGE_BASE]],
  llm: (body) =>
    arrayField(body, 'tasks').flatMap((task, i): Holder[] =>
      isRecord(task) ? [[task, indexPath('$.tasks', i), LLM_TASK]] : [],
    ),
};

/**
 * Returns the body without the original's fields that ask for nothing; throws `invalid` naming the first field
 * that asks for a feature this service does not have.
 */
export function dropUnavailableFields(kind: KindName, body: unknown): unknown {
  const holders = HOLDERS[kind];
  if (holders === undefined || !isRecord(body)) return body;
  const copy = structuredClone(body);
  for (const [holder, path, fields] of holders(copy)) {
    for (const [name, field] of Object.entries(fields)) {
      if (!Object.hasOwn(holder, name)) continue;
      const at = fieldPath(path, name);
      if (!field.asksNothing(holder[name])) {
        throw invalid(
          `The field '${name}' at ${at} asks for ${field.feature}, a feature of the original service that is not available here.`,
          { path: at, field: name },
        );
      }
      delete holder[name];
    }
  }
  return copy;
}
