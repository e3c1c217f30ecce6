import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback embedding server speaking each provider's documented embeddings wire format, with deterministic
 * vectors: each word of a text adds ±1 to a dimension chosen by its hash, so texts that share words are close and
 * the same text always gets the same vector. Text containing a word in `failOn` is refused with a 400 (a provider
 * refusing one document); text containing a word in `hangOn` is never answered.
 *
 * - OpenAI and OpenAI-compatible servers, Mistral: `POST <base>/embeddings` (`model`, `input`, `dimensions` or
 *   Mistral's `output_dimension`).
 * - Azure OpenAI: `POST /openai/deployments/<deployment>/embeddings?api-version=<version>` (the OpenAI body).
 * - Google Gemini: `POST <base>/models/<model>:batchEmbedContents` (`requests[]` of `content.parts[].text`,
 *   `outputDimensionality`, `taskType`) and `:embedContent` for one text.
 * - Amazon Bedrock: `POST /model/<model id>/invoke` with a SigV4 `Authorization` header; Titan's body
 *   (`inputText`, `dimensions`) or Cohere's (`texts`, `input_type`, `output_dimension`).
 * - Ollama: `POST /api/embed` (`model`, `input`, `dimensions`).
 */

export const FAKE_EMBEDDING_DIMENSIONS = 64;

export interface EmbeddingRequest {
  /** The path with its query. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The model named in the body, else in the path (Azure's deployment, Gemini's and Bedrock's model). */
  readonly model: string;
  readonly input: readonly string[];
  /** The dimensions asked for, in whichever field the wire format has for it. */
  readonly dimensions: number | undefined;
  readonly body: Record<string, any>;
}

export function fakeEmbedding(text: string, dimensions = FAKE_EMBEDDING_DIMENSIONS): number[] {
  const vector: number[] = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]{2,}/gu) ?? []) {
    const digest = createHash('sha256').update(word).digest();
    const at = digest.readUInt32BE(0) % dimensions;
    vector[at] = vector[at]! + (digest[4]! % 2 === 0 ? 1 : -1);
  }
  if (!vector.some((value) => value !== 0)) vector[0] = 1;
  return vector;
}

/** What a SigV4-signed request's Authorization header looks like (the fake does not check the signature itself). */
export const SIGV4_AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=[A-Z0-9]{16,128}\/\d{8}\/[a-z0-9-]+\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/;

interface Route {
  /** The model in the path, when the path names it. */
  readonly match: (path: string) => { model?: string } | undefined;
  readonly request: (body: Record<string, any>) => { input: string[]; dimensions: number | undefined };
  readonly answer: (vectors: number[][], body: Record<string, any>) => unknown;
  /** A refusal in the provider's own error shape. */
  readonly refuse: (message: string) => unknown;
  /** Why the request is not authorised, if it is not. */
  readonly unauthorised?: (headers: IncomingHttpHeaders) => string | undefined;
}

const openAiError = (message: string) => ({ error: { message, type: 'invalid_request_error' } });
const textList = (input: unknown): string[] => (typeof input === 'string' ? [input] : ((input as string[]) ?? []));

const routes: readonly Route[] = [
  {
    // Ollama
    match: (path) => (path === '/api/embed' ? {} : undefined),
    request: (body) => ({ input: textList(body.input), dimensions: body.dimensions }),
    answer: (vectors, body) => ({
      model: body.model,
      embeddings: vectors,
      total_duration: 1,
      load_duration: 0,
      prompt_eval_count: vectors.length,
    }),
    refuse: (message) => ({ error: message }),
  },
  {
    // OpenAI, OpenAI-compatible, Azure OpenAI (deployment-based URL), Mistral
    match: (path) => {
      const [pathname] = path.split('?');
      const azure = /^\/openai\/deployments\/([^/]+)\/embeddings$/.exec(pathname!);
      if (azure) return { model: decodeURIComponent(azure[1]!) };
      return pathname!.endsWith('/embeddings') ? {} : undefined;
    },
    request: (body) => ({ input: textList(body.input), dimensions: body.dimensions ?? body.output_dimension }),
    answer: (vectors, body) => ({
      object: 'list',
      model: body.model,
      data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      usage: { prompt_tokens: vectors.length, total_tokens: vectors.length },
    }),
    refuse: openAiError,
  },
  {
    // Google Gemini, one text
    match: (path) => {
      const found = /\/models\/([^/:]+):embedContent$/.exec(path.split('?')[0]!);
      return found ? { model: found[1]! } : undefined;
    },
    request: (body) => ({
      input: [body.content?.parts?.map((part: { text: string }) => part.text).join('') ?? ''],
      dimensions: body.outputDimensionality,
    }),
    answer: (vectors) => ({ embedding: { values: vectors[0] } }),
    refuse: (message) => ({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }),
  },
  {
    // Google Gemini, several texts
    match: (path) => {
      const found = /\/models\/([^/:]+):batchEmbedContents$/.exec(path.split('?')[0]!);
      return found ? { model: found[1]! } : undefined;
    },
    request: (body) => ({
      input: (body.requests ?? []).map((request: { content: { parts: Array<{ text: string }> } }) =>
        request.content.parts.map((part) => part.text).join(''),
      ),
      dimensions: body.requests?.[0]?.outputDimensionality,
    }),
    answer: (vectors) => ({ embeddings: vectors.map((values) => ({ values })) }),
    refuse: (message) => ({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }),
  },
  {
    // Amazon Bedrock InvokeModel: Titan (one text) or Cohere (several)
    match: (path) => {
      const found = /^\/model\/([^/]+)\/invoke$/.exec(path.split('?')[0]!);
      return found ? { model: decodeURIComponent(found[1]!) } : undefined;
    },
    request: (body) =>
      Array.isArray(body.texts)
        ? { input: body.texts, dimensions: body.output_dimension }
        : { input: [body.inputText], dimensions: body.dimensions },
    answer: (vectors, body) =>
      Array.isArray(body.texts) ? { embeddings: vectors } : { embedding: vectors[0], inputTextTokenCount: 3 },
    refuse: (message) => ({ message }),
    unauthorised: (headers) =>
      SIGV4_AUTHORIZATION.test(String(headers.authorization ?? '')) &&
      /^\d{8}T\d{6}Z$/.test(String(headers['x-amz-date']))
        ? undefined
        : 'The request signature is not a SigV4 signature.',
  },
];

export class FakeEmbeddings {
  readonly requests: EmbeddingRequest[] = [];
  readonly failOn = new Set<string>();
  /** Text containing one of these words is never answered (an embedding call that hangs). */
  readonly hangOn = new Set<string>();
  readonly #server: Server;
  #url = '';

  constructor() {
    this.#server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        const send = (status: number, payload: unknown) => {
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(payload));
        };
        const path = request.url ?? '/';
        const routed = routes
          .map((route) => ({ route, matched: request.method === 'POST' ? route.match(path) : undefined }))
          .find(({ matched }) => matched !== undefined);
        if (!routed) return send(404, openAiError(`no route ${request.method} ${path}`));
        const { route, matched } = routed;
        const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as Record<string, any>;
        const { input, dimensions } = route.request(body);
        this.requests.push({
          path,
          headers: request.headers,
          model: typeof body.model === 'string' ? body.model : (matched!.model ?? ''),
          input,
          dimensions,
          body,
        });
        const unauthorised = route.unauthorised?.(request.headers);
        if (unauthorised) return send(403, route.refuse(unauthorised));
        if (input.some((text) => [...this.hangOn].some((word) => text.includes(word)))) return;
        if (input.some((text) => [...this.failOn].some((word) => text.includes(word))))
          return send(400, route.refuse('scripted embedding refusal'));
        const vectors = input.map((text) => fakeEmbedding(text, dimensions ?? FAKE_EMBEDDING_DIMENSIONS));
        send(200, route.answer(vectors, body));
      });
    });
  }

  get url(): string {
    return this.#url;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

export function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  return new FakeEmbeddings().start();
}
