import type { Logger, LogLevel, LogMetadata } from '@temporalio/common';
import { defaultAnthropicApiKeyEnv, type ProviderConfig } from '../llm/provider-config';
import { activeTraceIds } from './trace-context';

/**
 * JSON-lines logging for errand's processes, with secrets redacted. This file has no dependency on
 * `@temporalio/worker` (whose native bridge the API and its Lambda bundle must not load): the API and the
 * CLI use {@link configureLogging} and {@link createLogger}; the worker uses `installLogging` from
 * `./logging`, which also routes the Temporal SDK's logs here.
 */

/** Log levels, least to most severe (the Temporal SDK's names). */
export const logLevels = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const satisfies readonly LogLevel[];

/** Environment variable that sets the level; `INFO` when unset. */
export const logLevelEnv = 'ERRAND_LOG_LEVEL';

/** What replaces a secret. */
export const redactedText = '[redacted]';

/** Meta keys whose values are never logged, whatever they hold. */
export const secretKeyPattern = /key|token|secret|password|authorization/i;

/**
 * Shortest secret that is also cut out of longer strings (e.g. an error message quoting a header).
 * Shorter configured values are redacted only where a value equals them, so a short value does not turn
 * ordinary words into "[redacted]".
 */
const minimumEmbeddedSecretLength = 6;
/** Nesting depth past which meta is not walked (every loop has a bound; SDK meta is flat). */
const maximumDepth = 8;
/** Longest array logged in full; the rest is summarised. */
const maximumArrayItems = 50;

/** Where log lines go: a stream (default: standard error) or a function that takes one line. */
export type LogDestination = { write(line: string): unknown } | ((line: string) => void);

/** Options of {@link configureLogging}. */
export interface LoggingOptions {
  /** Lowest level written; default `ERRAND_LOG_LEVEL`, else `INFO`. */
  level?: LogLevel;
  /**
   * Where lines go. Standard error by default, so a CLI's standard output stays its result (a JSON answer
   * can be piped) while logs still reach the container's log stream.
   */
  destination?: LogDestination;
  /** Secret values to redact wherever they appear: LLM API keys, API key material, tokens. */
  secrets?: readonly string[];
  /**
   * Also treat the values of environment variables whose names look secret (`*_API_KEY`, `*TOKEN*`, …) as
   * secrets (default true), so a key read from the environment by a provider is redacted even when the
   * caller did not list it.
   */
  secretsFromEnvironment?: boolean;
  /** Environment read for the level and secret variables (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** A logger of errand's own code: the SDK's `Logger` plus fixed fields for every line. */
export interface ErrandLogger extends Logger {
  /** A logger that adds `meta` to every line (e.g. `{ workflowId }` while handling one request). */
  child(meta: LogMetadata): ErrandLogger;
}

/** Reads `ERRAND_LOG_LEVEL` (case-insensitive); unset means `INFO`. */
export function logLevelFromEnvironment(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const raw = env[logLevelEnv]?.trim();
  if (raw === undefined || raw === '') return 'INFO';
  const level = logLevels.find((candidate) => candidate === raw.toUpperCase());
  if (!level) throw new Error(`${logLevelEnv} must be one of ${logLevels.join(', ')} (got "${raw}")`);
  return level;
}

/** Values of environment variables whose names match {@link secretKeyPattern} (empty values skipped). */
export function secretsFromEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(env)
    .filter((entry): entry is [string, string] => secretKeyPattern.test(entry[0]) && typeof entry[1] === 'string' && entry[1].trim() !== '')
    .map(([, value]) => value);
}

/**
 * The API keys configured providers read from the environment (`apiKeyEnv`, and `ANTHROPIC_API_KEY` for
 * an Anthropic provider without one), as secrets for {@link configureLogging}. Needed because a variable
 * named freely (`apiKeyEnv: "LLM_CREDENTIAL"`) is not caught by the name pattern.
 */
export function providerApiKeys(providers: readonly ProviderConfig[], env: NodeJS.ProcessEnv = process.env): string[] {
  return providers
    .map((provider) => provider.apiKeyEnv ?? (provider.kind === 'anthropic' ? defaultAnthropicApiKeyEnv : undefined))
    .map((name) => (name === undefined ? undefined : env[name]))
    .filter((value): value is string => typeof value === 'string' && value.trim() !== '');
}

/**
 * Returns a copy of `value` with secrets replaced by "[redacted]": the value of any key matching
 * {@link secretKeyPattern}, any string equal to a secret, and any occurrence of a secret (of at least a
 * few characters) inside a longer string. Errors become `{ name, message, stack }` first, so their text is
 * redacted too; bigints become strings (JSON has none); cycles and very deep nesting are cut.
 */
export function redact(value: unknown, secrets: readonly string[] = []): unknown {
  const usable = [...new Set(secrets.filter((secret) => secret !== ''))].sort((a, b) => b.length - a.length);
  return redactValue(value, usable, 0, new WeakSet());
}

function redactString(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (result === secret) return redactedText;
    if (secret.length >= minimumEmbeddedSecretLength && result.includes(secret)) result = result.split(secret).join(redactedText);
  }
  return result;
}

function redactValue(value: unknown, secrets: readonly string[], depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactString(value, secrets);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  if (depth >= maximumDepth) return '[nested too deep]';
  seen.add(value);
  try {
    if (value instanceof Error) {
      const plain: Record<string, unknown> = { name: value.name, message: value.message, ...(value.stack ? { stack: value.stack } : {}) };
      // Temporal failures say what went wrong in `type` / `nonRetryable`; Node errors in `code`.
      for (const field of ['type', 'nonRetryable', 'code'] as const) {
        const fieldValue: unknown = (value as unknown as Record<string, unknown>)[field];
        if (fieldValue !== undefined && fieldValue !== null) plain[field] = fieldValue;
      }
      if (value.cause !== undefined) plain.cause = value.cause;
      return redactValue(plain, secrets, depth, seen);
    }
    if (value instanceof Date) return value.toISOString();
    if (Array.isArray(value)) {
      const items = value.slice(0, maximumArrayItems).map((item) => redactValue(item, secrets, depth + 1, seen));
      return value.length > maximumArrayItems ? [...items, `[${value.length - maximumArrayItems} more]`] : items;
    }
    const result: Record<string, unknown> = {};
    // Object.entries skips symbol keys, such as the SDK's LogTimestamp marker.
    for (const [key, item] of Object.entries(value)) {
      result[key] = secretKeyPattern.test(key) && item !== undefined && item !== null ? redactedText : redactValue(item, secrets, depth + 1, seen);
    }
    return result;
  } finally {
    seen.delete(value);
  }
}

/** Severity rank of a level (TRACE 0 … ERROR 4). */
function rank(level: LogLevel): number {
  return logLevels.indexOf(level);
}

/** Fields every line starts with; meta keys of the same name are kept under a `meta.` prefix. */
const reservedFields = new Set(['time', 'level', 'message']);

/** One JSON line: `{"time", "level", "message", ...meta}` with secrets redacted. */
export function formatLogLine(level: LogLevel, message: string, meta: LogMetadata | undefined, secrets: readonly string[], time: Date = new Date()): string {
  const line: Record<string, unknown> = { time: time.toISOString(), level, message: redactString(message, secrets) };
  // The active span's ids (an API request's, an activity's), so a line can be found from its trace and back;
  // workflow and activity lines bring their own in meta (the trace interceptors'), which win.
  Object.assign(line, activeTraceIds());
  const redacted = meta ? redact(meta, secrets) : undefined;
  if (redacted && typeof redacted === 'object' && !Array.isArray(redacted)) {
    for (const [key, item] of Object.entries(redacted)) {
      if (item === undefined) continue;
      line[reservedFields.has(key) ? `meta.${key}` : key] = item;
    }
  }
  return `${JSON.stringify(line)}\n`;
}

/** The resolved settings all loggers of the process share. */
interface Sink {
  level: LogLevel;
  write: (line: string) => void;
  secrets: readonly string[];
}

let sink: Sink | undefined;

function toWriter(destination: LogDestination | undefined): (line: string) => void {
  if (destination === undefined) return (line) => process.stderr.write(line);
  if (typeof destination === 'function') return destination;
  return (line) => {
    destination.write(line);
  };
}

function resolveSink(options: LoggingOptions): Sink {
  const env = options.env ?? process.env;
  const secrets = [...(options.secrets ?? []), ...(options.secretsFromEnvironment === false ? [] : secretsFromEnvironment(env))];
  return { level: options.level ?? logLevelFromEnvironment(env), write: toWriter(options.destination), secrets };
}

function currentSink(): Sink {
  sink ??= resolveSink({});
  return sink;
}

/**
 * Sets level, destination and secrets for every logger of this process (loggers made earlier follow
 * too). Call it once at the start of an entry point that does not run a worker (the API server, the
 * Lambda handler, CLI commands); worker entry points call `installLogging` instead, which calls this.
 */
export function configureLogging(options: LoggingOptions = {}): void {
  sink = resolveSink(options);
}

/** Adds secret values to redact from now on (e.g. API key material read after logging was set up). */
export function addSecrets(...secrets: string[]): void {
  const current = currentSink();
  sink = { ...current, secrets: [...current.secrets, ...secrets.filter((secret) => secret !== '')] };
}

/** Writes one entry through the process's sink (used by the SDK runtime logger too). */
export function writeLogEntry(level: LogLevel, message: string, meta?: LogMetadata, time?: Date): void {
  const current = currentSink();
  if (rank(level) < rank(current.level)) return;
  try {
    current.write(formatLogLine(level, message, meta, current.secrets, time));
  } catch {
    // Logging must never take the process down (a closed pipe, an unserialisable value).
  }
}

/** Whether a level is written under the current settings (to skip building expensive meta). */
export function isLevelEnabled(level: LogLevel): boolean {
  return rank(level) >= rank(currentSink().level);
}

/** The five level methods of the SDK's `Logger`, written once on top of `log`. */
export abstract class LevelLogger implements Logger {
  abstract log(level: LogLevel, message: string, meta?: LogMetadata): void;
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

class JsonLinesLogger extends LevelLogger implements ErrandLogger {
  constructor(private readonly fields: LogMetadata) {
    super();
  }

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    writeLogEntry(level, message, meta ? { ...this.fields, ...meta } : this.fields);
  }
  child(meta: LogMetadata): ErrandLogger {
    return new JsonLinesLogger({ ...this.fields, ...meta });
  }
}

/**
 * A logger for one part of errand (`api`, `cli`, `worker`), writing the same JSON lines as the SDK's
 * logs with `component` on every line. Safe to create before logging is configured.
 */
export function createLogger(component: string, meta: LogMetadata = {}): ErrandLogger {
  return new JsonLinesLogger({ component, ...meta });
}
