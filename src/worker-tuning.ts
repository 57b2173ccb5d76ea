import { defaultMaxCachedWorkflows, defaultWorkflowThreads } from './contracts/limits';

/** Worker options errand sets from the environment (defaults in contracts/limits.ts). */
export interface WorkerTuning {
  /** SDK `maxCachedWorkflows`: workflows kept in memory; others are replayed when they wake. */
  maxCachedWorkflows: number;
  /** SDK `workflowThreadPoolSize`: threads that run workflow code. */
  workflowThreadPoolSize: number;
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, meaning: string): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name}="${raw}" is not valid: use a whole number from ${min} to ${max} (${meaning}; default ${fallback})`);
  }
  return value;
}

/**
 * Reads `ERRAND_WORKER_MAX_CACHED_WORKFLOWS` and `ERRAND_WORKER_WORKFLOW_THREADS`; a value that is not a
 * whole number in range is an error that names the variable and what would be valid.
 */
export function workerTuningFromEnv(env: NodeJS.ProcessEnv): WorkerTuning {
  return {
    maxCachedWorkflows: wholeNumber(env, 'ERRAND_WORKER_MAX_CACHED_WORKFLOWS', defaultMaxCachedWorkflows, 0, 1_000_000, 'workflows kept in memory; others are replayed when they wake'),
    workflowThreadPoolSize: wholeNumber(env, 'ERRAND_WORKER_WORKFLOW_THREADS', defaultWorkflowThreads, 1, 64, 'threads that run workflow code'),
  };
}
