import { defaultCompletedTaskTtlMs, defaultMaxBackgroundTasks, defaultTaskWaitTimeoutMs } from '../contracts/limits/workflow';
import type { TaskLimits } from '../contracts/subagent';

/** Background-task limits when configuration sets none. */
export const defaultTaskLimits: TaskLimits = {
  maxBackgroundTasks: defaultMaxBackgroundTasks,
  waitTimeoutMs: defaultTaskWaitTimeoutMs,
  completedTaskTtlMs: defaultCompletedTaskTtlMs,
};
