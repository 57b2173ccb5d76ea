import { agentMemoryRevisionsKeptMax, defaultAgentMemoryRevisionsKept } from '../contracts/limits/memory';
import { intFromEnv } from './client-config';

/** How agents' memory folders are kept (decision 0031). */
export interface MemorySettings {
  /** Revisions of each memory file kept, the latest included; a write deletes older ones. */
  revisionsKept: number;
}

/**
 * Reads `ERRAND_MEMORY_REVISIONS_KEPT`; a value that is not a whole number from 1 to
 * {@link agentMemoryRevisionsKeptMax} is an error that names the variable and what would be valid.
 */
export function memorySettingsFromEnv(env: NodeJS.ProcessEnv): MemorySettings {
  return {
    revisionsKept: intFromEnv(env, 'ERRAND_MEMORY_REVISIONS_KEPT', 1, agentMemoryRevisionsKeptMax, `revisions of each agent memory file kept, the latest included; default ${defaultAgentMemoryRevisionsKept}`) ?? defaultAgentMemoryRevisionsKept,
  };
}
