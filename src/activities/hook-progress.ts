import type { BlobStore } from './blob-store';
import type { HookProgress, HookRunOutcome } from './agent-hook-runner';
import { storedOutcome, storeOutcome } from './stored-outcomes';

/**
 * The stored progress of one run of hooks (decision 0032): the outcome after each finished hook, by its
 * count, under `prefix`. A retried activity (its attempt timed out or its worker was lost) resumes after
 * the last hook stored, so a hook with side effects runs once per call. Only a retry reads: a first attempt
 * (`mayHaveRun` false) has nothing stored.
 */
export async function hookProgress(blobs: BlobStore, prefix: string, hookCount: number, mayHaveRun: boolean): Promise<HookProgress> {
  const key = (count: number) => `${prefix}/after-${count}.json`;
  let done: HookProgress['done'];
  for (let count = mayHaveRun ? hookCount : 0; count >= 1 && !done; count -= 1) {
    const outcome = await storedOutcome<HookRunOutcome>(blobs, key(count));
    if (outcome) done = { count, outcome };
  }
  return {
    done,
    save: async (count, outcome) => {
      await storeOutcome(blobs, key(count), outcome);
    },
  };
}
