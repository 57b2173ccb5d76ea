import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { llamaModelPath, llamaServerPath } from '../../src/dev/tool-paths';
import { freePort } from './free-port';

/**
 * llama.cpp's server with the small Gemma 3 270M model (both installed by `scripts/install-tools.ts`):
 * a real OpenAI-compatible model server for tests of the transport and the limits — streaming, the
 * output-token limit, the context window, aborts. The model is a base model: it writes text, it does
 * not follow instructions or call tools, and it rarely stops by itself.
 */

/** Options of a test llama.cpp server. */
export interface LlamaServerOptions {
  /** Context size in tokens (`--ctx-size`); small values make overflows cheap to provoke. Default 2048. */
  ctxSize?: number;
  /**
   * Keep generating past the end-of-text token (`--ignore-eos`), so a generation always runs to its
   * output-token limit: the finish reason and the length of a generation become deterministic.
   */
  ignoreEos?: boolean;
  /**
   * Make the base model end its turn after a few words, with finish reason `stop`: a strong logit bias on
   * Gemma's `<end_of_turn>` token (id 106). Left alone, the model writes until its output-token limit.
   */
  finishEarly?: boolean;
  /** CPU threads (`--threads`). Default 2. */
  threads?: number;
}

/** Gemma's `<end_of_turn>` token, and the logit bias that makes the base model end its turn within a few tokens. */
const gemmaEndOfTurnBias = '106+15';

/** A running llama.cpp server. */
export interface LlamaServer {
  /** Base URL including `/v1`, for `baseUrl` of an openai-compatible provider. */
  url: string;
  /** `http://127.0.0.1:<port>`: `/health`, `/slots`, `/metrics`. */
  origin: string;
  pid: number;
  ctxSize: number;
  /** The server's log (stdout and stderr), kept after stop for post-mortems. */
  logPath: string;
  /** The server's slots (`GET /slots`): whether each is processing a task. */
  slots(): Promise<LlamaSlot[]>;
  /** The server's Prometheus counters (`GET /metrics`) by name, without the `llamacpp:` prefix. */
  metrics(): Promise<Record<string, number>>;
  /** Stops the process this harness started (by pid): SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>;
}

/** One slot of the server. */
export interface LlamaSlot {
  id: number;
  isProcessing: boolean;
}

const templatePath = resolve(__dirname, 'gemma-chat-template.jinja');
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
const slotsSchema = z.array(z.object({ id: z.number(), is_processing: z.boolean() }).loose());

/** Starts llama.cpp's server on a free loopback port and waits until it has loaded the model. */
export async function startLlamaServer(options: LlamaServerOptions = {}): Promise<LlamaServer> {
  const binary = llamaServerPath();
  const model = llamaModelPath();
  for (const [what, path] of [['llama-server', binary], ['the GGUF model', model]] as const) {
    if (!existsSync(path)) throw new Error(`${what} is not installed at ${path}; run "npm run tools" (scripts/install-tools.ts)`);
  }
  const ctxSize = options.ctxSize ?? 2048;
  const port = await freePort();
  const folder = mkdtempSync(join(tmpdir(), 'errand-llama-'));
  const logPath = join(folder, 'llama-server.log');
  const args = [
    '--model', model,
    '--host', '127.0.0.1',
    '--port', String(port),
    '--ctx-size', String(ctxSize),
    // One slot: a request either has it or waits, so /slots tells exactly whether a generation runs.
    '--parallel', '1',
    '--threads', String(options.threads ?? 2),
    // The GGUF has no chat template; Gemma's turn format comes from a file (see the template's comment).
    '--jinja', '--chat-template-file', templatePath,
    '--metrics', '--slots', '--no-webui',
    ...(options.ignoreEos === true ? ['--ignore-eos'] : []),
    ...(options.finishEarly === true ? ['--logit-bias', gemmaEndOfTurnBias] : []),
  ];
  const log = createWriteStream(logPath);
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: folder });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`llama-server did not start (${binary})`);
  const origin = `http://127.0.0.1:${port}`;

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      process.kill(pid, 'SIGTERM');
      const graceful = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
      if (!graceful && child.exitCode === null && child.signalCode === null) {
        process.kill(pid, 'SIGKILL');
        await exited;
      }
    }
    log.end();
  };

  try {
    await waitForHealth(origin, () => child.exitCode ?? child.signalCode, 120_000);
  } catch (error) {
    await stop();
    const tail = existsSync(logPath) ? readFileSync(logPath, 'utf8').split('\n').slice(-15).join('\n') : '';
    throw new Error(`${error instanceof Error ? error.message : String(error)}; log ${logPath}:\n${tail}`);
  }

  return {
    url: `${origin}/v1`,
    origin,
    pid,
    ctxSize,
    logPath,
    async slots(): Promise<LlamaSlot[]> {
      const response = await fetch(`${origin}/slots`);
      return slotsSchema.parse(await response.json()).map((slot) => ({ id: slot.id, isProcessing: slot.is_processing }));
    },
    async metrics(): Promise<Record<string, number>> {
      const text = await (await fetch(`${origin}/metrics`)).text();
      const result: Record<string, number> = {};
      for (const line of text.split('\n')) {
        const match = /^llamacpp:(\w+) ([\d.e+-]+)$/.exec(line.trim());
        if (match?.[1] !== undefined && match[2] !== undefined) result[match[1]] = Number(match[2]);
      }
      return result;
    },
    stop,
  };
}

/** Waits until `/health` answers 200: the model is loaded (it answers 503 while loading). */
async function waitForHealth(origin: string, exitCode: () => number | NodeJS.Signals | null, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    const code = exitCode();
    if (code !== null) throw new Error(`llama-server exited early (${typeof code === 'number' ? `code ${code}` : `signal ${code}`}${code === 'SIGILL' ? ': an instruction this CPU does not allow; rebuild it with npm run tools' : ''})`);
    try {
      const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`llama-server did not become healthy at ${origin} within ${deadlineMs} ms`);
}
