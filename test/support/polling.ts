/** Waiting in tests: poll until a condition holds, with a deadline and a message that says what was awaited. */

/** Polls `read` until `done` holds (bounded); errors while polling count as "not yet". */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let value: T | undefined;
    try {
      value = await read();
      if (done(value)) return value;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value ${JSON.stringify(value)?.slice(0, 800)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}
