import { z } from 'zod';
import { delegationStateSchema, subagentResultSchema } from './delegation-api';

/**
 * The events of `GET /v1/delegations/{id}/events` (a `text/event-stream`), as the OpenAPI document
 * describes them: each has an `event:` name and one JSON object as its `data:`. They are produced by
 * src/domain/live-events.ts (state, turn, tool, text, queued) and src/api/delegation-event-stream.ts
 * (settled, error).
 */

/** One kind of event: the JSON of its `data:` and what it means. */
export interface EventSpec {
  data: z.ZodType;
  description: string;
}

/** Every event a delegation's stream sends, by name. */
export const delegationEvents: Record<string, EventSpec> = {
  state: { data: z.object({ state: delegationStateSchema }), description: 'The delegation changed state.' },
  turn: { data: z.object({ turn: z.number().int(), maxTurns: z.number().int() }), description: 'A model call started.' },
  tool: {
    data: z.object({ name: z.string(), argumentsPreview: z.string(), turn: z.number().int(), toolCalls: z.number().int() }),
    description: 'The last of its new tool calls.',
  },
  text: {
    data: z.object({
      turn: z.number().int(),
      attempt: z.number().int(),
      delta: z.string().describe('New text, to append to what this model call wrote before.'),
      chars: z.number().int().describe('Characters this model call has written so far.'),
      restart: z.literal(true).optional().describe('The call was retried: drop its earlier text, it starts again.'),
      gap: z.literal(true).optional().describe('Some text before this piece is not available.'),
    }),
    description: 'Text the model is writing now.',
  },
  queued: { data: z.object({ queuedMessages: z.number().int() }), description: 'Messages wait for the delegation.' },
  settled: { data: subagentResultSchema, description: 'The result, as GET …/result returns it; the stream ends after it (its id is `settled`).' },
  error: { data: z.object({ detail: z.string() }), description: 'The stream failed after it had started; reconnect with Last-Event-ID.' },
};
