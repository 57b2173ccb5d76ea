import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { runCli } from '../../src/cli';
import { defaultModelAnswerMaxBytes } from '../../src/contracts/limits/llm';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { until } from '../support/polling';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { attack, startAttackStack, tenantKeys, type AttackStack } from './attack-stack';

/**
 * The attack suite: answers longer than Temporal's payload limit (2 MiB) but under errand's answer cap
 * (4 MiB), and a stream cut at that cap. Read back whole into the workflow's result, such a text failed the
 * delegation's last workflow task on every retry: the result never came, peek failed, and a cancel could not
 * end it (its result carried the same text). The whole text must reach the API's reader, by reference.
 */

const mib = 1024 * 1024;
/** Chunks of a size providers send for long answers (a few hundred thousand tiny events would only test the stand-in). */
const streamChunkChars = 16 * 1024;
const vendorModel = { provider: 'vendor', model: 'long-model' };
const roomyModel = { contextWindow: 4_000_000, maxOutputTokens: 2_000_000 };

/** A text of `chars` characters, different along its length (so a cut or a repeat shows). */
function longText(chars: number, label: string): string {
  const line = (index: number) => `${label} line ${index} of a very long answer, written to outgrow every payload limit.\n`;
  const parts: string[] = [];
  let length = 0;
  for (let index = 0; length < chars; index++) {
    const next = line(index);
    parts.push(next);
    length += next.length;
  }
  return parts.join('').slice(0, chars);
}

interface ResultAnswer {
  done: boolean;
  result?: { status: string; output: string; partialOutput: string; diagnostic?: string; outputCut?: boolean };
}

describe('answers longer than a workflow payload may be', () => {
  let stack: AttackStack;
  let vendor: ScriptedOpenAIServer;
  /** The vendor's answers by the marker the conversation holds, by the number of answers given before. */
  const scripts = new Map<string, (turn: number) => ScriptStep>();
  const script = (name: string, steps: ScriptStep[]): string => {
    const marker = `[attack:${name}:${randomBytes(4).toString('hex')}]`;
    scripts.set(marker, (turn) => steps[Math.min(turn, steps.length - 1)] ?? { text: 'done' });
    return marker;
  };

  beforeAll(async () => {
    vendor = await startScriptedOpenAIServer({
      contextWindow: roomyModel.contextWindow,
      streamChunkChars,
      responder: (request) => {
        const body = JSON.stringify(request.body);
        const messages = (request.body as { messages?: { role?: string }[] }).messages ?? [];
        for (const [marker, steps] of scripts) if (body.includes(marker)) return steps(messages.filter((message) => message.role === 'assistant').length);
        return undefined;
      },
    });
    stack = await startAttackStack({
      extraEnv: {
        // Models that may write a few MiB in one answer: only errand's answer cap stops them.
        ERRAND_PROVIDERS: JSON.stringify([
          { name: 'scripted', kind: 'scripted', models: ['scripted-model'] },
          { name: 'vendor', kind: 'openai-compatible', baseUrl: vendor.url, models: [{ id: 'long-model', ...roomyModel }], requestTimeoutMs: 60_000 },
        ]),
        ERRAND_MAX_OUTPUT_TOKENS: '1000000',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await vendor?.close();
  });

  const start = async (body: Record<string, unknown>): Promise<string> => {
    const started = await stack.request('/v1/delegations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = (await started.json()) as { id?: string };
    expect(started.status, JSON.stringify(answer)).toBe(201);
    return answer.id ?? '';
  };
  const result = (id: string) =>
    until(
      async () => (await (await stack.request(`/v1/delegations/${encodeURIComponent(id)}/result?wait=20s`)).json()) as ResultAnswer,
      (answer) => answer.done,
      `the result of ${id}`,
      60_000,
    );
  /** What the delegation's workflow history says went wrong in its workflow tasks (nothing, for a sound run). */
  const workflowTaskFailures = async (id: string): Promise<string[]> => {
    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    return (history.events ?? []).flatMap((event) => (event.workflowTaskFailedEventAttributes ? [event.workflowTaskFailedEventAttributes.failure?.message ?? 'a workflow task failed'] : []));
  };

  attack('answer 3 MiB, then 5 MiB, and cancel after a 3 MiB turn', async () => {
    // 3 MiB: under the answer cap, over the payload limit. It completes, and the API gives the whole text.
    const threeMiB = longText(3 * mib, 'three');
    const marker = script('three-mib', [{ text: threeMiB }]);
    const id = await start({ instructions: `Write everything down. ${marker}`, ...vendorModel });
    const answer = await result(id);
    expect(answer.result?.status, answer.result?.diagnostic).toBe('completed');
    expect(answer.result?.output.length).toBe(threeMiB.length);
    expect(answer.result?.output === threeMiB).toBe(true);
    expect(answer.result?.outputCut).toBeUndefined();
    expect(await workflowTaskFailures(id)).toEqual([]);
    // `errand result` prints it whole (it reads the same route).
    const printed: string[] = [];
    const io = { stdout: (text: string) => void printed.push(text), stderr: () => undefined, interactive: false };
    expect(await runCli(['result', id], io, { ERRAND_API_URL: stack.url, ERRAND_API_KEY: tenantKeys.acme }, stack.root)).toBe(0);
    expect(printed.join('') === `${threeMiB}\n` || printed.join('') === threeMiB).toBe(true);
    // Peek answers too (its last text is a preview).
    const described = (await (await stack.request(`/v1/delegations/${encodeURIComponent(id)}`)).json()) as { peek: { lastAssistantText: string | null } | null; peekError?: string };
    expect(described.peekError).toBeUndefined();
    expect(described.peek?.lastAssistantText?.startsWith('three line 0')).toBe(true);

    // 5 MiB from a provider: cut at the answer cap, the run ends truncated with the 4 MiB it read.
    const fiveMarker = script('five-mib', [{ text: longText(5 * mib, 'five') }]);
    const fiveId = await start({ instructions: `Write even more down. ${fiveMarker}`, ...vendorModel });
    const five = await result(fiveId);
    expect(five.result?.status).toBe('truncated');
    expect(five.result?.diagnostic).toContain('ERRAND_MODEL_ANSWER_MAX_BYTES');
    expect(five.result?.partialOutput.length).toBeGreaterThan(3 * mib);
    // The cap is checked as chunks arrive: at most one chunk past it.
    expect(five.result?.partialOutput.length).toBeLessThanOrEqual(defaultModelAnswerMaxBytes + streamChunkChars);
    expect(five.result?.partialOutput.startsWith('five line 0 ')).toBe(true);
    expect(await workflowTaskFailures(fiveId)).toEqual([]);

    // A 3 MiB turn that calls a slow tool, cancelled meanwhile: the cancel ends it, with the text as its partial output.
    const slowMarker = script('three-mib-then-cancel', [
      { text: threeMiB, toolCalls: [{ name: 'developer__run_command', arguments: { command: 'sleep 30' } }] },
      { text: 'never reached' },
    ]);
    const slowId = await start({ instructions: `Write it down, then wait. ${slowMarker}`, ...vendorModel });
    await until(
      async () => ((await (await stack.request(`/v1/delegations/${encodeURIComponent(slowId)}`)).json()) as { peek: { turns?: number; lastAssistantText?: string | null } | null }).peek,
      (peek) => peek?.lastAssistantText?.startsWith('three line 0') === true,
      'the 3 MiB turn',
      60_000,
    );
    const cancelled = await stack.request(`/v1/delegations/${encodeURIComponent(slowId)}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(cancelled.status).toBeLessThan(300);
    const ended = await result(slowId);
    expect(ended.result?.status).toBe('cancelled');
    expect(ended.result?.partialOutput === threeMiB).toBe(true);
    expect(await workflowTaskFailures(slowId)).toEqual([]);
  }, 240_000);
});
