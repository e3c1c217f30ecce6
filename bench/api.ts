/** A small JSON client for setting the benchmark up over the service's REST API (fetch, keep-alive). */
export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: any;
}

export interface BenchApi {
  readonly baseUrl: string;
  get(path: string): Promise<ApiAnswer>;
  /** Sends `json` as an `application/json` body; without it the request has no body and no content type. */
  post(path: string, json?: unknown): Promise<ApiAnswer>;
  put(path: string, json?: unknown): Promise<ApiAnswer>;
}

export function benchApi(baseUrl: string): BenchApi {
  const send = async (method: string, path: string, json?: unknown): Promise<ApiAnswer> => {
    const init: RequestInit = { method };
    if (json !== undefined) {
      init.headers = { 'content-type': 'application/json' };
      init.body = JSON.stringify(json);
    }
    const response = await fetch(baseUrl + path, init);
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, json: parsed };
  };
  return {
    baseUrl,
    get: (path) => send('GET', path),
    post: (path, json) => send('POST', path, json),
    put: (path, json) => send('PUT', path, json),
  };
}

/** Throws with the answer's body when the status is not the expected one. */
export function expectStatus(answer: ApiAnswer, expected: number, what: string): ApiAnswer {
  if (answer.status !== expected) {
    throw new Error(`${what}: expected HTTP ${expected}, got ${answer.status}: ${answer.text.slice(0, 500)}`);
  }
  return answer;
}

/** The 24-hex id at the end of a `Location` (`svc://...//<id>?version=<n>`). */
export function idFromLocation(location: string | null): string {
  const match = /\/([0-9a-f]{24})(\?version=\d+)?$/.exec(location ?? '');
  if (!match) throw new Error(`Location ${location} does not end in an id`);
  return match[1]!;
}
