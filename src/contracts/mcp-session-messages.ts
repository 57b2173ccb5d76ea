import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { TextPart } from './agent-wire';
import type { AckNoticesInput, CallToolInput, CallToolResult } from './mcp-session';
import { messageNames } from './wire-names';

/**
 * The query and update of an MCP session workflow (mcp-session.ts), as the SDK's message definitions. Apart
 * from mcp-session.ts so that the API, which sends them by name (wire-names.ts), loads no SDK.
 */

/** The notices waiting for the client's next tool result (each a list of text parts), without taking them. */
export const pendingNoticesQuery = defineQuery<TextPart[][]>(messageNames.pendingNoticesQuery);

/** Runs one orchestration tool for an MCP session's client. */
export const callToolUpdate = defineUpdate<CallToolResult, [CallToolInput]>(messageNames.callToolUpdate);

/** The notices an MCP client got with a tool result, up to a number: the session drops them (mcp-session.ts). */
export const ackNoticesSignal = defineSignal<[AckNoticesInput]>(messageNames.ackNoticesSignal);
