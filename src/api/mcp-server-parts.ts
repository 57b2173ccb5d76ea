/**
 * What an MCP request needs (the MCP SDK's server transport and errand's MCP server, which brings the MCP
 * SDK and ajv), gathered in one module that src/api/routes/mcp-routes.ts loads with `import()` at the first
 * MCP request: no other route, and no Lambda cold start, loads them (decision 0026).
 */
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
export { createErrandMcpServer, notifyNotices } from './mcp-session-server';
