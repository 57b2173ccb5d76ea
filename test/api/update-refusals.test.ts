import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdateRefused } from '../../src/api/queue-full';
import { updateRefusalProblem } from '../../src/api/update-refusal';
import { FailureType } from '../../src/contracts/failures';
import { callToolUpdate } from '../../src/contracts/mcp-session-messages';
import { approvalUpdate, sendMessageUpdate } from '../../src/contracts/subagent-messages';
import { eventually, json, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * Update validators refuse with a failure type (decision 0041), and the API answers by the type: input the
 * workflow finds invalid is 422, a full queue 429, a refusal for the workflow's state 409.
 */

/** The failure type of an update the workflow refused. */
async function refusalType(update: Promise<unknown>): Promise<string | undefined> {
  const error = await update.then(() => undefined, (failure: unknown) => failure);
  if (!(error instanceof WorkflowUpdateFailedError)) throw new Error(`expected a refused update, got ${String(error)}`);
  return error.cause instanceof ApplicationFailure ? error.cause.type ?? undefined : undefined;
}

describe('the API answer to a refused update, by type', () => {
  const cases: Array<{ type: string | undefined; status: number; kind: string; title: string }> = [
    { type: FailureType.invalidInput, status: 422, kind: 'invalid-input', title: 'The workflow refused the input' },
    { type: FailureType.messageQueueFull, status: 429, kind: 'limit-exceeded', title: 'Too many queued messages' },
    { type: FailureType.runEnded, status: 409, kind: 'conflict', title: 'The session has ended' },
    { type: FailureType.updateNotTaken, status: 409, kind: 'conflict', title: 'The message was not accepted' },
    { type: FailureType.approvalNotPending, status: 409, kind: 'conflict', title: 'The message was not accepted' },
    // A worker of an older build threw untyped errors (their type is "Error"): a conflict, as before.
    { type: 'Error', status: 409, kind: 'conflict', title: 'The message was not accepted' },
    { type: undefined, status: 409, kind: 'conflict', title: 'The message was not accepted' },
  ];
  for (const { type, status, kind, title } of cases) {
    it(`${type ?? 'no type'}: ${status}`, () => {
      const problem = updateRefusalProblem(new UpdateRefused('the words of the workflow', type), { conflict: 'The message was not accepted', ended: 'The session has ended' });
      expect({ status: problem.status, kind: problem.kind, title: problem.title, detail: problem.options.detail }).toEqual({ status, kind, title, detail: 'the words of the workflow' });
    });
  }
});

describe('refusals from real workflows', () => {
  let stack: ApiStack;
  beforeAll(async () => {
    stack = await startApiStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("a session's message of whitespace: InvalidInput from the validator, 422 from the API", async () => {
    const started = await stack.request('/v1/sessions', postJson({ label: 'refusals' }));
    expect(started.status).toBe(201);
    const { id } = (await json(started)) as { id: string };
    const handle = stack.client.workflow.getHandle(id);
    const refused = await stack.request(`/v1/sessions/${encodeURIComponent(id)}/messages`, postJson({ message: '   ' }));
    expect(refused.status).toBe(422);
    expect(await json(refused)).toMatchObject({ type: 'urn:errand:problem:invalid-input', title: 'The workflow refused the input', detail: 'message must be a non-empty string' });
    expect(await refusalType(handle.executeUpdate(sendMessageUpdate, { args: [{ message: '   ' }] }))).toBe(FailureType.invalidInput);

    // A session that is not an MCP session takes no tool calls; a decision for nothing pending is refused.
    expect(await refusalType(handle.executeUpdate(callToolUpdate, { args: [{ name: 'load', arguments: {} }] }))).toBe(FailureType.updateNotTaken);
    expect(await refusalType(handle.executeUpdate(approvalUpdate, { args: [{ approvalId: `${id}:1:0`, decision: 'approve' }] }))).toBe(FailureType.approvalNotPending);
    const decided = await stack.request(`/v1/approvals/${encodeURIComponent(`${id}:1:0`)}`, postJson({ decision: 'approve' }));
    expect(decided.status).toBe(409);
    expect(await json(decided)).toMatchObject({ type: 'urn:errand:problem:conflict', title: 'The approval is not pending', detail: expect.stringContaining(`no pending approval "${id}:1:0"`) });
    await handle.cancel();
  });

  it('a message to a delegation that is not continuable: UpdateNotTaken, 409 with the workflow\'s words', async () => {
    const started = await stack.request('/v1/delegations', postJson({ instructions: 'slow work' }));
    expect(started.status).toBe(201);
    const { id } = (await json(started)) as { id: string };
    const handle = stack.client.workflow.getHandle(id);
    await eventually(async () => ((await handle.describe()).status.name === 'RUNNING' ? true : undefined));
    expect(await refusalType(handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'more?' }] }))).toBe(FailureType.updateNotTaken);
    const sent = await stack.request(`/v1/delegations/${encodeURIComponent(id)}/messages`, postJson({ message: 'more?' }));
    expect(sent.status).toBe(409);
    expect(await json(sent)).toMatchObject({ type: 'urn:errand:problem:conflict', detail: expect.stringMatching(/^the delegation refused the message: .* is not continuable/) });
    await handle.cancel();
  });
});
