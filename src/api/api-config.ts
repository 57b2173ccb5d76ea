import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultApiMaxBodyBytes, defaultApiMaxEventStreamsPerTenant, defaultApiMaxMcpSessionsPerTenant, defaultApiMaxWaitMs, defaultApiPort } from '../contracts/limits/api';
import { intFromEnv } from '../settings/client-config';
import { isLoopbackHost } from '../settings/loopback-host';
import { parseApiKeys, tenantSchema, type ApiKeyEntry } from './auth-config';

/**
 * Configuration of the HTTP API, read from the environment once at start (the rest of errand's settings
 * come from `src/settings/config.ts`). Every error names the setting and what would be valid.
 */

/** How requests are authenticated. */
export type ApiAuth =
  | { mode: 'keys'; keys: ApiKeyEntry[] }
  /** Local development only: no keys, every request runs as one tenant. */
  | { mode: 'off'; tenant: string }
  /**
   * `errand dev`'s API: one local user, like `off`, but every request must carry the stack's own token
   * (`Authorization: Bearer <token>`; its SHA-256 here), so a model's command that reaches the port
   * cannot act on the API (src/cli/dev-stack-token.ts).
   */
  | { mode: 'stack-token'; tenant: string; sha256: string };

/** The API's settings. */
export interface ApiConfig {
  auth: ApiAuth;
  /** Largest request body in bytes; larger is 413. */
  maxBodyBytes: number;
  /** Longest `?wait=` honoured, in milliseconds. */
  maxWaitMs: number;
  /** Most open event streams per tenant (`ERRAND_API_MAX_EVENT_STREAMS`); past it a 429. */
  maxEventStreamsPerTenant: number;
  /** Most running MCP sessions per tenant (`ERRAND_API_MAX_MCP_SESSIONS`); past it an `initialize` is a 429. */
  maxMcpSessionsPerTenant: number;
  /** Node server: interface and port. */
  host: string;
  port: number;
}

/** The tenant requests run as when auth is off. */
export const localTenant = 'local';

/** Options of {@link loadApiConfig}. */
export interface LoadApiConfigOptions {
  /**
   * Treat "no keys configured" as auth off even without `ERRAND_API_AUTH=off` (`errand dev` and the CLI's
   * direct mode: both only ever serve the local user).
   */
  localDefault?: boolean;
}

/**
 * Refuses to serve without authentication on an interface other machines can reach: with auth off every
 * request runs as one tenant, and its delegations run commands on the worker.
 */
export function assertAuthOnLoopback(auth: ApiAuth, host: string, hostSetting: string): void {
  if (auth.mode === 'off' && !isLoopbackHost(host)) {
    throw new Error(
      `${hostSetting}=${host} would serve the API without authentication to other machines; authentication may be off only on a loopback address (127.0.0.1, ::1, localhost). ` +
        'Configure API keys (ERRAND_API_KEYS or ERRAND_API_KEYS_FILE; `errand api-key <tenant>` makes one) or listen on 127.0.0.1',
    );
  }
}

/** Reads the API settings from the environment. Throws when auth is neither configured nor explicitly off. */
export function loadApiConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd(), options: LoadApiConfigOptions = {}): ApiConfig {
  let keys: ApiKeyEntry[] = [];
  const inline = env.ERRAND_API_KEYS;
  const file = env.ERRAND_API_KEYS_FILE;
  if (inline && file) throw new Error('both ERRAND_API_KEYS and ERRAND_API_KEYS_FILE are set: keep one of them');
  if (inline) keys = parseApiKeys(inline, 'ERRAND_API_KEYS');
  if (file) {
    const path = resolve(cwd, file);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new Error(`ERRAND_API_KEYS_FILE points to ${path}, which cannot be read (${error instanceof Error ? error.message : String(error)})`);
    }
    keys = parseApiKeys(text, `ERRAND_API_KEYS_FILE (${path})`);
  }

  const authSetting = env.ERRAND_API_AUTH;
  if (authSetting !== undefined && authSetting !== '' && authSetting !== 'off' && authSetting !== 'keys') {
    throw new Error(`ERRAND_API_AUTH="${authSetting}" is not valid: use "keys" (the default) or "off" (local development, no keys)`);
  }
  let auth: ApiAuth;
  if (keys.length > 0) {
    if (authSetting === 'off') throw new Error('ERRAND_API_AUTH=off, but API keys are configured (ERRAND_API_KEYS / ERRAND_API_KEYS_FILE): unset one of them');
    auth = { mode: 'keys', keys };
  } else if (authSetting === 'off' || (options.localDefault && authSetting !== 'keys')) {
    const tenant = env.ERRAND_LOCAL_TENANT ?? localTenant;
    const parsed = tenantSchema.safeParse(tenant);
    if (!parsed.success) throw new Error(`ERRAND_LOCAL_TENANT="${tenant}" is not valid: ${parsed.error.issues[0]?.message ?? 'invalid tenant'}`);
    auth = { mode: 'off', tenant: parsed.data };
  } else {
    throw new Error(
      'no API keys are configured: set ERRAND_API_KEYS to a JSON array of {"tenant": "...", "sha256": "<sha256 hex of the key>"} ' +
        '(or ERRAND_API_KEYS_FILE to a file holding it; `errand api-key <tenant>` makes one), ' +
        'or set ERRAND_API_AUTH=off to run without authentication for local development (every request runs as tenant "local")',
    );
  }

  const host = env.ERRAND_API_HOST ?? '127.0.0.1';
  assertAuthOnLoopback(auth, host, 'ERRAND_API_HOST');
  return {
    auth,
    maxBodyBytes: intFromEnv(env, 'ERRAND_API_MAX_BODY_BYTES', 1_024, 64 * 1024 * 1024) ?? defaultApiMaxBodyBytes,
    maxWaitMs: intFromEnv(env, 'ERRAND_API_MAX_WAIT_MS', 0, 15 * 60_000) ?? defaultApiMaxWaitMs,
    maxEventStreamsPerTenant: intFromEnv(env, 'ERRAND_API_MAX_EVENT_STREAMS', 1, 100_000) ?? defaultApiMaxEventStreamsPerTenant,
    maxMcpSessionsPerTenant: intFromEnv(env, 'ERRAND_API_MAX_MCP_SESSIONS', 1, 100_000) ?? defaultApiMaxMcpSessionsPerTenant,
    host,
    port: intFromEnv(env, 'ERRAND_API_PORT', 0, 65_535) ?? defaultApiPort,
  };
}
