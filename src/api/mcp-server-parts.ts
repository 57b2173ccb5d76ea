/**
 * What an MCP request needs (the MCP SDK's server transport and errand's MCP server, which brings the MCP
 * SDK and ajv), gathered in one module that src/api/routes/mcp-routes.ts loads with `import()` at the first
 * MCP request: no other route, and no Lambda cold start, loads them (decision 0026).
 */
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
export { createErrandMcpServer, notifyNotices } from './mcp-session-server';
// The 2026-07-28 revision (stateless, decision 0042): the MCP SDK's second generation serves it, and tells
// a 2025-11-25 request (which the first generation's transport above serves as before) from a 2026-07-28 one.
export { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
export type { McpHttpHandler } from '@modelcontextprotocol/server';
export { createStatelessErrandServer } from './mcp-stateless-server';
