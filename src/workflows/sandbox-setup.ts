/**
 * Loaded once into a worker's shared workflow sandbox before any workflow runs (the bundle's
 * `preloadModules`, src/temporal/workflow-bundle-options.ts), while the sandbox's globals can still be changed:
 * the SDK freezes them right after. Nothing per workflow lives here.
 *
 * Stack depth (decision 0018). For the `__stack_trace` query (the Web UI's Stack Trace tab) the SDK records
 * a source-mapped stack of `Error.stackTraceLimit` frames for every promise workflow code creates, whether
 * or not anyone ever asks. With V8's 10 frames that was 40 % of the CPU of errand's workflow threads in the
 * bench's throughput figure; with 0 the SDK's hook stores nothing. The cost: the Stack Trace tab shows no
 * frames, and an error thrown in workflow code carries its type and message but no frames (the worker's
 * log and the failure in the history still name it). Activities are not in the sandbox: their stacks stay whole.
 */
export const workflowStackFrames = 0;

Error.stackTraceLimit = workflowStackFrames;
