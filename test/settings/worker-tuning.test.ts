import { describe, expect, test } from 'vitest';
import { defaultMaxCachedWorkflows, defaultWorkflowThreads } from '../../src/contracts/limits/workflow';
import { workerTuningFromEnv } from '../../src/settings/worker-tuning';

describe('worker tuning from the environment', () => {
  test('uses errand defaults when nothing is set (empty counts as unset)', () => {
    expect(workerTuningFromEnv({})).toEqual({ maxCachedWorkflows: defaultMaxCachedWorkflows, workflowThreadPoolSize: defaultWorkflowThreads });
    expect(workerTuningFromEnv({ ERRAND_WORKER_WORKFLOW_THREADS: '', ERRAND_WORKER_MAX_CACHED_WORKFLOWS: '' })).toEqual({ maxCachedWorkflows: 500, workflowThreadPoolSize: 2 });
  });

  test('reads both settings', () => {
    expect(workerTuningFromEnv({ ERRAND_WORKER_MAX_CACHED_WORKFLOWS: '0', ERRAND_WORKER_WORKFLOW_THREADS: '1' })).toEqual({ maxCachedWorkflows: 0, workflowThreadPoolSize: 1 });
  });

  test.each([
    ['ERRAND_WORKER_WORKFLOW_THREADS', '0', /ERRAND_WORKER_WORKFLOW_THREADS="0" is not valid: use a whole number from 1 to 64 \(threads that run workflow code; default 2\)/],
    ['ERRAND_WORKER_WORKFLOW_THREADS', 'two', /ERRAND_WORKER_WORKFLOW_THREADS="two" is not valid/],
    ['ERRAND_WORKER_MAX_CACHED_WORKFLOWS', '-1', /ERRAND_WORKER_MAX_CACHED_WORKFLOWS="-1" is not valid: use a whole number from 0 to 1000000/],
    ['ERRAND_WORKER_MAX_CACHED_WORKFLOWS', '2.5', /ERRAND_WORKER_MAX_CACHED_WORKFLOWS="2.5" is not valid/],
  ])('refuses %s=%s, naming the variable and what is valid', (name, value, message) => {
    expect(() => workerTuningFromEnv({ [name]: value })).toThrow(message);
  });
});
