/**
 * The seam through which a conversation's external calls are answered from recordings instead of the network
 * (transcript replays, `src/transcripts/`). A turn carries one when its message asked for it; the HTTP-call
 * executor and the LLM task (its model and its knowledge-base retrieval) ask it before they would send anything,
 * and send nothing when it answers.
 */

/** The request of an HTTP call as memory records it (secrets `<REDACTED>`). */
export interface ReplayedRequest {
  readonly method: string;
  readonly uri: string;
  readonly body?: string | undefined;
}

export interface ReplayedResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The body as it is sent on the wire. */
  readonly body: string;
}

/** A passage a knowledge-base retrieval found, with its source. */
export interface ReplayedSource {
  readonly knowledgeBase: string;
  readonly documentId: string;
  readonly documentName: string;
  readonly chunkIndex: number;
  readonly text: string;
  readonly score: number;
}

export interface TurnReplay {
  /**
   * The recorded answer of the HTTP call `name` sending `request` (undefined for a fire-and-forget call, which
   * has none). Throws `RecordingMismatchError` when the recording holds no such call or another request.
   */
  httpCall(name: string, request: ReplayedRequest): ReplayedResponse | undefined;
  /**
   * The recorded answer of the LLM task `taskId`, or undefined when the model is asked live. Throws
   * `RecordingMismatchError` when answers come from the recording and it holds none.
   */
  llmAnswer(taskId: string): string | undefined;
  /**
   * What the knowledge-base retrieval of the LLM task `taskId` found (the query is not embedded, no knowledge base
   * is searched). Throws `RecordingMismatchError` when the recording holds no retrieval of that task.
   */
  retrievedSources(taskId: string): readonly ReplayedSource[];
}

/** The agent made an external call its recording does not hold; the message names the call and the difference. */
export class RecordingMismatchError extends Error {
  constructor(message: string) {
    super(`recording mismatch: ${message}`);
    this.name = 'RecordingMismatchError';
  }
}
