import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseScript, type ScriptStep } from '../../src/llm/scripted-step';
import { startScriptedOpenAIServer } from './scripted-openai-server';

/**
 * Runs the scripted OpenAI-compatible server as its own process, for tests and benchmarks that drive a
 * worker in another process. Prints the base URL (with `/v1`) as the first line of stdout, then serves
 * until SIGINT/SIGTERM. Drive it over HTTP: `POST /__script`, `GET /__requests`, `POST /__reset`.
 *
 * Usage: `tsx test/support/scripted-openai-server-main.ts [--script steps.json] [--port 0] [--host 127.0.0.1] [--context-window N]`
 * Environment: `ERRAND_SCRIPTED_SERVER_SCRIPT` (path of a JSON script), `ERRAND_SCRIPTED_SERVER_STEPS`
 * (the script as inline JSON), `ERRAND_SCRIPTED_SERVER_PORT`, `ERRAND_SCRIPTED_SERVER_CONTEXT_WINDOW`.
 * Command-line options win.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { script: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, 'context-window': { type: 'string' } },
    strict: true,
  });
  const env = process.env;
  const steps: ScriptStep[] = [];
  const scriptPath = values.script ?? env.ERRAND_SCRIPTED_SERVER_SCRIPT;
  if (scriptPath !== undefined && scriptPath !== '') {
    steps.push(...parseScript(readJson(readFileSync(scriptPath, 'utf8'), scriptPath), scriptPath));
  } else if (env.ERRAND_SCRIPTED_SERVER_STEPS !== undefined && env.ERRAND_SCRIPTED_SERVER_STEPS !== '') {
    steps.push(...parseScript(readJson(env.ERRAND_SCRIPTED_SERVER_STEPS, 'ERRAND_SCRIPTED_SERVER_STEPS'), 'ERRAND_SCRIPTED_SERVER_STEPS'));
  }
  const portText = values.port ?? env.ERRAND_SCRIPTED_SERVER_PORT ?? '0';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`--port / ERRAND_SCRIPTED_SERVER_PORT must be a port number 0-65535 (0 = any free port), got "${portText}"`);
  }
  const windowText = values['context-window'] ?? env.ERRAND_SCRIPTED_SERVER_CONTEXT_WINDOW;
  const contextWindow = windowText === undefined || windowText === '' ? undefined : Number(windowText);
  if (contextWindow !== undefined && (!Number.isInteger(contextWindow) || contextWindow < 1)) {
    throw new Error(`--context-window / ERRAND_SCRIPTED_SERVER_CONTEXT_WINDOW must be a positive whole number of tokens, got "${windowText ?? ''}"`);
  }
  const server = await startScriptedOpenAIServer({
    steps,
    port,
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(contextWindow === undefined ? {} : { contextWindow }),
  });
  process.stdout.write(`${server.url}\n`);

  const stop = (): void => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function readJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${where} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`scripted-openai-server: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
