import { Transform } from 'node:stream';
import type { preParsingAsyncHookHandler } from 'fastify';
import { invalid } from '../errors.ts';
import { JsonDepthScanner } from '../shared/json.ts';

/**
 * Refuses JSON bodies that nest deeper than `svc.http.max-json-depth` while they arrive, before any parser sees
 * them: a 10,000-deep value would otherwise reach recursive code (validation, templates, serialising the step)
 * and fail there. Applies to every body whose content type names JSON, on every route, whichever parser reads it.
 */
export function jsonDepthHook(maxDepth: number): preParsingAsyncHookHandler {
  return async (request, _reply, payload) => {
    if (!/json/i.test(request.headers['content-type'] ?? '')) return payload;
    // Each level takes at least one byte, so a body no longer than the limit cannot nest deeper: most requests
    // skip the scanning stream. Fastify refuses a body whose length differs from its Content-Length.
    if (Number(request.headers['content-length']) <= maxDepth) return payload;
    const scanner = new JsonDepthScanner(maxDepth);
    let refused = false;
    const guarded = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        if (refused) return callback();
        if (!scanner.beyondLimit(chunk)) return callback(null, chunk);
        refused = true;
        callback();
        // Fastify listens to the stream once this hook has returned: the error is raised after that, and the
        // stream never ends normally (which would hand the parser a cut-off body).
        const message = `The JSON body nests arrays and objects deeper than ${maxDepth} levels (svc.http.max-json-depth).`;
        setImmediate(() => guarded.destroy(invalid(message, { path: '$' })));
      },
      flush(callback) {
        if (!refused) callback();
      },
    });
    payload.on('error', (error) => guarded.destroy(error));
    // A route that answers without reading the body (415: no parser for the content type) never listens to the
    // stream: its error must not become an uncaught exception of the process.
    guarded.on('error', () => {});
    return payload.pipe(guarded);
  };
}
