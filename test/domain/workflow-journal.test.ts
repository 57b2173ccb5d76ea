import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/content-hash';
import { agentCallKey, canonicalJson, createAgentCallKeys, journalWith, journalWithout } from '../../src/domain/workflow-journal';
import { runScriptToEnd } from '../support/workflow-script-rounds';

describe('content hash', () => {
  it('is SHA-256', () => {
    for (const text of ['', 'abc', 'é and 漢字 and 🙂', 'x'.repeat(55), 'y'.repeat(56), 'z'.repeat(64), 'w'.repeat(1000)]) {
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  });
});

describe('journal keys', () => {
  const call = { prompt: 'Review src/a.ts', options: { label: 'a', model: 'sonnet' }, agentDefinition: null };

  it('do not depend on the order of option keys', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    expect(agentCallKey(call, 0)).toBe(agentCallKey({ ...call, options: { model: 'sonnet', label: 'a' } }, 0));
  });

  it('change with the prompt, the options and the agent definition', () => {
    const key = agentCallKey(call, 0);
    expect(agentCallKey({ ...call, prompt: 'Review src/b.ts' }, 0)).not.toBe(key);
    expect(agentCallKey({ ...call, options: { label: 'a', model: 'opus' } }, 0)).not.toBe(key);
    expect(agentCallKey({ ...call, agentDefinition: '---\nname: reviewer\n---\nBe strict.' }, 0)).not.toBe(key);
    expect(agentCallKey({ ...call, agentDefinition: '---\nname: reviewer\n---\nBe kind.' }, 0)).not.toBe(
      agentCallKey({ ...call, agentDefinition: '---\nname: reviewer\n---\nBe strict.' }, 0),
    );
  });

  it('count calls with the same content, and only those', () => {
    const keyOf = createAgentCallKeys();
    const first = keyOf(call);
    const other = keyOf({ ...call, prompt: 'something else' });
    const second = keyOf(call);
    expect([first, second]).toEqual([agentCallKey(call, 0), agentCallKey(call, 1)]);
    expect(other).toBe(agentCallKey({ ...call, prompt: 'something else' }, 0));
    expect(new Set([first, second, other]).size).toBe(3);
  });

  it('keep the first result recorded and drop a restarted one', () => {
    const done = { outcome: 'done' as const, result: 'first', tokens: 1 };
    const journal = journalWith({}, 'k', done);
    expect(journalWith(journal, 'k', { outcome: 'done', result: 'second', tokens: 1 })).toEqual({ k: done });
    expect(journalWithout(journal, 'k')).toEqual({});
    expect(journalWithout(journal, 'missing')).toBe(journal);
  });
});

describe('a re-run against the journal', () => {
  // Ten agents in a chain of two stages: a review per file, then a summary of that review. The summary's
  // prompt holds the review's result, so it depends on it.
  const script = (edited: Record<number, string>) => `
const files = args.files;
const summaries = await pipeline(files,
  (file, _, i) => agent(${JSON.stringify(edited)}[i] ?? ('Review ' + file), { label: 'review ' + file }),
  (review, file) => agent('Summarise this review of ' + file + ': ' + review, { label: 'summary ' + file }),
);
const final = await agent('Combine: ' + summaries.join(' | '), { label: 'final' });
return { summaries, final };
`;
  const files = ['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts'];
  const answer = (request: { prompt: string }) => ({ result: `answer to <${request.prompt}>` });

  it('runs nothing again when the script did not change', async () => {
    const first = await runScriptToEnd(script({}), answer, { args: { files } });
    expect(first.output.status).toBe('done');
    expect(first.ran).toHaveLength(11);
    const again = await runScriptToEnd(script({}), answer, { args: { files }, journal: first.journal });
    expect(again.ran).toEqual([]);
    expect(again.output).toEqual(first.output);
  });

  it('after an edit of two prompts runs exactly the edited agents and those that depend on them', async () => {
    const first = await runScriptToEnd(script({}), answer, { args: { files } });
    const edited = await runScriptToEnd(script({ 1: 'Review b.ts for races', 3: 'Review d.ts for leaks' }), answer, {
      args: { files },
      journal: first.journal,
    });
    expect(edited.output.status).toBe('done');
    // The two edited reviews, the two summaries whose prompts hold their results, and the final agent
    // whose prompt holds every summary; the other three reviews and summaries come from the journal.
    expect(edited.ran.map((request) => request.options['label'])).toEqual(['review b.ts', 'review d.ts', 'summary b.ts', 'summary d.ts', 'final']);
  });

  it('after a failure runs the failed agent again only once its entry is dropped, and the script can catch it', async () => {
    let failB = true;
    const flaky = (request: { prompt: string }) =>
      failB && request.prompt === 'Review b.ts' ? { failure: 'the model server went away' } : answer(request);
    const caught = `
const results = [];
for (const file of args.files) {
  try {
    results.push(await agent('Review ' + file, { label: file }));
  } catch (error) {
    results.push('failed: ' + error.message);
  }
}
return results;
`;
    const first = await runScriptToEnd(caught, flaky, { args: { files } });
    expect(first.output).toMatchObject({ status: 'done', result: expect.arrayContaining(['failed: the model server went away']) });
    failB = false;
    const failedKey = first.ran.find((request) => request.prompt === 'Review b.ts')!.key;
    const resumed = await runScriptToEnd(caught, flaky, { args: { files }, journal: journalWithout(first.journal, failedKey) });
    expect(resumed.ran.map((request) => request.prompt)).toEqual(['Review b.ts']);
    expect(resumed.output).toMatchObject({ status: 'done', result: files.map((file) => `answer to <Review ${file}>`) });
  });
});
