import { intFromEnv } from './config';
import { defaultMaxCachedWorkflows, defaultWorkflowThreads } from '../contracts/limits/workflow';

/** Worker options errand sets from the environment (defaults in contracts/limits.ts). */
export interface WorkerTuning {
  /** SDK `maxCachedWorkflows`: workflows kept in memory; others are replayed when they wake. */
  maxCachedWorkflows: number;
  /** SDK `workflowThreadPoolSize`: threads that run workflow code. */
  workflowThreadPoolSize: number;
}

/**
 * Reads `ERRAND_WORKER_MAX_CACHED_WORKFLOWS` and `ERRAND_WORKER_WORKFLOW_THREADS`; a value that is not a
 * whole number in range is an error that names the variable and what would be valid.
 */
export function workerTuningFromEnv(env: NodeJS.ProcessEnv): WorkerTuning {
  return {
    maxCachedWorkflows: intFromEnv(env, 'ERRAND_WORKER_MAX_CACHED_WORKFLOWS', 0, 1_000_000, `workflows kept in memory; others are replayed when they wake; default ${defaultMaxCachedWorkflows}`) ?? defaultMaxCachedWorkflows,
    workflowThreadPoolSize: intFromEnv(env, 'ERRAND_WORKER_WORKFLOW_THREADS', 1, 64, `threads that run workflow code; default ${defaultWorkflowThreads}`) ?? defaultWorkflowThreads,
  };
}
