import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previewLength } from '../../src/contracts/limits/workflow';
import { asLiveText, type LiveText } from '../../src/contracts/live-text';
import { preview } from '../../src/domain/subagent-prompt';
import { eventually, json, postJson } from './api-harness';
import { awaitResult, delegationPath, readStatus, startDelegation, startLiveStack, watchStatus, wordsText, type LiveStack, type Partial } from './live-stack';

/**
 * Live output against the strict stand-in over HTTP (streamed answers through the real OpenAI-compatible
 * adapter), the real worker, dev server and API server: the model call's heartbeat details carry the text
 * written so far, the API's peek shows it as `partial` while the call runs and drops it when the answer is
 * in, a stream that breaks off is retried without the two attempts ever being shown as one text, and a
 * cancel mid-stream closes the connection to the vendor and keeps what was written as the partial output.
 */

let live: LiveStack;
beforeAll(async () => {
  live = await startLiveStack();
});
afterAll(async () => {
  await live?.stop();
});

/** The decoded heartbeat details of the pending model call, read the way the Web UI reads them (describe). */
async function pendingModelCallDetails(id: string): Promise<{ activityType: string; attempt: number; details: LiveText } | undefined> {
  const description = await live.stack.client.workflow.getHandle(id).describe();
  for (const pending of description.raw.pendingActivities ?? []) {
    const payloads = pending.heartbeatDetails?.payloads;
    if (!payloads || payloads.length === 0) continue;
    const values = await decodeArrayFromPayloads(live.stack.client.options.loadedDataConverter, payloads);
    const details = asLiveText(values[0]);
    if (details) return { activityType: pending.activityType?.name ?? '', attempt: pending.attempt ?? 0, details };
  }
  return undefined;
}

describe('the text a model call has written so far', () => {
  it('arrives as the heartbeat details of the pending model call, which the Web UI shows', async () => {
    const text = wordsText('north', 60);
    live.server.enqueue({ text, chunkDelayMs: 120 });
    const id = await startDelegation(live.stack, { instructions: 'write slowly about the north' });

    const pending = await eventually(() => pendingModelCallDetails(id), 20_000);

    expect(pending.activityType).toBe('modelTurn');
    expect(pending.details.turn).toBe(1);
    expect(pending.details.attempt).toBe(pending.attempt);
    expect(pending.details.partialText.length).toBeGreaterThan(0);
    expect(pending.details.partialText.length).toBeLessThan(text.length);
    expect(text.startsWith(pending.details.partialText)).toBe(true);
    expect(pending.details.chars).toBe(pending.details.partialText.length);
    expect(await awaitResult(live.stack, id)).toMatchObject({ status: 'completed', output: text });
    expect(live.server.rejectedRequests).toEqual([]);
  });

  it('is shown by the API peek as partial while the model writes, and replaced by the answer', async () => {
    const text = wordsText('east', 60);
    live.server.enqueue({ text, chunkDelayMs: 120 });
    const id = await startDelegation(live.stack, { instructions: 'write slowly about the east' });

    const seen = await watchStatus(live.stack, id, (status) => (status.peek?.partial?.chars ?? 0) >= 40);
    const partials = seen.map((status) => status.peek?.partial).filter((partial): partial is Partial => partial !== undefined);
    const writing = seen[seen.length - 1];

    expect(writing?.state).toBe('running');
    expect(writing?.peek?.lastAssistantText).toBeNull();
    expect(writing?.peek?.partial).toMatchObject({ turn: 1, attempt: 1 });
    for (const partial of partials) {
      expect(text.startsWith(partial.text)).toBe(true);
      expect(partial.chars).toBe(partial.text.length);
    }
    expect(partials.map((partial) => partial.chars)).toEqual([...partials.map((partial) => partial.chars)].sort((a, b) => a - b));
    expect(await awaitResult(live.stack, id)).toMatchObject({ status: 'completed', output: text });
    const after = await readStatus(live.stack, id);
    expect(after.peek?.partial).toBeUndefined();
    expect(after.peek?.lastAssistantText).toBe(preview(text, previewLength));
  });

  it('starts again after a stream that broke off is retried: the answer is the retry\'s, and no peek mixes the two', async () => {
    live.server.reset();
    const first = wordsText('broken', 40);
    const second = wordsText('retried', 40);
    live.server.enqueue({ text: first, breakAfterChars: 160, chunkDelayMs: 200 }, { text: second, chunkDelayMs: 150 });
    const id = await startDelegation(live.stack, { instructions: 'write, break off, write again' });

    const partials: Partial[] = [];
    const collect = (status: Awaited<ReturnType<typeof readStatus>>) => {
      if (status.peek?.partial) partials.push(status.peek.partial);
    };
    // Wait until each attempt has been seen writing, then until the end.
    (await watchStatus(live.stack, id, (status) => status.peek?.partial?.attempt === 1)).forEach(collect);
    (await watchStatus(live.stack, id, (status) => status.peek?.partial?.attempt === 2)).forEach(collect);
    (await watchStatus(live.stack, id, (status) => status.state !== 'running')).forEach(collect);
    const result = await awaitResult(live.stack, id);

    expect(result).toMatchObject({ status: 'completed', output: second });
    expect(live.server.requests.map((request) => request.broken)).toEqual([true, false]);
    expect(live.server.rejectedRequests).toEqual([]);
    for (const partial of partials) {
      // Each text shown is the start of one attempt's text, never a mixture; attempt 1 never past the break.
      expect([1, 2]).toContain(partial.attempt);
      expect((partial.attempt === 1 ? first.slice(0, 160) : second).startsWith(partial.text)).toBe(true);
      expect(partial.turn).toBe(1);
    }
    const after = await readStatus(live.stack, id);
    expect(after.peek?.partial).toBeUndefined();
    expect(after.peek?.lastAssistantText).toBe(preview(second, previewLength));
  });

  it('stops at a cancel: the vendor sees the client go, and what was written is the partial output', async () => {
    live.server.reset();
    const text = wordsText('west', 120);
    live.server.enqueue({ text, chunkDelayMs: 200 });
    const id = await startDelegation(live.stack, { instructions: 'write slowly about the west' });
    const seen = await watchStatus(live.stack, id, (status) => (status.peek?.partial?.chars ?? 0) >= 24);
    const shown = seen[seen.length - 1]?.peek?.partial?.text ?? '';

    const cancel = await live.stack.request(delegationPath(id, '/cancel'), postJson({ reason: 'seen enough' }));
    expect(cancel.status).toBe(202);
    const result = await awaitResult(live.stack, id);

    expect(result.status).toBe('cancelled');
    await live.server.waitFor((requests) => requests[0]?.aborted === true, 10_000, 'the streaming request to be aborted');
    expect(result.partialOutput.startsWith(shown)).toBe(true);
    expect(text.startsWith(result.partialOutput)).toBe(true);
    expect(result.partialOutput.length).toBeLessThan(text.length);
    expect(result.outputRef).toBeUndefined();
  });
});

describe('a session', () => {
  it('shows the text its model is writing in GET /v1/sessions/{id}', async () => {
    live.server.reset();
    const text = wordsText('south', 60);
    live.server.enqueue({ text, chunkDelayMs: 120 });
    const started = await json(await live.stack.request('/v1/sessions', postJson({ message: 'write slowly about the south' })));
    const id = String(started.id);

    const partial = await eventually(async () => {
      const body = await json(await live.stack.request(`/v1/sessions/${encodeURIComponent(id)}`));
      const peek = body.peek;
      const value = typeof peek === 'object' && peek !== null && 'partial' in peek ? peek.partial : undefined;
      return typeof value === 'object' && value !== null && 'text' in value && typeof value.text === 'string' && value.text.length > 0 ? value : undefined;
    }, 20_000);

    expect(partial).toMatchObject({ turn: 1 });
    expect(text.startsWith(String('text' in partial ? partial.text : ''))).toBe(true);
    await live.stack.request(`/v1/sessions/${encodeURIComponent(id)}/cancel`, postJson({}));
  });
});
