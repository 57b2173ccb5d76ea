import path from 'node:path';
import type { ApiAuth } from './api-config';

/**
 * Where a tenant's API-started delegations and sessions work. The API runs where the workers' disk may not
 * be (a Lambda), so it does not rely on that disk: it joins names onto the configured working root,
 * which the operator sets to the workers' mount path. The worker creates the folder on first use and
 * confines every tool to it (src/tools/confine-path.ts).
 */

/**
 * The working directory of a tenant: `<working root>/<tenant>`. With authentication off (or `errand dev`'s
 * stack token) there is one local user, who works in the root itself (`errand dev` in a project works on that project).
 */
export function tenantWorkingDir(workingRoot: string, auth: ApiAuth, tenant: string): string {
  return auth.mode === 'keys' ? path.posix.join(workingRoot, tenant) : workingRoot;
}

/**
 * A request's `working_dir`, joined lexically onto the tenant's folder: a relative path without `..`.
 * Whether it exists is the worker's business (a missing folder inside the tenant's is made there).
 * Messages name only what the caller sent, never a server path.
 */
export function joinRequestedWorkingDir(tenantDir: string, requested: string): { ok: true; path: string } | { ok: false; message: string } {
  const valid = 'use a relative path inside your working directory, such as "services/api"';
  if (requested.includes('\0')) return { ok: false, message: `working_dir contains a NUL character; ${valid}` };
  if (path.posix.isAbsolute(requested) || path.win32.isAbsolute(requested)) return { ok: false, message: `working_dir "${requested}" is absolute; ${valid}` };
  if (requested.split(/[\\/]/).includes('..')) return { ok: false, message: `working_dir "${requested}" contains "..", which could leave your working directory; ${valid}` };
  return { ok: true, path: path.posix.join(tenantDir, requested) };
}
