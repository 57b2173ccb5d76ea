import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalBlobStore } from '../../src/activities/blob-store';
import { ConversationStore } from '../../src/activities/conversation-store';
import { withWholeOutput } from '../../src/api/whole-output';
import { inlineTextLimit } from '../../src/contracts/limits/workflow';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { slimChildResult } from '../../src/domain/child-result';
import { structuredText } from '../../src/domain/final-output';

/**
 * The slim result a child gives its parent (SEMANTICS §4) and the whole output the API reads back from the
 * conversation store, for a child on the current code (slim) and one on code from before (whole).
 */

const conversationId = 'errand-parent/task-1@run';
const long = 'x'.repeat(inlineTextLimit) + ' and the end of it';

function result(overrides: Partial<SubagentResult>): SubagentResult {
  return {
    workflowId: 'errand-parent/task-1',
    status: 'completed',
    output: '',
    partialOutput: '',
    turns: 1,
    toolCalls: 0,
    usage: { inputTokens: 10, outputTokens: 5, costMicroUsd: 0, costUsd: 0 },
    durationMs: 100,
    ...overrides,
  };
}

describe('slimChildResult', () => {
  it('keeps a short result whole, structured copy included', () => {
    const short = result({ output: '{"a": 1}', outputRef: { conversationId, seq: 3 }, structured: { a: 1 } });
    expect(slimChildResult(short)).toEqual(short);
  });

  it('cuts a long output to a preview and leaves the whole text (and a structured copy) at its reference', () => {
    const slim = slimChildResult(result({ output: long, outputRef: { conversationId, seq: 3 }, structured: { text: long } }));
    expect(slim.output).toHaveLength(inlineTextLimit);
    expect(slim.output.endsWith('…')).toBe(true);
    expect(slim).toMatchObject({ outputCut: true, structuredCut: true, outputRef: { conversationId, seq: 3 } });
    expect(slim.structured).toBeUndefined();
  });

  it('treats a result that already holds a preview (outputCut) as long: its structured copy goes', () => {
    const slim = slimChildResult(result({ output: 'x'.repeat(100), outputCut: true, outputRef: { conversationId, seq: 3 }, structured: { text: long } }));
    expect(slim).toMatchObject({ output: 'x'.repeat(100), outputCut: true, structuredCut: true });
    expect(slim.structured).toBeUndefined();
  });

  it('a long partial output with no stored message (cut while the model wrote) stays a preview, not marked cut', () => {
    const slim = slimChildResult(result({ status: 'cancelled', partialOutput: long }));
    expect(slim.partialOutput).toHaveLength(inlineTextLimit);
    expect(slim.outputCut).toBe(false);
  });
});

describe('withWholeOutput', () => {
  let root = '';
  let blobs: LocalBlobStore;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'errand-child-result-'));
    blobs = new LocalBlobStore(root);
    const store = new ConversationStore(blobs);
    await store.append(conversationId, 0, { role: 'user', content: 'task' });
    await store.append(conversationId, 1, { role: 'assistant', content: long });
    await store.append(conversationId, 2, { role: 'assistant', content: structuredText({ text: long }) });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("reads a slim child's whole output back by its reference", async () => {
    const slim = slimChildResult(result({ output: long, outputRef: { conversationId, seq: 1 } }));
    const whole = await withWholeOutput(slim, blobs);
    expect(whole).toEqual(result({ output: long, outputRef: { conversationId, seq: 1 } }));
  });

  it('puts the partial output of a run that did not complete back in its place', async () => {
    const slim = slimChildResult(result({ status: 'max_turns', partialOutput: long, outputRef: { conversationId, seq: 1 } }));
    expect(await withWholeOutput(slim, blobs)).toEqual(result({ status: 'max_turns', partialOutput: long, outputRef: { conversationId, seq: 1 } }));
  });

  it('gives a structured result back its structured copy', async () => {
    const slim = slimChildResult(result({ output: structuredText({ text: long }), outputRef: { conversationId, seq: 2 }, structured: { text: long } }));
    const whole = await withWholeOutput(slim, blobs);
    expect(whole).toEqual(result({ output: structuredText({ text: long }), outputRef: { conversationId, seq: 2 }, structured: { text: long } }));
  });

  it('leaves the whole result of a child on code from before the slim result as it is', async () => {
    const full = result({ output: long, outputRef: { conversationId, seq: 1 } });
    expect(await withWholeOutput(full, blobs)).toEqual(full);
  });

  it('keeps the preview, still marked cut, when the message is missing from the store', async () => {
    const slim = slimChildResult(result({ output: long, outputRef: { conversationId, seq: 9 } }));
    expect(await withWholeOutput(slim, blobs)).toMatchObject({ output: slim.output, outputCut: true });
  });
});
