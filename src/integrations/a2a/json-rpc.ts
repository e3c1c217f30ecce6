/**
 * JSON-RPC 2.0 envelopes for the A2A endpoint. Every answer is a response object (the HTTP layer sends it with
 * status 200): -32700 when the body is not JSON, -32600 when it is not a request, -32601 for an unknown method,
 * -32602 for bad params, A2A's own codes (-32001 task not found, -32004 unsupported operation), -32603 otherwise.
 */

export const JSON_RPC_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotificationNotSupported: -32003,
  unsupportedOperation: -32004,
} as const;

export type JsonRpcId = string | number | null;

export type JsonRpcResponse =
  | { readonly jsonrpc: '2.0'; readonly id: JsonRpcId; readonly result: unknown }
  | {
      readonly jsonrpc: '2.0';
      readonly id: JsonRpcId;
      readonly error: { readonly code: number; readonly message: string; readonly data?: unknown };
    };

/** Thrown by a method to answer with a JSON-RPC error. */
export class JsonRpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'JsonRpcError';
    this.code = code;
    this.data = data;
  }
}

export const invalidParams = (message: string) => new JsonRpcError(JSON_RPC_CODES.invalidParams, message);

export type JsonRpcMethod = (params: unknown) => Promise<unknown>;

const errorResponse = (id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: data === undefined ? { code, message } : { code, message, data },
});

function isId(value: unknown): value is JsonRpcId {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/**
 * Answers one JSON-RPC request given as text. A request without `id` is answered with `id: null` (the A2A
 * endpoint has no notifications). `unexpected` hears of failures that are not `JsonRpcError`s (answered -32603).
 */
export async function answerJsonRpc(
  body: string,
  methods: Readonly<Record<string, JsonRpcMethod>>,
  unexpected: (error: unknown) => void,
): Promise<JsonRpcResponse> {
  let request: unknown;
  try {
    request = JSON.parse(body);
  } catch (error) {
    return errorResponse(
      null,
      JSON_RPC_CODES.parseError,
      `Parse error: the body is not valid JSON (${(error as Error).message}).`,
    );
  }
  if (Array.isArray(request))
    return errorResponse(
      null,
      JSON_RPC_CODES.invalidRequest,
      'Invalid request: batch requests are not supported; send one request per call.',
    );
  if (request === null || typeof request !== 'object')
    return errorResponse(
      null,
      JSON_RPC_CODES.invalidRequest,
      'Invalid request: the body must be a JSON-RPC 2.0 request object.',
    );
  const { jsonrpc, method, params, id: rawId } = request as Record<string, unknown>;
  const id = isId(rawId) ? rawId : null;
  if (rawId !== undefined && !isId(rawId))
    return errorResponse(
      null,
      JSON_RPC_CODES.invalidRequest,
      'Invalid request: id must be a string, a number or null.',
    );
  if (jsonrpc !== '2.0')
    return errorResponse(id, JSON_RPC_CODES.invalidRequest, 'Invalid request: jsonrpc must be "2.0".');
  if (typeof method !== 'string' || method === '')
    return errorResponse(id, JSON_RPC_CODES.invalidRequest, 'Invalid request: method must be a non-empty text.');
  if (params !== undefined && (params === null || typeof params !== 'object')) {
    return errorResponse(id, JSON_RPC_CODES.invalidParams, 'Invalid params: params must be an object.');
  }
  const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
  if (!handler) return errorResponse(id, JSON_RPC_CODES.methodNotFound, `Unknown method: ${method}`);
  try {
    return { jsonrpc: '2.0', id, result: await handler(params) };
  } catch (error) {
    if (error instanceof JsonRpcError) return errorResponse(id, error.code, error.message, error.data);
    unexpected(error);
    return errorResponse(
      id,
      JSON_RPC_CODES.internalError,
      'Internal error while processing the request; the details are in the service log.',
    );
  }
}
