import { httpStatusOutcome, type HttpCallMeters } from '../../ops/domain-metrics.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { RecordingMismatchError } from '../../runtime/replay.ts';
import type { Turn } from '../../runtime/turn.ts';
import { MissingSecretError, type SecretResolver } from '../../security/secret-references.ts';
import type { Outbound } from '../../security/outbound.ts';
import { runPropertyInstructions, type ResponseOutcome } from '../../properties/run-instructions.ts';
import type { SecretWriter } from '../../properties/secret-properties.ts';
import { isRecord } from '../../shared/json.ts';
import { TemplateData } from '../../templating/data-model.ts';
import { TemplateError } from '../../templating/engine.ts';
import type { CompiledHttpCall } from './compile.ts';
import { storableResponseHeaders } from './credentials.ts';
import type { SecretValues } from './field-template.ts';
import { buildOutputs, buildQuickReplies, skipFailedInstruction, type TaskLog } from './post-response.ts';
import { buildRequest, InvalidRequestUrlError, type BuiltRequest, type RequestRecord } from './request.ts';
import { sendWithRetry } from './retry.ts';
import { HttpTransport, TransportError, type IncomingResponse } from './transport.ts';

/**
 * Runs one compiled HTTP call for a turn (reference §8.3–8.5), the whole way: pre-request property instructions,
 * optional batch iteration and delay, request building (templates, then vault references), sending (keep-alive
 * pool, timeouts, redirects, size limit, retries), memory, post-response instructions.
 *
 * Memory written (step data `httpCalls:<key>` and the step's conversation output map `httpCalls.<key>`):
 * - `<name>Request`: the request record `{uri, method, headers, queryParams, body?}`, secrets `<REDACTED>`
 *   (a list of records for a batch call);
 * - on 2xx with `saveResponse`: `<responseObjectName>` = the body (JSON parsed when the response says JSON,
 *   otherwise text; cut at the size limit first), and `<responseHeaderObjectName>` = the headers minus
 *   credentials when configured;
 * - on a non-2xx status with `saveResponse`: `<responseObjectName>Error` (body text, at most 2000 characters) and
 *   `<responseObjectName>HttpCode`; the turn goes on.
 * A call that gets no response (after its retries), a refused target, a template error or a missing secret
 * throws `HttpCallError`, whose message names the call and the cause and never holds a secret value; the
 * turn then ends in ERROR. Secret values echoed by a target are masked in everything stored.
 *
 * Use from an LLM task (HTTP calls as tools, reference §8.6): compile the HTTP-call set with `compileHttpCallSet`,
 * offer each call as a tool (`call.name`, `call.description`, string arguments `call.parameters`), and run a
 * chosen one with `executor.execute(call, turn, args)`: the arguments are visible to the call's templates at top
 * level by name (`{city}`). The result's `response` is what the model should see (the stored body, or for a
 * non-2xx status the error text).
 */

export interface HttpCallDefaults {
  readonly timeoutMillis: number;
  readonly maxResponseBytes: number;
  readonly maxRedirects: number;
}

export interface HttpCallExecutorOptions {
  readonly secrets: SecretResolver;
  /** The guarded outbound dispatcher (URL guard at connect time, pooled connections, connect timeout). */
  readonly outbound: Outbound;
  readonly defaults: HttpCallDefaults;
  /** Where non-2xx answers, skipped instructions and fire-and-forget failures are reported (no secrets). */
  readonly log?: TaskLog;
  /** The vault, for secret-scoped property instructions; without it they fail the call. */
  readonly secretWriter?: SecretWriter | undefined;
  /** Counts and times each request sent (not the answers of a replay). */
  readonly meters?: HttpCallMeters | undefined;
}

export interface HttpCallResult {
  readonly name: string;
  /** The HTTP status (of the last request of a batch); undefined for fire-and-forget calls. */
  readonly status: number | undefined;
  /** The body (parsed JSON or text; a list for a batch call); for a non-2xx status, the error text. */
  readonly response: unknown;
  /** The response was stored as `httpCalls:<responseObjectName>` (2xx and `saveResponse`). */
  readonly saved: boolean;
  readonly truncated: boolean;
}

export interface HttpCallExecutor {
  /** Runs `call` for `turn`; `extraTemplateData` names are visible to its templates at top level. */
  execute(
    call: CompiledHttpCall,
    turn: Turn,
    extraTemplateData?: Readonly<Record<string, unknown>>,
  ): Promise<HttpCallResult>;
}

/** An HTTP call that could not be made; the message names the call and the cause (no secret values). */
export class HttpCallError extends Error {
  readonly callName: string;

  constructor(callName: string, cause: string) {
    super(`HTTP call '${callName}' failed: ${cause}`);
    this.name = 'HttpCallError';
    this.callName = callName;
  }
}

export const MAX_ERROR_BODY_CHARS = 2000;

const isSuccess = (status: number) => status >= 200 && status < 300;

function isJson(response: IncomingResponse): boolean {
  const type = response.headers['content-type'];
  return typeof type === 'string' && /^application\/(?:[\w.+-]*\+)?json\b/i.test(type.trim());
}

/** Stores `value` as step data `httpCalls:<key>` and in the step's `httpCalls` output map. */
function remember(turn: Turn, key: string, value: unknown): void {
  turn.set(`httpCalls:${key}`, value);
  const current = turn.output.httpCalls;
  const map = isRecord(current) ? current : {};
  turn.setOutput('httpCalls', { ...map, [key]: value });
}

function failure(call: CompiledHttpCall, error: unknown, secrets: SecretValues | undefined): HttpCallError {
  if (error instanceof HttpCallError) return error;
  let cause: string;
  if (error instanceof MissingSecretError) cause = error.message;
  else if (error instanceof TemplateError) cause = `a template could not be rendered: ${error.message}`;
  else if (
    error instanceof TransportError ||
    error instanceof InvalidRequestUrlError ||
    error instanceof RecordingMismatchError
  )
    cause = error.message;
  else if (error instanceof Error && error.name === 'AbortError') cause = 'the turn was interrupted';
  else cause = error instanceof Error ? `${error.name}: ${error.message}` : 'unknown error';
  return new HttpCallError(call.name, secrets ? secrets.mask(cause) : cause);
}

export function createHttpCallExecutor(options: HttpCallExecutorOptions): HttpCallExecutor {
  const { defaults } = options;
  const log: TaskLog = options.log ?? { warn: () => undefined };
  const transport = new HttpTransport({ outbound: options.outbound, maxRedirects: defaults.maxRedirects });
  const meters = options.meters;
  /** Sends through the transport, measured. */
  const transmit: HttpTransport['send'] = meters
    ? async (request, limits) => {
        const startedAt = performance.now();
        const seconds = () => (performance.now() - startedAt) / 1000;
        try {
          const response = await transport.send(request, limits);
          meters.callFinished(httpStatusOutcome(response.status), seconds());
          return response;
        } catch (error) {
          meters.callFinished(
            error instanceof TransportError && error.code === 'ETIMEOUT' ? 'timeout' : 'error',
            seconds(),
          );
          throw error;
        }
      }
    : (request, limits) => transport.send(request, limits);

  const limitsOf = (call: CompiledHttpCall, signal: AbortSignal | undefined) => ({
    timeoutMillis: call.timeoutMillis ?? defaults.timeoutMillis,
    maxResponseBytes: call.maxResponseBytes ?? defaults.maxResponseBytes,
    signal,
  });

  const bodyText = (response: IncomingResponse, built: BuiltRequest) =>
    built.secrets.mask(response.body.toString('utf8'));
  const parse = (response: IncomingResponse, built: BuiltRequest): unknown => {
    const text = bodyText(response, built);
    if (!isJson(response) || text.trim() === '') return text;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };

  /** Sends a built request, or answers it from the turn's recordings when the turn is a replay. */
  async function send(call: CompiledHttpCall, request: BuiltRequest, turn: Turn): Promise<IncomingResponse> {
    if (!turn.replay) return transmit(request.outgoing, limitsOf(call, turn.signal));
    const recorded = turn.replay.httpCall(call.name, request.record) ?? { status: 200, headers: {}, body: '' };
    return {
      status: recorded.status,
      headers: recorded.headers,
      body: Buffer.from(recorded.body),
      truncated: false,
      url: request.outgoing.url,
    };
  }

  /** Builds and sends one request (with retries); throws `HttpCallError`. */
  async function exchange(call: CompiledHttpCall, data: Record<string, unknown>, turn: Turn) {
    let built: BuiltRequest | undefined;
    try {
      built = await buildRequest(call, data, options.secrets, turn.caller);
      const request = built;
      const retried = await sendWithRetry(
        () => send(call, request, turn),
        (response) => parse(response, request),
        // A recorded answer is the final one (the recording holds no attempts before it).
        turn.replay ? undefined : call.postResponse.retry,
        turn.signal,
      );
      return { built, ...retried };
    } catch (error) {
      throw failure(call, error, built?.secrets);
    }
  }

  function fireAndForget(call: CompiledHttpCall, built: BuiltRequest): void {
    transmit(built.outgoing, limitsOf(call, undefined)).then(
      (response) => {
        if (!isSuccess(response.status))
          log.warn(
            { httpCall: call.name, status: response.status },
            'a fire-and-forget HTTP call answered with a non-2xx status',
          );
      },
      (error: unknown) =>
        log.warn(
          { httpCall: call.name, problem: failure(call, error, built.secrets).message },
          'a fire-and-forget HTTP call failed',
        ),
    );
  }

  async function execute(
    call: CompiledHttpCall,
    turn: Turn,
    extraTemplateData: Readonly<Record<string, unknown>> = {},
  ): Promise<HttpCallResult> {
    const data = new TemplateData(turn, extraTemplateData);
    const runInstructions = (instructions: CompiledHttpCall['preRequest']['instructions'], outcome?: ResponseOutcome) =>
      runPropertyInstructions(instructions, {
        turn,
        data,
        secretWriter: options.secretWriter,
        outcome,
        skipFailed: skipFailedInstruction(log, call.name),
      });
    try {
      await runInstructions(call.preRequest.instructions);
      if (call.preRequest.delayMillis > 0) await sleep(call.preRequest.delayMillis, undefined, { signal: turn.signal });
    } catch (error) {
      throw failure(call, error, undefined);
    }

    if (call.fireAndForget) {
      let built: BuiltRequest;
      try {
        built = await buildRequest(call, data.get(), options.secrets, turn.caller);
      } catch (error) {
        throw failure(call, error, undefined);
      }
      remember(turn, `${call.name}Request`, built.record);
      if (turn.replay) {
        try {
          turn.replay.httpCall(call.name, built.record);
        } catch (error) {
          throw failure(call, error, undefined);
        }
      } else fireAndForget(call, built);
      return { name: call.name, status: undefined, response: undefined, saved: false, truncated: false };
    }

    let status: number;
    let body: unknown;
    let errorText = '';
    let headers: Record<string, string | string[]> = {};
    let validationFailed = false;
    let truncated = false;
    const batch = call.preRequest.batch;
    if (batch) {
      let chosen: Array<Record<string, unknown>>;
      try {
        const found = batch.path.evaluate(data.get());
        const items = found === undefined || found === null ? [] : Array.isArray(found) ? found : [found];
        chosen = items
          .map((item) => data.with(batch.iterationObjectName, item))
          .filter((itemData) => !batch.filter || batch.filter.render(itemData).trim() === 'true');
      } catch (error) {
        throw failure(call, error, undefined);
      }
      const results = [];
      if (batch.sequential) for (const itemData of chosen) results.push(await exchange(call, itemData, turn));
      else results.push(...(await Promise.all(chosen.map((itemData) => exchange(call, itemData, turn)))));
      remember(turn, `${call.name}Request`, results.map((result) => result.built.record) satisfies RequestRecord[]);
      const failed = results.find((result) => !isSuccess(result.response.status));
      status = failed?.response.status ?? results.at(-1)?.response.status ?? 200;
      body = results.map((result) => (isSuccess(result.response.status) ? result.body : null));
      if (failed) errorText = bodyText(failed.response, failed.built);
      validationFailed = results.some((result) => result.validationFailed);
      truncated = results.some((result) => result.response.truncated);
    } else {
      const result = await exchange(call, data.get(), turn);
      remember(turn, `${call.name}Request`, result.built.record);
      status = result.response.status;
      body = result.body;
      if (!isSuccess(status)) errorText = bodyText(result.response, result.built);
      // Kept only when the call names an object for them.
      if (call.responseHeaderObjectName !== undefined)
        headers = Object.fromEntries(
          Object.entries(storableResponseHeaders(result.response.headers)).map(([name, value]) => [
            name,
            Array.isArray(value) ? value.map((v) => result.built.secrets.mask(v)) : result.built.secrets.mask(value),
          ]),
        );
      validationFailed = result.validationFailed;
      truncated = result.response.truncated;
    }

    const success = isSuccess(status);
    const saved = success && call.saveResponse;
    if (saved) {
      remember(turn, call.responseObjectName, body);
      if (call.responseHeaderObjectName !== undefined) remember(turn, call.responseHeaderObjectName, headers);
    } else if (!success) {
      log.warn({ httpCall: call.name, status }, 'an HTTP call answered with a non-2xx status; the turn goes on');
      if (call.saveResponse) {
        remember(turn, `${call.responseObjectName}Error`, errorText.slice(0, MAX_ERROR_BODY_CHARS));
        remember(turn, `${call.responseObjectName}HttpCode`, status);
      }
    }

    try {
      data.put(call.responseObjectName, success ? body : errorText);
      // As in the original, the headers are there too: its Bot Fathers read `<responseHeaderObjectName>.Location`.
      if (call.responseHeaderObjectName !== undefined) data.put(call.responseHeaderObjectName, headers);
      await runInstructions(call.postResponse.instructions, { status, validationFailed });
      buildOutputs(turn, call.postResponse.outputs, data, status);
      buildQuickReplies(turn, call.postResponse.quickReplies, data, status);
    } catch (error) {
      throw failure(call, error, undefined);
    }
    return {
      name: call.name,
      status,
      response: success ? body : errorText.slice(0, MAX_ERROR_BODY_CHARS),
      saved,
      truncated,
    };
  }

  return { execute };
}
