import { AppError } from '../errors.ts';

/**
 * Store failures a caller can do something about: the store is unreachable for a moment (PostgreSQL restarting,
 * the network to it cut) or cannot write (the disk of the embedded store is full or failing). They become
 * problems with a status that says so (503 with Retry-After, or 507) instead of an unexplained 500. Recognised by
 * their shape: `pg`'s connection errors and SQLSTATE classes, node:sqlite's result codes.
 */

/** SQLSTATE codes of a connection that is gone or refused (class 08, server shutting down or starting). */
const POSTGRES_UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket errors of the connection to the store. */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/** What `pg` says when a connection ends, cannot be made in time, was broken before, or a query got no answer in time. */
const POSTGRES_CONNECTION_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Query read timeout)/;

const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;

const RETRY_ADVICE =
  'Retry it shortly (with the same Idempotency-Key, a message that did get through is not run twice).';

export function storeFailure(error: unknown): AppError | undefined {
  if (!(error instanceof Error) || error instanceof AppError) return undefined;
  const { code, errcode, syscall } = error as Error & { code?: unknown; errcode?: unknown; syscall?: unknown };
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') {
    const primary = errcode & 0xff;
    if (primary === SQLITE_FULL) {
      return new AppError(
        'insufficient-storage',
        `The embedded store is out of space (${error.message}); the request was not saved. Free disk space; ${RETRY_ADVICE}`,
      );
    }
    if (primary === SQLITE_IOERR || primary === SQLITE_CANTOPEN) {
      return new AppError(
        'unavailable',
        `The embedded store cannot write (${error.message}: the disk may be full or failing); the request was not saved. ${RETRY_ADVICE}`,
        { retryAfterSeconds: 5 },
      );
    }
    return undefined;
  }
  const lostConnection =
    (typeof code === 'string' && (code.startsWith('08') || POSTGRES_UNAVAILABLE_STATES.has(code))) ||
    (typeof code === 'string' && SOCKET_ERRORS.has(code) && typeof syscall === 'string') ||
    POSTGRES_CONNECTION_MESSAGE.test(error.message);
  if (!lostConnection) return undefined;
  return new AppError(
    'unavailable',
    `The store cannot be reached right now (the connection to it was lost or refused); this request may not have been saved. ${RETRY_ADVICE}`,
    { retryAfterSeconds: 1 },
  );
}
