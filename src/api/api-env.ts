/** Hono environment of the API: what middleware sets for handlers. */
export interface ApiEnv {
  Variables: {
    /** Tenant of the authenticated API key; every workflow the request touches must carry it. */
    tenant: string;
    /** The request body as text, read once by bufferRequestBody (request-body.ts); absent for GET. */
    bodyText: string;
  };
}
