/**
 * What a model call rejects with when its abort signal fires. Like `fetch`, every ChatModel (adapters
 * and the scripted model) rejects with the signal's reason when that is an Error — inside a Temporal
 * activity that is the activity's CancelledFailure, so the activity can rethrow it as a cancellation —
 * and otherwise with an Error named `AbortError`. `classifyModelError` recognises both as an abort.
 */

/** Name of the abort error, the same as the platform's `AbortError` so generic checks also work. */
export const abortErrorName = 'AbortError';

/** The error to reject with when `signal` has fired: its reason if that is an Error, else an `AbortError`. */
export function abortErrorFor(signal: AbortSignal | undefined, what = 'model call'): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const error = new Error(`${what} aborted${typeof reason === 'string' ? `: ${reason}` : ''}`, { cause: reason });
  error.name = abortErrorName;
  return error;
}

/** Resolves after `ms`; rejects with `abortErrorFor(signal)` as soon as `signal` fires. */
export function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortErrorFor(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortErrorFor(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
