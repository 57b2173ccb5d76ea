import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, keys, postJson, startApiStack, type ApiStack } from './api-harness';
import { readEventStream } from '../support/sse-reader';

/**
 * Workflow runs end to end over the API (SEMANTICS §7): a worker runs workflowRunWorkflow, its agents are
 * delegations answered by the scripted model (`done: <task>`; a task with `slow` waits until cancelled).
 */

let stack: ApiStack;

beforeAll(async () => {
  stack = await startApiStack();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

type Status = { temporalStatus: string; view: { status: string; labels: { label: string; running: number; done: number }[]; agents: { label: string | null; fromJournal: boolean; state: string }[]; result?: unknown } | null; resumedFrom?: string };

async function status(id: string): Promise<Status> {
  const response = await stack.request(`/v1/workflows/${id}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Status;
}

function tasksAsked(): string[] {
  return stack.model.requests.map((request) => request.messages.find((message) => message.role === 'user')?.content ?? '');
}

describe('a workflow run over the API', () => {
  it('starts, shows its view by label, pauses, resumes and is cancelled with its running agent', async () => {
    const script = "await parallel([() => agent('a slow survey', { label: 'survey' })]);\nreturn await agent('after the survey', { label: 'after' });";
    const started = await stack.request('/v1/workflows', postJson({ script }));
    expect(started.status).toBe(201);
    const id = String((await json(started)).id);
    const running = await eventually(async () => {
      const now = await status(id);
      return now.view?.labels.find((label) => label.label === 'survey')?.running === 1 ? now : undefined;
    }, 30_000);
    expect(running).toMatchObject({ temporalStatus: 'RUNNING', view: { status: 'running' } });

    expect(await json(await stack.request(`/v1/workflows/${id}/pause`, { method: 'POST' }))).toEqual({ id, requested: true, temporalStatus: 'RUNNING' });
    await eventually(async () => ((await status(id)).view?.status === 'paused' ? true : undefined));
    const resumed = await stack.request(`/v1/workflows/${id}/resume`, { method: 'POST' });
    expect([resumed.status, await json(resumed)]).toEqual([202, { id, action: 'signalled' }]);
    await eventually(async () => ((await status(id)).view?.status === 'running' ? true : undefined));

    expect(await json(await stack.request(`/v1/workflows/${id}/cancel`, postJson({ reason: 'enough' })))).toEqual({ id, requested: true, temporalStatus: 'RUNNING' });
    const ended = await eventually(async () => {
      const now = await status(id);
      return now.temporalStatus !== 'RUNNING' ? now : undefined;
    }, 30_000);
    expect(ended.view?.status).toBe('cancelled');
    // The agent after the survey never started.
    expect(tasksAsked()).not.toContain('after the survey');
  });

  it('resumes an ended run with an edited script: the journaled agent is not run again', async () => {
    const first = await stack.request('/v1/workflows?wait=20s', postJson({ script: "const x = await agent('alpha task');\nconst y = await agent('beta task');\nreturn [x, y];" }));
    expect(first.status).toBe(201);
    const started = await json(first);
    expect(started.result).toMatchObject({ status: 'completed', result: ['done: alpha task', 'done: beta task'], agents: { done: 2, failed: 0, fromJournal: 0 } });
    const id = String(started.id);

    const resumed = await stack.request(`/v1/workflows/${id}/resume`, postJson({ script: "const x = await agent('alpha task');\nconst y = await agent('gamma task');\nreturn [x, y];" }));
    expect(resumed.status).toBe(201);
    const answer = await json(resumed);
    // Projected: only the new agent; the journal answers the other.
    expect(answer).toMatchObject({ id, action: 'started', projection: { agents: 1, complete: true } });
    expect(JSON.stringify(answer.projection)).toContain('resumes from a journal of 2 finished agents');
    const newId = String((answer.started as { id: string }).id);
    expect(newId).not.toBe(id);
    const done = await eventually(async () => {
      const now = await status(newId);
      return now.temporalStatus === 'COMPLETED' ? now : undefined;
    }, 30_000);
    expect(done.resumedFrom).toBe(id);
    expect(done.view?.result).toEqual(['done: alpha task', 'done: gamma task']);
    expect(tasksAsked().filter((task) => task === 'alpha task')).toHaveLength(1);
    expect(tasksAsked().filter((task) => task === 'gamma task')).toHaveLength(1);

    // The ended run's event stream: its view, then `ended` with the result, then the stream ends.
    const stream = await readEventStream(`${stack.url}/v1/workflows/${newId}/events`, { headers: { authorization: `Bearer ${keys.acme}` } }, { timeoutMs: 30_000 });
    expect([stream.status, stream.ended]).toEqual([200, true]);
    expect(stream.events.map((event) => event.event)).toEqual(['view', 'ended']);
    expect(JSON.parse(stream.events[1]?.data ?? '{}')).toMatchObject({ status: 'completed', result: ['done: alpha task', 'done: gamma task'] });
  });
});
