import type { WorkflowHandle } from '@temporalio/client';
import type { ChatMessage } from '../../src/contracts/model';

/** Reading what a test workflow did: its history's events and open timers, and the last user message a model saw. */

interface TimerEvent {
  eventType?: unknown;
  timerStartedEventAttributes?: { timerId?: string | null; startToFireTimeout?: { seconds?: unknown } | null } | null;
  timerFiredEventAttributes?: { timerId?: string | null } | null;
  timerCanceledEventAttributes?: { timerId?: string | null } | null;
}

/** Events of a workflow's current run, and the durations (ms) of its timers that have neither fired nor been cancelled. */
export async function historyWithTimers(handle: WorkflowHandle): Promise<{ events: number; types: string[]; openTimersMs: number[] }> {
  const history = await handle.fetchHistory();
  const events = (history.events ?? []) as TimerEvent[];
  const open = new Map<string, number>();
  for (const event of events) {
    const started = event.timerStartedEventAttributes;
    if (started?.timerId) open.set(started.timerId, Number(started.startToFireTimeout?.seconds ?? 0) * 1000);
    const ended = event.timerFiredEventAttributes?.timerId ?? event.timerCanceledEventAttributes?.timerId;
    if (ended) open.delete(ended);
  }
  return { events: events.length, types: events.map((event) => String(event.eventType)), openTimersMs: [...open.values()] };
}

/** The text of the last user message in a model request's messages ('' when there is none). */
export function lastUserText(messages: ChatMessage[]): string {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return last?.role === 'user' ? last.content : '';
}
