import type { Sinks } from '@temporalio/workflow';

/**
 * The sink a workflow calls when it is cancelled, so the worker that runs it aborts that run's in-flight
 * model and tool calls at once instead of at their next heartbeat (decision 0022). Sinks run on the worker
 * that processes the workflow task and are not called on replay; they add nothing to history, so calling
 * one changes no workflow's command sequence.
 */
export interface InFlightSinks extends Sinks {
  inFlightCalls: {
    /** Aborts the calling run's model and tool calls running on this worker (`reason` is logged with them). */
    abortRun(reason: string): void;
  };
}
