import { describe, expect, it } from 'vitest';
import { describeToolFailure, mcpToolFailureText } from '../../src/api/mcp-tool-failure';
import { ApiProblem, ProblemKind } from '../../src/api/problem';
import { TemporalCallError } from '../../src/api/temporal-gateway';

/** What an MCP client's model reads of a failed tool call (review finding 10: no internal error text). */

function recorder(): { log: { error(message: string, meta?: Record<string, unknown>): void }; logged: Array<{ message: string; meta?: Record<string, unknown> }> } {
  const logged: Array<{ message: string; meta?: Record<string, unknown> }> = [];
  return { log: { error: (message, meta) => logged.push({ message, ...(meta ? { meta } : {}) }) }, logged };
}

describe('describeToolFailure', () => {
  it('passes an ApiProblem\'s title and detail through, and logs nothing', () => {
    const { log, logged } = recorder();
    const problem = new ApiProblem(409, ProblemKind.conflict, 'The session has ended', { detail: 'session errand-0123456789abcdef takes no more tool calls' });
    expect(describeToolFailure(problem, log, { tenant: 'acme' })).toBe('The session has ended: session errand-0123456789abcdef takes no more tool calls');
    expect(logged).toEqual([]);
  });

  it('says only that the call failed for anything else (a Temporal error naming its address and an upstream body), and logs it', () => {
    const { log, logged } = recorder();
    const internal = new TemporalCallError("Temporal's HTTP API (http://10.0.0.7:7243, ERRAND_TEMPORAL_HTTP_URL) answered 502: <html>upstream</html>", 14);
    const text = describeToolFailure(internal, log, { tenant: 'acme', sessionId: 'errand-0123456789abcdef' });
    expect(text).toBe(mcpToolFailureText);
    expect(text).not.toContain('10.0.0.7');
    expect(logged).toEqual([{ message: 'MCP tool call failed', meta: { tenant: 'acme', sessionId: 'errand-0123456789abcdef', error: internal } }]);
  });
});
