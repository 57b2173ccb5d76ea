/**
 * `?wait=` values: `30s`, `1500ms`, `1m`, or a plain number of seconds. The schema in contracts/api.ts
 * checks the form; this turns it into milliseconds, capped at the configured maximum.
 */
export function waitMilliseconds(value: string | undefined, maxWaitMs: number): number {
  if (value === undefined) return 0;
  const match = /^(\d+)(ms|s|m)?$/.exec(value);
  if (!match?.[1]) return 0;
  const amount = Number(match[1]);
  const unit = match[2] ?? 's';
  const ms = unit === 'ms' ? amount : unit === 's' ? amount * 1_000 : amount * 60_000;
  return Math.min(ms, maxWaitMs);
}
