import { isRecord } from '../shared/json.ts';

/**
 * The in-memory log ring buffer behind `/administration/logs` and its SSE stream. It is a pino destination:
 * pino (Fastify's logger) calls `write` with one JSON line per log call. The last `capacity` entries are kept;
 * appending is O(1) and never throws.
 */

export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const LEVEL_RANK: Readonly<Record<LogLevel, number>> = { TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4, FATAL: 5 };

export interface LogEntry {
  /** Epoch milliseconds. */
  readonly timestamp: number;
  readonly level: LogLevel;
  readonly loggerName?: string;
  readonly message: string;
  readonly agentId?: string;
  readonly agentVersion?: number;
  readonly conversationId?: string;
  readonly userId?: string;
  readonly environment?: string;
  readonly instanceId?: string;
  /** Any other field of the log line (request id, error, ...). */
  readonly [field: string]: unknown;
}

export interface LogFilter {
  /** This level and above; default INFO. */
  readonly level?: LogLevel | undefined;
  /** Case-insensitive substring of the message. */
  readonly search?: string | undefined;
  readonly agentId?: string | undefined;
  readonly conversationId?: string | undefined;
}

export interface LogQuery extends LogFilter {
  /** Most entries returned (the newest ones); default 100. */
  readonly limit?: number | undefined;
}

export type LogListener = (entry: LogEntry) => void;

export interface LogBuffer {
  readonly capacity: number;
  /** Number of entries currently held. */
  readonly size: number;
  /** Number of live subscribers (open log streams). */
  readonly subscriberCount: number;
  /** pino destination: one JSON line (or several, newline-separated). Never throws. */
  write(line: string): void;
  /** Matching entries, oldest first / newest last. */
  recent(query?: LogQuery): LogEntry[];
  /** Calls `listener` for each new entry that matches `filter`; returns the unsubscribe function. */
  subscribe(listener: LogListener, filter?: LogFilter): () => void;
}

/** Parses a level name (case-insensitive; `WARNING` is accepted for WARN); undefined when unknown. */
export function parseLogLevel(value: string): LogLevel | undefined {
  const upper = value.trim().toUpperCase();
  if (upper === 'WARNING') return 'WARN';
  return (LOG_LEVELS as readonly string[]).includes(upper) ? (upper as LogLevel) : undefined;
}

function levelFromPino(level: unknown): LogLevel {
  if (typeof level === 'number') {
    if (level >= 60) return 'FATAL';
    if (level >= 50) return 'ERROR';
    if (level >= 40) return 'WARN';
    if (level >= 30) return 'INFO';
    if (level >= 20) return 'DEBUG';
    return 'TRACE';
  }
  if (typeof level === 'string') return parseLogLevel(level) ?? 'INFO';
  return 'INFO';
}

function timestampFrom(time: unknown): number {
  if (typeof time === 'number' && Number.isFinite(time)) return time;
  if (typeof time === 'string') {
    const parsed = Date.parse(time);
    if (Number.isFinite(parsed)) return parsed;
  }
  return Date.now();
}

/** Fields pino adds that the entry does not repeat, or that are mapped to entry fields. */
const CONSUMED = new Set([
  'level',
  'time',
  'msg',
  'message',
  'pid',
  'hostname',
  'name',
  'loggerName',
  'v',
  'timestamp',
]);
const TEXT_FIELDS = ['agentId', 'conversationId', 'userId', 'environment', 'instanceId'] as const;

function entryFromRecord(record: Record<string, unknown>): LogEntry {
  const entry: Record<string, unknown> = {};
  for (const key in record) {
    if (CONSUMED.has(key)) continue;
    const value = record[key];
    if (value !== null && value !== undefined) entry[key] = value;
  }
  entry.timestamp = timestampFrom(record.time ?? record.timestamp);
  entry.level = levelFromPino(record.level);
  const loggerName = record.loggerName ?? record.name;
  if (typeof loggerName === 'string') entry.loggerName = loggerName;
  let message = record.msg ?? record.message;
  if (typeof message !== 'string') {
    const err = record.err;
    const errMessage = typeof err === 'object' && err !== null ? (err as { message?: unknown }).message : undefined;
    message =
      typeof errMessage === 'string' ? errMessage : message === undefined || message === null ? '' : String(message);
  }
  entry.message = message;
  for (const key of TEXT_FIELDS) {
    const value = record[key];
    if (value === null || value === undefined) delete entry[key];
    else if (typeof value !== 'string') entry[key] = String(value);
  }
  const agentVersion = record.agentVersion;
  if (agentVersion === null || agentVersion === undefined) delete entry.agentVersion;
  else if (typeof agentVersion !== 'number') {
    const parsed = Number(agentVersion);
    if (Number.isInteger(parsed)) entry.agentVersion = parsed;
    else delete entry.agentVersion;
  }
  return entry as LogEntry;
}

function entryFromLine(line: string): LogEntry {
  try {
    const parsed: unknown = JSON.parse(line);
    if (isRecord(parsed)) {
      return entryFromRecord(parsed);
    }
  } catch {
    // not JSON: kept as raw text below
  }
  return { timestamp: Date.now(), level: 'INFO', message: line };
}

interface CompiledFilter {
  readonly minRank: number;
  readonly needle: string | undefined;
  readonly agentId: string | undefined;
  readonly conversationId: string | undefined;
}

function compileFilter(filter: LogFilter | undefined): CompiledFilter {
  const search = filter?.search;
  return {
    minRank: LEVEL_RANK[filter?.level ?? 'INFO'],
    needle: search === undefined || search === '' ? undefined : search.toLowerCase(),
    agentId: filter?.agentId === '' ? undefined : filter?.agentId,
    conversationId: filter?.conversationId === '' ? undefined : filter?.conversationId,
  };
}

function matches(entry: LogEntry, filter: CompiledFilter): boolean {
  if (LEVEL_RANK[entry.level] < filter.minRank) return false;
  if (filter.agentId !== undefined && entry.agentId !== filter.agentId) return false;
  if (filter.conversationId !== undefined && entry.conversationId !== filter.conversationId) return false;
  if (filter.needle !== undefined && !entry.message.toLowerCase().includes(filter.needle)) return false;
  return true;
}

export const DEFAULT_LOG_LIMIT = 100;

export function createLogBuffer(capacity: number): LogBuffer {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('log buffer capacity must be an integer >= 1');
  const ring: (LogEntry | undefined)[] = new Array<LogEntry | undefined>(capacity);
  /** Index where the next entry goes. */
  let next = 0;
  let size = 0;
  const subscribers = new Set<{ readonly listener: LogListener; readonly filter: CompiledFilter }>();

  const append = (entry: LogEntry): void => {
    ring[next] = entry;
    next = next + 1 === capacity ? 0 : next + 1;
    if (size < capacity) size += 1;
    for (const subscriber of subscribers) {
      if (!matches(entry, subscriber.filter)) continue;
      try {
        subscriber.listener(entry);
      } catch {
        // a failing listener must not break logging
      }
    }
  };

  return {
    capacity,
    get size() {
      return size;
    },
    get subscriberCount() {
      return subscribers.size;
    },
    write(chunk: string) {
      try {
        const text = typeof chunk === 'string' ? chunk : String(chunk);
        let start = 0;
        while (start < text.length) {
          let end = text.indexOf('\n', start);
          if (end < 0) end = text.length;
          const line = text.slice(start, end).trim();
          if (line !== '') append(entryFromLine(line));
          start = end + 1;
        }
      } catch {
        // never throw into the logger
      }
    },
    recent(query = {}) {
      const filter = compileFilter(query);
      const limit = query.limit === undefined ? DEFAULT_LOG_LIMIT : Math.max(0, Math.floor(query.limit));
      const found: LogEntry[] = [];
      // walk from the newest backwards until enough are found
      for (let seen = 0; seen < size && found.length < limit; seen += 1) {
        const index = (next - 1 - seen + capacity) % capacity;
        const entry = ring[index];
        if (entry !== undefined && matches(entry, filter)) found.push(entry);
      }
      return found.reverse();
    },
    subscribe(listener, filter) {
      const subscriber = { listener, filter: compileFilter(filter) };
      subscribers.add(subscriber);
      return () => {
        subscribers.delete(subscriber);
      };
    },
  };
}

/**
 * A destination for Fastify's `logger: { stream }` that feeds the buffer and still writes every line to `out`
 * (stdout by default).
 */
export function teeDestination(
  buffer: LogBuffer,
  out: { write(line: string): unknown } = process.stdout,
): { write(line: string): void } {
  return {
    write(line: string) {
      buffer.write(line);
      out.write(line);
    },
  };
}
