import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback server speaking the OpenAI embeddings wire format (`POST <base>/embeddings`, `input` a string or a
 * list, `dimensions` optional), and Ollama's (`POST /api/embed`), with deterministic vectors: each word of a text adds ±1 to a dimension chosen by
 * its hash, so texts that share words are close and the same text always gets the same vector. Text containing a
 * word in `failOn` is refused with a 400 (a provider refusing one document).
 */

export const FAKE_EMBEDDING_DIMENSIONS = 64;

export interface EmbeddingRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly model: string;
  readonly input: readonly string[];
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
        const body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as {
          input?: string | string[];
          model?: string;
          dimensions?: number;
        };
        const input = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
        this.requests.push({ path: request.url ?? '/', headers: request.headers, model: body.model ?? '', input });
        const send = (status: number, payload: unknown) => {
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(payload));
        };
        const ollama = request.url === '/api/embed';
        if (request.method !== 'POST' || !(ollama || request.url?.endsWith('/embeddings')))
          return send(404, { error: { message: `no route ${request.method} ${request.url}` } });
        if (input.some((text) => [...this.hangOn].some((word) => text.includes(word)))) return;
        if (input.some((text) => [...this.failOn].some((word) => text.includes(word))))
          return send(400, { error: { message: 'scripted embedding refusal', type: 'invalid_request_error' } });
        if (ollama)
          return send(200, {
            model: body.model,
            embeddings: input.map((text) => fakeEmbedding(text, body.dimensions ?? FAKE_EMBEDDING_DIMENSIONS)),
            total_duration: 1,
            load_duration: 0,
            prompt_eval_count: input.length,
          });
        send(200, {
          object: 'list',
          model: body.model,
          data: input.map((text, index) => ({
            object: 'embedding',
            index,
            embedding: fakeEmbedding(text, body.dimensions ?? FAKE_EMBEDDING_DIMENSIONS),
          })),
          usage: { prompt_tokens: input.length, total_tokens: input.length },
        });
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
