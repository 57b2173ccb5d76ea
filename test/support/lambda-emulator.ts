import { spawn, type ChildProcess } from 'node:child_process';
import { z } from 'zod';
import type { ApiGatewayV2Event } from '../../src/api/lambda';
import { lambdaEmulatorPath, lambdaRuntimeClientPath } from '../../src/dev/tool-paths';
import { freePort } from './free-port';

/**
 * A Lambda function run as Lambda runs it: AWS's Runtime Interface Emulator (the Lambda Runtime API and its
 * init/invoke life cycle) starts the Node runtime interface client (`aws-lambda-ric`, what Lambda's own
 * Node images run), which loads the bundle from its folder and calls the handler for each invocation.
 * Both come from scripts/install-tools.ts. The function's container starts at the first invocation, as a
 * cold start does; the emulator's `INIT REPORT` line gives the init duration Lambda would report.
 */

/** What a function answers to an API Gateway HTTP API event. */
export interface LambdaAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** A running emulator with one function. */
export interface LambdaEmulator {
  /** Invokes the function with an event; the answer as API Gateway would turn it into an HTTP answer. */
  invoke(event: ApiGatewayV2Event): Promise<LambdaAnswer>;
  /** The init duration of the function's cold start (ms), once it happened. */
  initDurationMs(): number | undefined;
  /** Everything the emulator and the function logged. */
  log(): string;
  stop(): Promise<void>;
}

/** Options of {@link startLambdaEmulator}. */
export interface LambdaEmulatorOptions {
  /** The folder holding the bundle (the function's task root). */
  taskRoot: string;
  /** The handler setting, e.g. `index.handler`. */
  handler: string;
  /** The function's environment (the emulator passes its own environment to the runtime). */
  env: Record<string, string>;
  /** Seconds the emulator gives one invocation (the function's timeout). */
  timeoutSeconds?: number;
}

const answerSchema = z.looseObject({
  statusCode: z.number().int(),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.string().optional(),
  isBase64Encoded: z.boolean().optional(),
});
const functionErrorSchema = z.looseObject({ errorType: z.string(), errorMessage: z.string() });

/** Starts the emulator (the function itself starts at the first invocation). */
export async function startLambdaEmulator(options: LambdaEmulatorOptions): Promise<LambdaEmulator> {
  const port = await freePort();
  // The emulator's runtime API (which the runtime client polls) listens on 127.0.0.1:9001 unless told otherwise:
  // a port of its own, so emulators of test files running side by side never take the same one.
  const runtimeApiPort = await freePort();
  let output = '';
  // Only what a Lambda container has: PATH and the function's environment, nothing of the test process.
  const child: ChildProcess = spawn(
    lambdaEmulatorPath(),
    ['--runtime-interface-emulator-address', `127.0.0.1:${port}`, '--runtime-api-address', `127.0.0.1:${runtimeApiPort}`, process.execPath, lambdaRuntimeClientPath(), options.handler],
    {
      cwd: options.taskRoot,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        LAMBDA_TASK_ROOT: options.taskRoot,
        AWS_LAMBDA_FUNCTION_TIMEOUT: String(options.timeoutSeconds ?? 29),
        AWS_REGION: 'eu-west-1',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const url = `http://127.0.0.1:${port}/2015-03-31/functions/function/invocations`;
  // The emulator listens within milliseconds; wait for its socket (bounded) before the first invocation.
  for (let attempt = 0; ; attempt += 1) {
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1_000) });
      break;
    } catch {
      if (child.exitCode !== null || attempt >= 100) throw new Error(`the Lambda emulator did not start:\n${output}`);
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
  }
  return {
    async invoke(event) {
      const response = await fetch(url, { method: 'POST', body: JSON.stringify(event), signal: AbortSignal.timeout(((options.timeoutSeconds ?? 29) + 10) * 1_000) });
      const text = await response.text();
      const json: unknown = JSON.parse(text);
      const failed = functionErrorSchema.safeParse(json);
      if (failed.success) throw new Error(`the function failed: ${failed.data.errorType}: ${failed.data.errorMessage}\n${output}`);
      const answer = answerSchema.parse(json);
      const body = answer.body ?? '';
      return { statusCode: answer.statusCode, headers: answer.headers ?? {}, body: answer.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body };
    },
    initDurationMs() {
      const match = /INIT REPORT\(durationMs: ([\d.]+)\)/.exec(output);
      return match?.[1] === undefined ? undefined : Number(match[1]);
    },
    log: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** An invocation's answer with its body read as a JSON object (empty when the body is not one, e.g. an event stream). */
export async function invokeJson(emulator: LambdaEmulator, event: ApiGatewayV2Event): Promise<LambdaAnswer & { json: Record<string, unknown> }> {
  const answer = await emulator.invoke(event);
  let parsed: unknown = {};
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    // not JSON: json stays empty and the caller reads body
  }
  return { ...answer, json: typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {} };
}
