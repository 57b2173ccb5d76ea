/**
 * `?wait=` values: `30s`, `1500ms`, `1m`, or a plain number of seconds. The schema in contracts/api.ts
 * checks the form; this turns it into milliseconds, capped at the configured maximum, and says when it was cut.
 */
export function resolveWait(value: string | undefined, maxWaitMs: number): { ms: number; cappedNotice?: string } {
  const requested = requestedWaitMs(value);
  if (requested <= maxWaitMs) return { ms: requested };
  // Said in the answer's Errand-Wait-Capped header, so a client knows to ask for the result again.
  return { ms: maxWaitMs, cappedNotice: `waited at most ${maxWaitMs} ms (the server's longest wait, ERRAND_API_MAX_WAIT_MS), not the ${requested} ms asked for` };
}

/** The wait asked for, in milliseconds, before the cap (0 for none). */
function requestedWaitMs(value: string | undefined): number {
  if (value === undefined) return 0;
  const match = /^(\d+)(ms|s|m)?$/.exec(value);
  if (!match?.[1]) return 0;
  const amount = Number(match[1]);
  const unit = match[2] ?? 's';
  return unit === 'ms' ? amount : unit === 's' ? amount * 1_000 : amount * 60_000;
}

/** The response header that says a `?wait=` was cut to the server's longest wait. */
export const waitCappedHeader = 'Errand-Wait-Capped';
