import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, keys, postJson } from './api-harness';
import { eventData, readEventStream, type ServerSentEvent } from '../support/sse-reader';
import { delegationPath, readStatus, startDelegation, startLiveStack, wordsText, type LiveStack } from './live-stack';

/**
 * `GET /v1/delegations/{id}/events` on the Node server, over real HTTP against the strict stand-in: the
 * events of a run (state, turn, tool, text, queued, settled) in order, the end of the stream at `settled`,
 * the tenant check, the bounded life of a connection and `Last-Event-ID` resuming without repeats or gaps.
 * The API's longest wait is 5 s here, so a connection lives 5 s.
 */

let live: LiveStack;
beforeAll(async () => {
  live = await startLiveStack({ ERRAND_API_MAX_WAIT_MS: '5000' });
});
afterAll(async () => {
  await live?.stop();
});

const eventsUrl = (id: string) => `${live.stack.url}${delegationPath(id, '/events')}`;
const auth = (key: string = keys.acme, lastEventId?: string): RequestInit => ({
  headers: { authorization: `Bearer ${key}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
});

/** Reads events, reconnecting with Last-Event-ID after each connection's end, until `settled`. */
async function readUntilSettled(id: string, seen: ServerSentEvent[] = []): Promise<{ connections: number; events: ServerSentEvent[] }> {
  const events: ServerSentEvent[] = [];
  let lastId: string | undefined;
  for (let connections = 1; connections <= 20; connections += 1) {
    const before = seen.length;
    // `stop` sees every event as it arrives; it only mirrors them into `seen` for a test that acts on them.
    const read = await readEventStream(eventsUrl(id), auth(keys.acme, lastId), {
      timeoutMs: 30_000,
      stop: (sofar) => {
        seen.splice(before, seen.length - before, ...sofar);
        return false;
      },
    });
    expect(read.status).toBe(200);
    events.push(...read.events);
    if (read.events.some((event) => event.event === 'settled')) return { connections, events };
    lastId = [...read.events].reverse().find((event) => event.id !== undefined)?.id ?? lastId;
  }
  throw new Error(`no settled event after 20 connections: ${JSON.stringify(events).slice(0, 2000)}`);
}

/** The text of one model call put together from its `text` events. */
function assembled(events: ServerSentEvent[], turn: number): string {
  return eventData(events, 'text').filter((data) => data.turn === turn).map((data) => String(data.delta)).join('');
}

describe('GET /v1/delegations/{id}/events', () => {
  it('streams the run: state, turns, the tool call, the text as it is written, then settled, and ends', async () => {
    const text = wordsText('river', 50);
    live.server.enqueue(
      // The first answer takes a moment, so the stream sees turn 1 before the tool call and turn 2.
      { text: 'Looking around.', toolCalls: [{ id: 'ls', name: 'developer__list_directory', arguments: { path: '.' } }], delayMs: 1_500 },
      { text, chunkDelayMs: 100 },
    );
    const id = await startDelegation(live.stack, { instructions: 'look, then write slowly' });

    const { events } = await readUntilSettled(id);
    const names = events.map((event) => event.event);

    expect(names[0]).toBe('state');
    expect(eventData(events, 'state')[0]).toEqual({ state: 'running' });
    expect(eventData(events, 'turn')).toEqual([{ turn: 1, maxTurns: 25 }, { turn: 2, maxTurns: 25 }]);
    expect(eventData(events, 'tool')).toEqual([{ name: 'developer__list_directory', argumentsPreview: '{"path":"."}', turn: 1, toolCalls: 1 }]);
    expect(names.indexOf('tool')).toBeLessThan(names.lastIndexOf('turn'));
    const written = assembled(events, 2);
    expect(written.length).toBeGreaterThan(0);
    expect(text.startsWith(written)).toBe(true);
    expect(eventData(events, 'text').every((data) => data.restart === undefined && data.gap === undefined)).toBe(true);
    expect(names[names.length - 1]).toBe('settled');
    expect(events[events.length - 1]?.id).toBe('settled');
    expect(eventData(events, 'settled')[0]).toMatchObject({ status: 'completed', output: text, turns: 2 });
    expect(eventData(events, 'state').map((data) => data.state)).toEqual(['running', 'completed']);
    expect(live.server.rejectedRequests).toEqual([]);
  });

  it('lives a bounded time; a client that reconnects with Last-Event-ID misses nothing and gets nothing twice', async () => {
    live.server.reset();
    const text = wordsText('mountain', 80);
    live.server.enqueue({ text, chunkDelayMs: 130 });
    const id = await startDelegation(live.stack, { instructions: 'write slowly for a long time' });

    const { connections, events } = await readUntilSettled(id);

    expect(connections).toBeGreaterThan(1);
    expect(eventData(events, 'state').map((data) => data.state)).toEqual(['running', 'completed']);
    expect(eventData(events, 'turn')).toEqual([{ turn: 1, maxTurns: 25 }]);
    const written = assembled(events, 1);
    expect(text.startsWith(written)).toBe(true);
    expect(written.length).toBeGreaterThan(0);
    expect(eventData(events, 'settled')[0]).toMatchObject({ status: 'completed', output: text });
  });

  it('answers a reconnect after settled with 204, and a stream for a finished run with its end at once', async () => {
    live.server.reset();
    live.server.enqueue({ text: 'quick answer' });
    const id = await startDelegation(live.stack, { instructions: 'answer at once' });
    await eventually(async () => ((await readStatus(live.stack, id)).state === 'completed' ? true : undefined));

    const fresh = await readEventStream(eventsUrl(id), auth());
    const after = await readEventStream(eventsUrl(id), auth(keys.acme, 'settled'));

    expect(fresh.events.map((event) => event.event)).toEqual(['state', 'settled']);
    expect(eventData(fresh.events, 'settled')[0]).toMatchObject({ status: 'completed', output: 'quick answer' });
    expect(fresh.retry).toBe(1000);
    expect(after.status).toBe(204);
  });

  it('reports a message queued during a turn and the state changes of a continuable delegation', async () => {
    live.server.reset();
    const text = wordsText('lake', 40);
    live.server.enqueue({ text, chunkDelayMs: 120 }, { text: 'second answer' });
    const id = await startDelegation(live.stack, { instructions: 'keep talking', continuable: true });
    const seen: ServerSentEvent[] = [];
    const reading = readUntilSettled(id, seen);
    const streamed = (name: string, check: (data: Record<string, unknown>) => boolean) => async () => (eventData(seen, name).some(check) ? true : undefined);

    await eventually(streamed('text', () => true), 20_000);
    const sent = await live.stack.request(delegationPath(id, '/messages'), postJson({ message: 'and then?' }));
    expect(sent.status).toBe(202);
    await eventually(streamed('state', (data) => data.state === 'waiting'), 30_000);
    await live.stack.request(delegationPath(id, '/cancel'), postJson({ reason: 'enough' }));
    const { events } = await reading;

    expect(eventData(events, 'queued')).toEqual([{ queuedMessages: 1 }]);
    expect(eventData(events, 'state').map((data) => data.state)).toEqual(['running', 'waiting', 'cancelled']);
    expect(eventData(events, 'settled')[0]).toMatchObject({ status: 'cancelled' });
  });

  it('is 404 for another tenant\'s delegation and for an unknown id, as every route', async () => {
    live.server.reset();
    live.server.enqueue({ text: 'mine' });
    const id = await startDelegation(live.stack, { instructions: 'a task of acme' });

    const others = await readEventStream(eventsUrl(id), auth(keys.globex));
    const unknown = await readEventStream(eventsUrl('errand-0000000000000000'), auth());
    const anonymous = await readEventStream(eventsUrl(id), {});

    expect(others.status).toBe(404);
    expect(others.contentType).toMatch(/^application\/problem\+json/);
    expect(unknown.status).toBe(404);
    expect(anonymous.status).toBe(401);
  });
});
