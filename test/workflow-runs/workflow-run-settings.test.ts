import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { createBlobStore } from '../../src/activities/blob-store-factory';
import { delegateRequestOf } from '../../src/activities/workflow-agent-request';
import { journalDeltaMaxEntries, loadJournal, updateJournal } from '../../src/activities/workflow-journal-store';
import { loadConfig } from '../../src/settings/config';
import { withRunLimits } from '../../src/workflow-runs/workflow-run-start';
import { runCapCrossed } from '../../src/workflows/workflow-run-caps';

/** The settings, the request mapping, the caps and the journal store of workflow runs (decision 0038). */

describe('workflow run settings', () => {
  test('ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS and ERRAND_WORKFLOW_MAX_AGENTS have defaults and clear errors', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'errand-wf-settings-'));
    expect(loadConfig({ ERRAND_DATA_DIR: dataDir }).workflows).toEqual({ maxConcurrentAgents: 16, maxAgents: 1_000 });
    expect(loadConfig({ ERRAND_DATA_DIR: dataDir, ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS: '4', ERRAND_WORKFLOW_MAX_AGENTS: '50' }).workflows).toEqual({ maxConcurrentAgents: 4, maxAgents: 50 });
    expect(() => loadConfig({ ERRAND_DATA_DIR: dataDir, ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS: '0' })).toThrow(/ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS="0" is not valid: use a whole number from 1 to 1000 \(agents of one workflow run running at once\)/);
    expect(() => loadConfig({ ERRAND_DATA_DIR: dataDir, ERRAND_WORKFLOW_MAX_AGENTS: 'many' })).toThrow(/ERRAND_WORKFLOW_MAX_AGENTS="many" is not valid: use a whole number/);
  });

  test('a run asks for no more than the operator allows; absent means the operator value', () => {
    const limits = { maxConcurrentAgents: 16, maxAgents: 1_000 };
    expect(withRunLimits({}, limits)).toEqual({ concurrency: 16, maxAgents: 1_000 });
    expect(withRunLimits({ concurrency: 4, maxAgents: 10 }, limits)).toEqual({ concurrency: 4, maxAgents: 10 });
    expect(() => withRunLimits({ concurrency: 17 }, limits)).toThrow('concurrency must be a whole number from 1 to 16 (ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS); got 17');
    expect(() => withRunLimits({ maxAgents: 1.5 }, limits)).toThrow(/maxAgents must be a whole number from 1 to 1000/);
  });

  test("an agent() call becomes a delegate request; a bad option is named as the script wrote it", () => {
    expect(delegateRequestOf('Review it', { label: 'review', agentType: 'reviewer', model: 'openai/gpt-x', effort: 'high', schema: { type: 'object' }, phase: 'p' })).toEqual({
      ok: true,
      request: { instructions: 'Review it', description: 'review', source: 'reviewer', provider: 'openai', model: 'gpt-x', reasoning_effort: 'high', output_schema: { type: 'object' } },
    });
    // Claude Code's model aliases go through the operator's table; an unmapped one leaves the model to the defaults.
    expect(delegateRequestOf('Check it', { model: 'haiku' }, { haiku: 'anthropic/claude-haiku-x', opus: 'big' })).toEqual({ ok: true, request: { instructions: 'Check it', provider: 'anthropic', model: 'claude-haiku-x' } });
    expect(delegateRequestOf('Check it', { model: 'opus' }, { opus: 'big' })).toEqual({ ok: true, request: { instructions: 'Check it', model: 'big' } });
    expect(delegateRequestOf('Check it', { model: 'sonnet' }, {})).toEqual({ ok: true, request: { instructions: 'Check it' } });
    expect(delegateRequestOf('Do it', { isolation: 'container' })).toEqual({ ok: false, message: expect.stringMatching(/^agent\(\) options are not valid: isolation: expected "worktree"/) });
    expect(delegateRequestOf('Do it', { schema: 'object' })).toEqual({ ok: false, message: expect.stringMatching(/^agent\(\) options are not valid: schema: /) });
  });

  test('run caps name the cap that was crossed', () => {
    expect(runCapCrossed({ tokenBudget: 100 }, { tokens: 100, costMicroUsd: 0, now: 0, deadline: undefined })).toEqual({ cap: 'tokens', message: "the run's token budget (100 tokens) is spent: its agents used 100 tokens" });
    expect(runCapCrossed({ timeBudgetMs: 60_000 }, { tokens: 0, costMicroUsd: 0, now: 61_000, deadline: 60_000 })?.cap).toBe('time');
    expect(runCapCrossed({ costBudgetMicroUsd: 500_000 }, { tokens: 0, costMicroUsd: 499_999, now: 0, deadline: undefined })).toBeUndefined();
  });
});

describe('the journal by reference', () => {
  test('entries added and dropped survive folding into a new base; the first result under a key stays', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'errand-wf-journal-'));
    const blobs = createBlobStore(loadConfig({ ERRAND_DATA_DIR: dataDir }));
    let ref: string | null = null;
    for (let n = 0; n < journalDeltaMaxEntries * 2 + 5; n += 1) {
      ref = await updateJournal(blobs, ref, { [`key-${n}`]: { outcome: 'done', result: n, tokens: 1 } }, n === 10 ? ['key-3'] : []);
    }
    ref = await updateJournal(blobs, ref, { 'key-0': { outcome: 'done', result: 'second', tokens: 1 } }, []);
    const journal = await loadJournal(blobs, ref);
    expect(Object.keys(journal)).toHaveLength(journalDeltaMaxEntries * 2 + 4);
    expect(journal['key-0']).toEqual({ outcome: 'done', result: 0, tokens: 1 });
    expect(journal['key-3']).toBeUndefined();
    expect(journal['key-140']).toBeUndefined();
    expect(journal['key-132']).toEqual({ outcome: 'done', result: 132, tokens: 1 });
    // The same update again writes the same keys (an activity retried after a lost worker).
    expect(await updateJournal(blobs, null, { a: { outcome: 'failed', failure: { type: 'failed', message: 'm' } } }, [])).toBe(await updateJournal(blobs, null, { a: { outcome: 'failed', failure: { type: 'failed', message: 'm' } } }, []));
  });
});
