import { z } from 'zod';

/**
 * Bodies of `/v1/mcp` (MCP Streamable HTTP): JSON-RPC 2.0 messages, one or a batch. Only their envelope is
 * checked here; the MCP server checks each method's parameters and answers with JSON-RPC errors.
 */
const jsonRpcMessageSchema = z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string().optional() });

/** `POST /v1/mcp`: one JSON-RPC message or a batch. */
export const mcpRequestBodySchema = z.union([jsonRpcMessageSchema, z.array(jsonRpcMessageSchema).min(1)]);

/** What a session id looks like (`errand-` and 16 hex digits, as SessionService makes them). */
export const sessionIdPattern = /^errand-[0-9a-f]{16}$/;

/** The `Mcp-Session-Id` header: the session workflow's id. */
export const mcpSessionIdHeaderSchema = z
  .string()
  .regex(sessionIdPattern, 'must be a session id as the initialize answer gave it (errand- and 16 hex digits)')
  .optional();
