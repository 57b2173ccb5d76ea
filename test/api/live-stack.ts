import { z } from 'zod';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { eventually, json, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * The API stack of the live-output tests: the API server, a worker and the dev server as always, with the
 * model vendor the scripted HTTP server (strict, streamed) as the default provider `standin`, so a model
 * call streams through the real OpenAI-compatible adapter and a client disconnect is seen by the server.
 */
export interface LiveStack {
  stack: ApiStack;
  server: ScriptedOpenAIServer;
  stop(): Promise<void>;
}

/** Starts the stack; `extraEnv` is more API and worker configuration. */
export async function startLiveStack(extraEnv: NodeJS.ProcessEnv = {}): Promise<LiveStack> {
  const server = await startScriptedOpenAIServer();
  const stack = await startApiStack({
    extraEnv: {
      ERRAND_PROVIDERS: JSON.stringify([
        { name: 'standin', kind: 'openai-compatible', baseUrl: server.url, models: ['standin-model'] },
        { name: 'scripted', kind: 'scripted', models: ['scripted-model'] },
      ]),
      ...extraEnv,
    },
  });
  return {
    stack,
    server,
    async stop() {
      await stack.stop();
      await server.close();
    },
  };
}

/** A recognisable text of `count` numbered words, e.g. `north-1 north-2 …`. */
export function wordsText(tag: string, count: number): string {
  return Array.from({ length: count }, (_, index) => `${tag}-${index + 1}`).join(' ');
}

/** The API path of a delegation. */
export const delegationPath = (id: string, suffix = ''): string => `/v1/delegations/${encodeURIComponent(id)}${suffix}`;

/** Starts a delegation through the API and returns its id. */
export async function startDelegation(stack: ApiStack, body: Record<string, unknown>): Promise<string> {
  const response = await stack.request('/v1/delegations', postJson(body));
  const answer = await json(response);
  if (response.status !== 201 || typeof answer.id !== 'string') throw new Error(`the delegation did not start: ${response.status} ${JSON.stringify(answer)}`);
  return answer.id;
}

const partialSchema = z.object({ text: z.string(), chars: z.number(), turn: z.number(), attempt: z.number().optional() });
/** The text-so-far the API's peek shows. */
export type Partial = z.infer<typeof partialSchema>;
const statusSchema = z.looseObject({
  state: z.string(),
  peek: z.looseObject({ turns: z.number(), lastAssistantText: z.string().nullable(), partial: partialSchema.optional() }).nullable(),
});
/** The part of `GET /v1/delegations/{id}` these tests read. */
export type LiveStatus = z.infer<typeof statusSchema>;

/** `GET /v1/delegations/{id}`, checked. */
export async function readStatus(stack: ApiStack, id: string): Promise<LiveStatus> {
  const response = await stack.request(delegationPath(id));
  if (response.status !== 200) throw new Error(`GET ${delegationPath(id)} answered ${response.status}: ${await response.text()}`);
  return statusSchema.parse(await response.json());
}

/** Reads the status until `done` holds for it (bounded); returns every status seen, the last one satisfying `done`. */
export async function watchStatus(stack: ApiStack, id: string, done: (status: LiveStatus) => boolean, timeoutMs = 30_000): Promise<LiveStatus[]> {
  const seen: LiveStatus[] = [];
  await eventually(async () => {
    const status = await readStatus(stack, id);
    seen.push(status);
    return done(status) ? status : undefined;
  }, timeoutMs);
  return seen;
}

const resultSchema = z.looseObject({
  done: z.literal(true),
  result: z.looseObject({ status: z.string(), output: z.string(), partialOutput: z.string(), outputRef: z.unknown().optional() }),
});

/** Waits for the result (`GET …/result?wait=`), checked. */
export async function awaitResult(stack: ApiStack, id: string): Promise<z.infer<typeof resultSchema>['result']> {
  const answer = await eventually(async () => {
    const response = await stack.request(delegationPath(id, '/result?wait=5s'));
    return response.status === 200 ? resultSchema.parse(await response.json()) : undefined;
  }, 60_000);
  return answer.result;
}
