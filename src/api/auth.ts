import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { ApiAuth } from './api-config';
import type { ApiEnv } from './api-env';
import { ApiProblem, ProblemKind } from './problem';

/**
 * Bearer API key authentication. The key is hashed and compared, in constant time, with every configured
 * hash; the matching entry's tenant is set on the request. A missing or unknown key is a 401 that says
 * nothing about which keys or tenants exist.
 */

function unauthorized(detail: string): ApiProblem {
  return new ApiProblem(401, ProblemKind.unauthorized, 'Authentication required', {
    detail,
    headers: { 'www-authenticate': 'Bearer realm="errand"' },
  });
}

/** The tenant of a presented key, or undefined. Compares against every entry so timing reveals nothing. */
export function tenantForKey(auth: ApiAuth & { mode: 'keys' }, key: string): string | undefined {
  const presented = createHash('sha256').update(key, 'utf8').digest();
  let tenant: string | undefined;
  for (const entry of auth.keys) {
    if (timingSafeEqual(presented, Buffer.from(entry.sha256, 'hex')) && tenant === undefined) tenant = entry.tenant;
  }
  return tenant;
}

/** Whether a presented key hashes to `sha256` (compared in constant time). */
function matchesHash(key: string, sha256: string): boolean {
  return timingSafeEqual(createHash('sha256').update(key, 'utf8').digest(), Buffer.from(sha256, 'hex'));
}

/** Middleware that sets `tenant` from the Authorization header (or the local tenant when auth is off; with the stack token, once it is shown). */
export function authenticate(auth: ApiAuth): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (auth.mode === 'off') {
      c.set('tenant', auth.tenant);
      await next();
      return;
    }
    const header = c.req.header('authorization');
    if (header === undefined) throw unauthorized('send an API key as "Authorization: Bearer <key>"');
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    const key = match?.[1];
    if (key === undefined) throw unauthorized('the Authorization header must be "Bearer <key>"');
    const tenant = auth.mode === 'stack-token' ? (matchesHash(key, auth.sha256) ? auth.tenant : undefined) : tenantForKey(auth, key);
    if (tenant === undefined) throw unauthorized('the API key is not valid');
    c.set('tenant', tenant);
    await next();
  };
}
