import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { temporalConnectionOptions, type TemporalConnectOptions } from '../temporal/temporal-connection';
import { temporalHttpUrl } from '../temporal/temporal-http-url';

/**
 * The part of errand's configuration a client command needs: where Temporal is (address, namespace, task
 * queue, TLS / API key, its HTTP API) and the data directory. Client commands (`errand peek`, `status`, ...)
 * load this module instead of config.ts, whose full file schema pulls in the tool policy, the store and MCP
 * settings and the model providers: code a client never runs and each start would pay to load. config.ts
 * builds the full configuration from the same pieces, so both read these settings, and fail on them, alike.
 */

/** Thrown for a bad setting; the message names the setting and what would be valid. */
export class ConfigError extends Error {
  readonly errandError = 'ConfigError';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * A whole number from `min` to `max` in variable `name`, undefined when unset; `hint` says what it means.
 * Here, with {@link ConfigError}, so the API's settings (src/api/api-config.ts) use it without loading the
 * whole configuration.
 */
export function intFromEnv(env: NodeJS.ProcessEnv, name: string, min: number, max: number, hint?: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name}="${raw}" is not valid: use a whole number from ${min} to ${max}${hint ? ` (${hint})` : ''}`);
  }
  return value;
}

/** The `temporal` section of the configuration file. */
export const temporalFileSchema = z.strictObject({
  address: z.string().min(1).optional(),
  namespace: z.string().min(1).optional(),
  taskQueue: z.string().min(1).optional(),
  httpUrl: z.string().min(1).optional(),
});

/** The `dataDir` setting of the configuration file. */
export const dataDirFileSchema = z.string().min(1);

/** Where Temporal is and how to reach it, resolved and checked. */
export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  connection: TemporalConnectOptions;
  summary: string;
  httpUrl?: string;
}

/** What a client command needs of the configuration. */
export interface ClientConfig {
  temporal: TemporalSettings;
  dataDir: string;
}

/** One line per problem: `<where>: <path>: <message>`. */
export function formatIssues(error: z.ZodError, where: string): string {
  return error.issues.map((issue) => `${where}: ${issue.path.length > 0 ? issue.path.join('.') : '(top level)'}: ${issue.message}`).join('\n');
}

/**
 * The file named by `ERRAND_CONFIG`, validated by `schema`; `{}` when the variable is not set. Errors name
 * the file and, for a bad value, the field.
 */
export function readConfigFile<T extends object>(env: NodeJS.ProcessEnv, cwd: string, schema: z.ZodType<T>): Partial<T> {
  const configPath = env.ERRAND_CONFIG;
  if (!configPath) return {};
  const absolute = resolve(cwd, configPath);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new ConfigError(`ERRAND_CONFIG points to ${absolute}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${absolute} (ERRAND_CONFIG) is not valid JSON: ${String(error)}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new ConfigError(`invalid configuration file\n${formatIssues(parsed.error, absolute)}`);
  return parsed.data;
}

/**
 * The Temporal settings: `ERRAND_TEMPORAL_*` > `TEMPORAL_*` > the `temporal.toml` profile > the config file >
 * the local dev server (temporal-connection.ts); the HTTP API from `ERRAND_TEMPORAL_HTTP_URL` or the file.
 */
export function temporalSettings(env: NodeJS.ProcessEnv, file: z.infer<typeof temporalFileSchema> | undefined): TemporalSettings {
  let temporal: ReturnType<typeof temporalConnectionOptions>;
  let httpUrl: string | undefined;
  try {
    temporal = temporalConnectionOptions(env, {
      ...(file?.address ? { address: file.address } : {}),
      ...(file?.namespace ? { namespace: file.namespace } : {}),
    });
    httpUrl = temporalHttpUrl(env, file?.httpUrl, temporal.connection);
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : String(error));
  }
  return {
    address: temporal.connection.address,
    namespace: temporal.namespace,
    taskQueue: env.ERRAND_TASK_QUEUE ?? file?.taskQueue ?? 'errand',
    connection: temporal.connection,
    summary: temporal.summary,
    ...(httpUrl ? { httpUrl } : {}),
  };
}

/** The data directory: `ERRAND_DATA_DIR` > `dataDir` in the file > {@link defaultDataDir}, made absolute. */
export function dataDirSetting(env: NodeJS.ProcessEnv, cwd: string, fileValue: string | undefined): string {
  return resolve(cwd, env.ERRAND_DATA_DIR ?? fileValue ?? defaultDataDir(env));
}

/**
 * errand's default state folder: `$XDG_STATE_HOME/errand`, else `~/.local/state/errand` (the XDG base
 * directory rules). Never the current directory: that is where the model works by default, and the blob
 * store and the dev server's database must stay out of its reach.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, 'errand');
  return join(env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir(), '.local', 'state', 'errand');
}

/**
 * Only the sections a client reads are checked here; the rest of the file is the worker's and the API's
 * (loadConfig in config.ts checks all of it, strictly).
 */
const clientFileSchema = z.object({ temporal: temporalFileSchema.optional(), dataDir: dataDirFileSchema.optional() });

/** Reads and validates the client settings from the environment (and the file it names). */
export function loadClientConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ClientConfig {
  const file = readConfigFile(env, cwd, clientFileSchema);
  return { temporal: temporalSettings(env, file.temporal), dataDir: dataDirSetting(env, cwd, file.dataDir) };
}
