import type { ErrandLogger } from '../observability/json-logger';
import { isApiProblem } from './problem';

/** What an MCP client's model reads when a tool call failed for a reason that is errand's own business. */
export const mcpToolFailureText = 'errand could not run the tool; the failure was logged';

/**
 * Why a tool call failed, as an MCP client reads it: an {@link ApiProblem}'s title and detail (written for
 * clients: the session ended, the call was refused and why), and for anything else (a Temporal or store
 * error, whose text names settings, addresses or an upstream body) a plain sentence, with the error logged.
 */
export function describeToolFailure(error: unknown, log: Pick<ErrandLogger, 'error'>, context: Record<string, unknown>): string {
  if (isApiProblem(error)) return error.message;
  log.error('MCP tool call failed', { ...context, error });
  return mcpToolFailureText;
}
