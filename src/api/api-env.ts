/** Hono environment of the API: what middleware sets for handlers. */
export interface ApiEnv {
  Variables: {
    /** Tenant of the authenticated API key; every workflow the request touches must carry it. */
    tenant: string;
  };
}
