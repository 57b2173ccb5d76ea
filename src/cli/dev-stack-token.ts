import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiConfig } from '../api/api-config';
import { hashApiKey } from '../api/auth-config';
import { devStackTokenBytes, devStackTokenFileName } from '../contracts/limits/api';

/**
 * `errand dev`'s API token. With no API keys configured, the dev stack's API still refuses every request
 * without it: a model's command that reaches the API's port (no sandbox, or a sandbox with network) would
 * otherwise act as the local user and, for one, approve its own pending `ask` call. The token is random
 * per start and sits only in errand's data directory (mode 0600), which a sandboxed command does not see;
 * the CLI reads it from there when it finds the stack.
 */

/** Where the token of the stack using `dataDir` lives. */
export function devStackTokenPath(dataDir: string): string {
  return join(dataDir, devStackTokenFileName);
}

/** Makes a new token and writes it (mode 0600, whole or not at all). Returns it and its path. */
export function createDevStackToken(dataDir: string): { token: string; path: string } {
  mkdirSync(dataDir, { recursive: true });
  const token = randomBytes(devStackTokenBytes).toString('hex');
  const path = devStackTokenPath(dataDir);
  const partial = `${path}.${process.pid}.tmp`;
  // Created with 0600 from the start: never readable by others, not even for a moment.
  const handle = openSync(partial, 'w', 0o600);
  try {
    writeSync(handle, `${token}\n`);
  } finally {
    closeSync(handle);
  }
  renameSync(partial, path);
  return { token, path };
}

/** The token of the stack using `dataDir`, if its file is there and readable. */
export function readDevStackToken(dataDir: string): string | undefined {
  try {
    const token = readFileSync(devStackTokenPath(dataDir), 'utf8').trim();
    return token === '' ? undefined : token;
  } catch {
    return undefined;
  }
}

/** Removes the token file if it still holds `token` (another `errand dev` may have replaced it). */
export function removeDevStackToken(dataDir: string, token: string): void {
  if (readDevStackToken(dataDir) === token) rmSync(devStackTokenPath(dataDir), { force: true });
}

/**
 * The dev stack's API settings: with authentication off (no keys configured), requests must carry the
 * token; configured API keys are kept as they are (they already authenticate every request).
 */
export function withDevStackToken(api: ApiConfig, token: string): ApiConfig {
  if (api.auth.mode !== 'off') return api;
  return { ...api, auth: { mode: 'stack-token', tenant: api.auth.tenant, sha256: hashApiKey(token) } };
}
