import { maxModelRetryAfterMs } from '../contracts/limits/llm';

/**
 * Reads a provider's retry hint from response headers, in milliseconds.
 * `retry-after-ms` (OpenAI, milliseconds) wins over `retry-after` (RFC 9110: delay in seconds or an
 * HTTP date). Negative or unparsable values are ignored; very long hints are capped at
 * `maxModelRetryAfterMs` so Temporal still retries in a sensible time.
 *
 * @param headers response headers; names are matched case-insensitively
 * @param now current time in ms since the epoch, for HTTP-date hints
 */
export function parseRetryAfterMs(headers: Record<string, string | undefined> | undefined, now = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const lookup = (name: string): string | undefined => {
    for (const [key, value] of Object.entries(headers)) {
      if (key.toLowerCase() === name && value !== undefined) return value.trim();
    }
    return undefined;
  };
  const cap = (ms: number): number => Math.min(Math.max(0, Math.round(ms)), maxModelRetryAfterMs);

  const milliseconds = lookup('retry-after-ms');
  if (milliseconds !== undefined && /^\d+(\.\d+)?$/.test(milliseconds)) return cap(Number(milliseconds));

  const retryAfter = lookup('retry-after');
  if (retryAfter === undefined || retryAfter === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return cap(Number(retryAfter) * 1000);
  const date = Date.parse(retryAfter);
  if (Number.isNaN(date)) return undefined;
  return cap(date - now);
}
