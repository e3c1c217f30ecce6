/**
 * Domain errors. Services throw these; the HTTP layer maps `kind` to a status code and a problem body.
 * Messages are written for the API user and must never carry a secret value.
 */
export type ErrorKind =
  | 'invalid' // 400: the request is malformed or breaks a rule
  | 'unauthorized' // 401
  | 'forbidden' // 403
  | 'not-found' // 404
  | 'conflict' // 409: stale version, already exists, wrong state
  | 'gone' // 410: the conversation has ended
  | 'unprocessable' // 422: well-formed, but cannot be done as asked (an idempotency key reused for another request)
  | 'timeout' // 408: the turn took longer than allowed
  | 'unavailable' // 503: disabled feature, capacity, or the store unreachable for a moment
  | 'insufficient-storage'; // 507: the store is out of space

export class AppError extends Error {
  readonly kind: ErrorKind;
  /** Extra members for the problem body (e.g. the JSON path of an unknown field). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(kind: ErrorKind, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'AppError';
    this.kind = kind;
    this.details = details;
  }
}

export const invalid = (message: string, details?: Record<string, unknown>) =>
  new AppError('invalid', message, details);
export const notFound = (message: string) => new AppError('not-found', message);
export const conflict = (message: string) => new AppError('conflict', message);
