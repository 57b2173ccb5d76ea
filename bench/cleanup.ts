/**
 * Everything the bench starts (dev server, worker children, HTTP servers, in-process workers) registers a
 * stop function here, so the bench cleans up after itself on success, on failure and on Ctrl-C. Child
 * processes are also remembered by pid so a hard exit still kills exactly the processes we started.
 */

type StopFunction = () => Promise<void>;

const stops: { name: string; stop: StopFunction }[] = [];
const childPids = new Set<number>();
let cleaning: Promise<void> | undefined;

/** Registers something to stop; stops run in reverse order of registration. Returns an unregister function. */
export function onCleanup(name: string, stop: StopFunction): () => void {
  const entry = { name, stop };
  stops.push(entry);
  return () => {
    const index = stops.indexOf(entry);
    if (index >= 0) stops.splice(index, 1);
  };
}

/** Remembers a child process we started, so a hard exit can still SIGKILL it. */
export function trackChildPid(pid: number): void {
  childPids.add(pid);
}

/** Forgets a child process that has exited. */
export function untrackChildPid(pid: number): void {
  childPids.delete(pid);
}

/** Bound on one stop function, so a stuck stop cannot hang the bench forever. */
const stopTimeoutMs = 20_000;

/** Runs every registered stop function (once), newest first; failures are reported, not thrown. */
export function cleanupAll(): Promise<void> {
  cleaning ??= (async () => {
    while (stops.length > 0) {
      const entry = stops.pop();
      if (!entry) break;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          entry.stop(),
          new Promise<void>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`did not stop within ${stopTimeoutMs} ms`)), stopTimeoutMs);
          }),
        ]);
      } catch (error) {
        process.stderr.write(`bench cleanup: ${entry.name}: ${error instanceof Error ? error.message : String(error)}\n`);
      } finally {
        clearTimeout(timer);
      }
    }
    killTrackedChildren();
  })();
  return cleaning;
}

/** SIGKILLs the child processes we started that are still tracked (synchronous: safe in an exit handler). */
export function killTrackedChildren(): void {
  for (const pid of childPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  childPids.clear();
}

/** Installs Ctrl-C / SIGTERM handlers and an exit fallback. */
export function installCleanupHandlers(): void {
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`\nbench: ${signal}, cleaning up…\n`);
    void cleanupAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', killTrackedChildren);
}
