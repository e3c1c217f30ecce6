/** A signal made for one piece of work, and what to call once the work is over. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Stops the time limit and stops following the other signals; call it when the work is over. */
  release(): void;
}

/**
 * A signal that aborts when one of `signals` does (with its reason) or, with `limitMs`, once that many milliseconds
 * passed (with `timeoutReason()`, by default the `TimeoutError` that `AbortSignal.timeout` gives). One signal and no
 * limit: that signal itself.
 *
 * Not `AbortSignal.any` or `AbortSignal.timeout`: Node registers each signal they make for finalization, and V8's
 * young collections keep such a signal, with whatever its listeners hold (an HTTP request and its answer), until
 * a full collection. A signal of work done every turn made every turn's objects outlive it that way.
 */
export function linkedSignal(
  signals: readonly AbortSignal[],
  limitMs: number | undefined,
  timeoutReason: () => unknown = timeoutError,
): LinkedSignal {
  if (signals.length === 1 && limitMs === undefined) return { signal: signals[0]!, release: () => undefined };
  const controller = new AbortController();
  const followed: Array<[AbortSignal, () => void]> = [];
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    const abort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    followed.push([signal, abort]);
  }
  const timer =
    limitMs === undefined || controller.signal.aborted
      ? undefined
      : setTimeout(() => controller.abort(timeoutReason()), limitMs);
  return {
    signal: controller.signal,
    release: () => {
      clearTimeout(timer);
      for (const [signal, abort] of followed) signal.removeEventListener('abort', abort);
    },
  };
}

function timeoutError(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}
