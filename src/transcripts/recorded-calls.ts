import {
  RecordingMismatchError,
  type ReplayedRequest,
  type ReplayedResponse,
  type ReplayedSource,
  type TurnReplay,
} from '../runtime/replay.ts';
import type {
  HttpCallRecording,
  LlmRecording,
  Recordings,
  RetrievalRecording,
} from '../resources/schemas/transcript.ts';

/**
 * Answers one step's external calls from its recordings (`TurnReplay`). HTTP calls are matched by name and
 * request (method, URL, body), in the order recorded among calls of the same name; LLM answers and knowledge-base
 * retrievals by task id (retrievals always from the recording: they stand for the embedding provider). What
 * did not match, and what was recorded but never asked for, are the step's recording mismatches.
 */
export class RecordedCalls implements TurnReplay {
  readonly #httpCalls: HttpCallRecording[];
  readonly #llm: LlmRecording[];
  readonly #retrieval: RetrievalRecording[];
  readonly #liveLlm: boolean;
  readonly #mismatches: string[] = [];

  constructor(recordings: Recordings | undefined, options: { liveLlm: boolean }) {
    this.#httpCalls = [...(recordings?.httpCalls ?? [])];
    this.#llm = [...(recordings?.llm ?? [])];
    this.#retrieval = [...(recordings?.retrieval ?? [])];
    this.#liveLlm = options.liveLlm;
  }

  httpCall(name: string, request: ReplayedRequest): ReplayedResponse | undefined {
    const sameName = this.#httpCalls.filter((recording) => recording.name === name);
    const matching = sameName.find((recording) => sameRequest(recording.request, request));
    if (!matching) {
      const expected = sameName[0];
      throw this.#mismatch(
        expected
          ? `HTTP call '${name}' sent ${describe(request)}, the recording has ${describe(expected.request)}`
          : `HTTP call '${name}' (${describe(request)}) is not in the recording of this step`,
      );
    }
    this.#httpCalls.splice(this.#httpCalls.indexOf(matching), 1);
    return matching.response && wireResponse(matching.response);
  }

  llmAnswer(taskId: string): string | undefined {
    if (this.#liveLlm) return undefined;
    const index = this.#llm.findIndex((recording) => recording.task === taskId);
    if (index < 0) throw this.#mismatch(`LLM task '${taskId}' has no recorded answer in this step`);
    return this.#llm.splice(index, 1)[0]!.answer;
  }

  retrievedSources(taskId: string): readonly ReplayedSource[] {
    const index = this.#retrieval.findIndex((recording) => recording.task === taskId);
    if (index < 0)
      throw this.#mismatch(`the knowledge-base retrieval of LLM task '${taskId}' is not in the recording of this step`);
    return this.#retrieval.splice(index, 1)[0]!.sources;
  }

  /** Every mismatch of the step: calls that did not match, then recorded calls the agent did not make. */
  mismatches(): string[] {
    const unused = [
      ...this.#httpCalls
        .filter((recording) => this.#liveLlm || recording.byTool !== true)
        .map(
          (recording) =>
            `recording mismatch: HTTP call '${recording.name}' (${describe(recording.request)}) was recorded but not made`,
        ),
      ...(this.#liveLlm ? [] : this.#llm).map(
        (recording) => `recording mismatch: LLM task '${recording.task}' was recorded but not asked`,
      ),
      ...this.#retrieval.map(
        (recording) =>
          `recording mismatch: the knowledge-base retrieval of LLM task '${recording.task}' was recorded but not made`,
      ),
    ];
    return [...this.#mismatches, ...unused];
  }

  #mismatch(message: string): RecordingMismatchError {
    const error = new RecordingMismatchError(message);
    this.#mismatches.push(error.message);
    return error;
  }
}

function sameRequest(recorded: HttpCallRecording['request'], sent: ReplayedRequest): boolean {
  return (
    recorded.method.toUpperCase() === sent.method.toUpperCase() &&
    recorded.uri === sent.uri &&
    (recorded.body ?? '') === (sent.body ?? '')
  );
}

function describe(request: { method: string; uri: string; body?: string | undefined }): string {
  const body = request.body === undefined || request.body === '' ? '' : ` with body ${truncate(request.body)}`;
  return `${request.method.toUpperCase()} ${request.uri}${body}`;
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** The recorded answer as it came over the wire: JSON bodies serialised, a content type when none was recorded. */
function wireResponse(response: NonNullable<HttpCallRecording['response']>): ReplayedResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers ?? {})) headers[name.toLowerCase()] = value;
  const isText = typeof response.body === 'string' || response.body === undefined;
  headers['content-type'] ??= isText ? 'text/plain; charset=utf-8' : 'application/json';
  return {
    status: response.status,
    headers,
    body: isText ? ((response.body as string | undefined) ?? '') : JSON.stringify(response.body),
  };
}
