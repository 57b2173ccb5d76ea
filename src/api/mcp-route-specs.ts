import { z } from 'zod';
import { emptyPathSchema, emptyQuerySchema } from '../contracts/api';
import { mcpRequestBodySchema, mcpSessionIdHeaderSchema } from '../contracts/mcp-api';
import { defineRoute } from './route-spec';

/** The routes of errand's MCP endpoint (Streamable HTTP, SEMANTICS §6); listed in route-table.ts's `apiRoutes`. */

const sessionHeader = {
  'Mcp-Session-Id': {
    schema: mcpSessionIdHeaderSchema,
    description: 'The MCP session (a session workflow of this API key\'s tenant), from the `Mcp-Session-Id` header of the initialize answer.',
  },
};

/** `POST /v1/mcp`. */
export const mcpPostRoute = defineRoute({
  method: 'post',
  path: '/v1/mcp',
  operationId: 'mcpMessage',
  summary: 'MCP (Streamable HTTP): send a JSON-RPC message',
  description:
    'errand\'s orchestration tools (load, delegate, send_message, list_subagent_models) for an MCP client. An `initialize` without ' +
    '`Mcp-Session-Id` starts a session workflow whose id comes back in the `Mcp-Session-Id` header; with the header it reconnects ' +
    'to that session and its tasks. Every other message needs the header. Answers are JSON (no event stream). A tool call waits ' +
    'at most ERRAND_API_MAX_WAIT_MS and then answers that it is still running; a delegate or send_message sent again with the same ' +
    'JSON-RPC id and arguments is the same call. A request of MCP revision 2026-07-28 (its version in `_meta`, no initialize, no ' +
    'session header; decision 0042) is answered statelessly: its session is the `session` tool argument or `_meta["errand/session"]`, ' +
    'and the Tasks extension (`tasks/get`, `tasks/update`, `tasks/cancel`) and progress notifications are served (docs/mcp.md).',
  tag: 'mcp',
  authenticated: true,
  params: emptyPathSchema,
  query: emptyQuerySchema,
  body: { schema: mcpRequestBodySchema, required: true, description: 'A JSON-RPC 2.0 message or batch (MCP).' },
  headers: sessionHeader,
  responses: {
    200: { description: 'The JSON-RPC answer, as JSON; at 2025-11-25 a foreground `delegate` or `run_workflow` that asked for progress (`_meta.progressToken`, `Accept: text/event-stream`) is answered as a `text/event-stream` of `notifications/progress` and then the answer (not behind API Gateway + Lambda).', schema: z.unknown() },
    202: { description: 'A notification or response was accepted.', empty: true },
    400: { description: 'Not a JSON-RPC message (a JSON-RPC parse error), or a message other than initialize without `Mcp-Session-Id`.', orJsonRpcError: true },
    401: { description: 'Missing or invalid API key.' },
    404: { description: 'No such running MCP session for this API key: initialize a new one.' },
    406: { description: 'The Accept header names types, and not both application/json and text/event-stream (no Accept takes any answer).', orJsonRpcError: true },
    413: { description: 'The request body is larger than the configured limit.' },
    415: { description: 'The body is not application/json.' },
    429: { description: 'An initialize without `Mcp-Session-Id` while this tenant already runs the most MCP sessions the server allows (`ERRAND_API_MAX_MCP_SESSIONS`).' },
    503: { description: 'Temporal cannot be reached, or this server has no model provider configured.' },
  },
});

/** `GET /v1/mcp`. */
export const mcpStreamRoute = defineRoute({
  method: 'get',
  path: '/v1/mcp',
  operationId: 'mcpNotificationStream',
  summary: 'MCP (Streamable HTTP): the server-to-client stream (notices)',
  description:
    'For an MCP client that listens: a `text/event-stream` on which each notice of a background or continuable task of the session ' +
    'arrives as an MCP logging notification (`notifications/message`, level `notice`, logger `errand`) as soon as the server sees it ' +
    '(it looks every few seconds). The notice still comes with the next tool result, which is what a model reads. The stream closes ' +
    'after the server\'s longest wait (ERRAND_API_MAX_WAIT_MS) and the client opens it again. A tenant may hold ' +
    'ERRAND_API_MAX_EVENT_STREAMS of these streams open at once (429 past it). Node server only: behind API Gateway + Lambda it answers ' +
    '405, which tells an MCP client there is no stream (responses are buffered there).',
  tag: 'mcp',
  authenticated: true,
  params: emptyPathSchema,
  query: emptyQuerySchema,
  headers: sessionHeader,
  responses: {
    200: {
      description: 'The stream of JSON-RPC notifications.',
      contentType: 'text/event-stream',
      events: {
        message: {
          data: z.object({ jsonrpc: z.literal('2.0'), method: z.string(), params: z.unknown() }).loose(),
          description: 'A JSON-RPC notification: `notifications/message` with a notice of a task of the session (`params.data`).',
        },
      },
    },
    400: { description: 'No `Mcp-Session-Id` header.' },
    401: { description: 'Missing or invalid API key.' },
    404: { description: 'No such running MCP session for this API key.' },
    405: { description: 'Served by the Lambda behind API Gateway, which buffers responses: notices come with tool results only.' },
    406: { description: 'The Accept header does not take text/event-stream.' },
    429: { description: 'This tenant already holds the most open streams the server allows (`ERRAND_API_MAX_EVENT_STREAMS`).' },
    503: { description: 'Temporal cannot be reached.' },
  },
});

/** `DELETE /v1/mcp`. */
export const mcpDeleteRoute = defineRoute({
  method: 'delete',
  path: '/v1/mcp',
  operationId: 'mcpEndSession',
  summary: 'MCP (Streamable HTTP): end the session',
  description: 'Ends the MCP session: its session workflow is cancelled, and every live task under it.',
  tag: 'mcp',
  authenticated: true,
  params: emptyPathSchema,
  query: emptyQuerySchema,
  headers: sessionHeader,
  responses: {
    204: { description: 'The session is cancelling.', empty: true },
    400: { description: 'No `Mcp-Session-Id` header.' },
    401: { description: 'Missing or invalid API key.' },
    404: { description: 'No such running MCP session for this API key.' },
    503: { description: 'Temporal cannot be reached.' },
  },
});
