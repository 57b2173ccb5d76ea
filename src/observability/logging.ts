import type { LogLevel, LogMetadata } from '@temporalio/common';
import { IllegalStateError, LogTimestamp, Runtime } from '@temporalio/worker';
import { configureLogging, LevelLogger, writeLogEntry, type LoggingOptions } from './json-logger';

export {
  addSecrets,
  configureLogging,
  createLogger,
  logLevelEnv,
  logLevelFromEnvironment,
  providerApiKeys,
  redact,
  secretsFromEnvironment,
  type ErrandLogger,
  type LogDestination,
  type LoggingOptions,
} from './json-logger';

/**
 * Logging of a worker process: the Temporal SDK's runtime logger writes errand's JSON lines, so the
 * SDK's own messages, workflow `log.*` calls (through the SDK's sink, with workflowId, runId,
 * workflowType), activity lifecycle messages (with activityType, workflowId, workflowRunId) and the
 * native core's warnings all come out as one redacted JSON object per line.
 */

/** The SDK-facing logger: hands each entry to the process sink, keeping the SDK's own timestamp. */
class RuntimeJsonLogger extends LevelLogger {
  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    // Workflow and core entries carry their own time (nanoseconds) under a symbol key; use it so lines
    // reordered by the SDK's buffer still tell when things happened.
    const nanos: unknown = meta?.[LogTimestamp];
    writeLogEntry(level, message, meta, typeof nanos === 'bigint' ? new Date(Number(nanos / 1_000_000n)) : undefined);
  }
}

let installed = false;

/**
 * Sets up JSON-lines logging for a worker process (see `configureLogging` for the options) and installs
 * the Temporal SDK runtime with it. The runtime is a process singleton, so this must run before the
 * first `NativeConnection` or `Worker` is created; a second call only updates level, destination and
 * secrets. The native core's own messages are forwarded too (WARN and above; core DEBUG is very chatty).
 *
 * @returns the installed runtime (for `flushLogs()` before exit)
 */
export function installLogging(options: LoggingOptions = {}): Runtime {
  configureLogging(options);
  // After the last connection closes the SDK drops its runtime and makes a new one from the options
  // installed here, so Runtime.instance() is ours (and still logs as JSON) on later calls.
  if (installed) return Runtime.instance();
  let runtime: Runtime;
  try {
    runtime = Runtime.install({
      logger: new RuntimeJsonLogger(),
      telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
    });
  } catch (error) {
    if (error instanceof IllegalStateError) {
      throw new Error(`installLogging must run before the first Temporal NativeConnection or Worker of the process is created (${error.message})`);
    }
    throw error;
  }
  installed = true;
  return runtime;
}
