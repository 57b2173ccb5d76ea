/**
 * One round of a workflow script (SEMANTICS §7, DESIGN "Scripts tenants write"): the script runs from its
 * start in QuickJS compiled to WebAssembly (decision 0037), against the journal, until it ends or waits only
 * on agents whose results are not in the journal. The round returns those agents' requests; when their
 * results are in, the next round runs the script again from the start and the journaled calls resolve at
 * once. The script gets no host object but the script API: no file system, network, environment, clock or
 * randomness, a heap limit and a step limit. Input and output are JSON, for an activity to carry.
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';
import type { JsonValue } from '../contracts/json.js';
import { workflowScriptMaxLogs, workflowScriptMaxResultChars } from '../contracts/limits.js';
import type {
  WorkflowAgentRequest,
  WorkflowScriptDiagnostic,
  WorkflowScriptRoundInput,
  WorkflowScriptRoundOutput,
} from '../contracts/workflow-script.js';
import { createAgentCallKeys } from '../domain/workflow-journal.js';
import { loadEngine } from './quickjs-engine.js';
import { hostFunctionName, preludeFileName, scriptPrelude, settleHookName } from './script-prelude.js';
import { prepareScriptSource, scriptFileName } from './script-source.js';

/** Stack the script may use (bytes): deep recursion ends as a RangeError naming its line. */
const maxStackBytes = 512 * 1024;

/** Globals a Node.js script would reach for; the sandbox has none, and the diagnostic says why. */
const hostNames = new Set(['process', 'require', 'module', 'exports', '__dirname', '__filename', 'Buffer', 'fetch', 'setTimeout', 'setInterval', 'setImmediate', 'globalThis.process']);

const importRefusal = 'import() is not available in a workflow script';

type Settlement = { kind: 'done'; json: string } | { kind: 'failed'; name: string; message: string; stack: string; line: number | null };

/** Runs one round of a workflow script; never throws for anything the script does. */
export async function runWorkflowScriptRound(input: WorkflowScriptRoundInput): Promise<WorkflowScriptRoundOutput> {
  const logs: string[] = [];
  const prepared = prepareScriptSource(input.script);
  if (!prepared.ok) return { status: 'failed', diagnostic: prepared.diagnostic, logs };

  const { runtime, interruption } = limitedRuntime(await loadEngine(), input.limits);
  const context = runtime.newContext();

  const requests: WorkflowAgentRequest[] = [];
  const definitionsNeeded = new Set<string>();
  const keyOf = createAgentCallKeys();
  let unsupported: WorkflowScriptDiagnostic | undefined;
  let settlement: Settlement | undefined;

  const answer = (kind: string, payload: unknown): unknown => {
    switch (kind) {
      case 'setup':
        return { agents: input.limits.agents, items: input.limits.items, budgetTokens: input.budgetTokens, args: input.args };
      case 'agent':
        // The prelude sends this shape; checked anyway, as the text crosses from the sandbox.
        return isAgentCall(payload) ? answerAgent(payload) : { state: 'failed', type: 'InvalidAgentCall', message: 'agent() was called with a malformed request' };
      case 'log':
        if (logs.length < workflowScriptMaxLogs) logs.push(String(payload));
        return null;
      case 'phase':
        return null;
      case 'unsupported': {
        const { message, line } = payload as { message: string; line: number | null };
        unsupported ??= { kind: 'unsupported', message, line };
        return null;
      }
      case 'done':
        settlement ??= { kind: 'done', json: String(payload) };
        return null;
      case 'failed': {
        const { name, message, stack } = payload as { name: string; message: string; stack?: string };
        settlement ??= { kind: 'failed', name, message, stack: stack ?? '', line: lineOf(stack ?? '') };
        return null;
      }
      default:
        return null;
    }
  };

  const answerAgent = (call: { prompt: string; options: Record<string, JsonValue>; phase: string | null }): unknown => {
    const named = call.options['agentType'] ?? call.options['agent'];
    let agentDefinition: string | null = null;
    if (typeof named === 'string') {
      if (!Object.hasOwn(input.agentDefinitions, named)) {
        definitionsNeeded.add(named);
        return { state: 'pending' };
      }
      agentDefinition = input.agentDefinitions[named] ?? null;
      if (agentDefinition === null) return { state: 'failed', type: 'AgentNotFound', message: `no agent definition is named '${named}'` };
    }
    const key = keyOf({ prompt: call.prompt, options: call.options, agentDefinition });
    const entry = Object.hasOwn(input.journal, key) ? input.journal[key] : undefined;
    if (entry?.outcome === 'done') return { state: 'done', result: entry.result, tokens: entry.tokens };
    if (entry?.outcome === 'failed') return { state: 'failed', type: entry.failure.type, message: entry.failure.message };
    requests.push({ key, prompt: call.prompt, options: call.options, phase: call.phase });
    return { state: 'pending' };
  };

  try {
    const host = context.newFunction(hostFunctionName, (kindHandle, payloadHandle) => {
      const kind = context.getString(kindHandle);
      const payload: unknown = JSON.parse(context.getString(payloadHandle));
      return context.newString(JSON.stringify(answer(kind, payload) ?? null));
    });
    context.setProp(context.global, hostFunctionName, host);
    host.dispose();

    const prelude = context.evalCode(scriptPrelude, preludeFileName);
    if (prelude.error) {
      const dumped = describe(context, prelude.error);
      prelude.error.dispose();
      throw new Error(`the workflow script prelude did not load: ${dumped.message}`);
    }
    prelude.value.dispose();

    const evaluated = context.evalCode(`((settle) => { delete globalThis.${settleHookName}; return settle((async () => {${prepared.source}\n})()); })(globalThis.${settleHookName});`, scriptFileName);
    if (evaluated.error) {
      const error = describe(context, evaluated.error);
      evaluated.error.dispose();
      return { status: 'failed', diagnostic: diagnose(error, interruption(), unsupported), logs };
    }
    const jobs = runtime.executePendingJobs(-1);
    if (jobs.error) {
      const error = describe(context, jobs.error);
      return { status: 'failed', diagnostic: diagnose(error, interruption(), unsupported), logs };
    }
    if (interruption()) {
      // The settle hook's handlers cannot run once the limit is passed; the script's promise holds the
      // engine's error, and with it the line the script was on.
      const state = context.getPromiseState(evaluated.value);
      const error = state.type === 'rejected' ? describe(context, state.error) : undefined;
      return { status: 'failed', diagnostic: diagnose(error, interruption(), unsupported), logs };
    }
    if (unsupported) return { status: 'failed', diagnostic: unsupported, logs };
    return roundEnd(settlement, requests, [...definitionsNeeded], logs);
  } catch (error) {
    // The engine itself gave up (its heap is gone): the limits explain why.
    if (interruption() !== undefined || unsupported) return { status: 'failed', diagnostic: diagnose(undefined, interruption(), unsupported), logs };
    const message = error instanceof Error ? error.message : String(error);
    return { status: 'failed', diagnostic: { kind: /memory/i.test(message) ? 'memory' : 'error', message, line: null }, logs };
  }
  // No dispose: the instance is dropped whole (see loadEngine), and a teardown after a limit could abort.
}

type Limits = WorkflowScriptRoundInput['limits'];

/**
 * A runtime under the round's limits: memory, stack, steps and time (the host's clock, never the script's:
 * it only decides when to stop a round that runs too long), and no `import()`. `interruption` says which
 * limit stopped it, if one did.
 */
function limitedRuntime(quickjs: Awaited<ReturnType<typeof loadEngine>>, limits: Limits): { runtime: ReturnType<typeof quickjs.newRuntime>; interruption: () => 'steps' | 'time' | undefined } {
  const runtime = quickjs.newRuntime();
  let steps = 0;
  let interrupted: 'steps' | 'time' | undefined;
  const deadline = performance.now() + limits.roundMs;
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(maxStackBytes);
  runtime.setInterruptHandler(() => {
    steps += 1;
    if (steps > limits.steps) interrupted ??= 'steps';
    else if (performance.now() > deadline) interrupted ??= 'time';
    return interrupted !== undefined;
  });
  runtime.setModuleLoader(() => ({ error: new Error(importRefusal) }));
  return { runtime, interruption: () => interrupted };
}

function isAgentCall(payload: unknown): payload is { prompt: string; options: Record<string, JsonValue>; phase: string | null } {
  if (payload === null || typeof payload !== 'object') return false;
  const { prompt, options, phase } = payload as Record<string, unknown>;
  return typeof prompt === 'string' && options !== null && typeof options === 'object' && !Array.isArray(options) && (phase === null || typeof phase === 'string');
}

function roundEnd(
  settlement: Settlement | undefined,
  requests: WorkflowAgentRequest[],
  definitionsNeeded: string[],
  logs: string[],
): WorkflowScriptRoundOutput {
  if (settlement?.kind === 'done') {
    if (settlement.json.length > workflowScriptMaxResultChars) {
      return { status: 'failed', diagnostic: { kind: 'error', message: `the script's result is ${settlement.json.length} characters of JSON, more than ${workflowScriptMaxResultChars}`, line: null }, logs };
    }
    return { status: 'done', result: JSON.parse(settlement.json) as JsonValue, logs };
  }
  if (settlement?.kind === 'failed') {
    return { status: 'failed', diagnostic: diagnose(settlement, undefined, undefined), logs };
  }
  if (requests.length > 0 || definitionsNeeded.length > 0) return { status: 'waiting', requests, definitionsNeeded, logs };
  return {
    status: 'failed',
    diagnostic: { kind: 'stalled', message: 'the script waits on a promise that no agent() call will settle', line: null },
    logs,
  };
}

interface DescribedError {
  name: string;
  message: string;
  stack: string;
  line: number | null;
}

function describe(context: QuickJSContext, handle: QuickJSHandle): DescribedError {
  const dumped: unknown = context.dump(handle);
  if (dumped !== null && typeof dumped === 'object') {
    const record = dumped as Record<string, unknown>;
    const stack = typeof record['stack'] === 'string' ? record['stack'] : '';
    return {
      name: typeof record['name'] === 'string' ? record['name'] : 'Error',
      message: typeof record['message'] === 'string' ? record['message'] : JSON.stringify(dumped),
      stack,
      line: lineOf(stack),
    };
  }
  if (dumped === null || dumped === undefined) return { name: 'null', message: 'null', stack: '', line: null };
  return { name: 'Error', message: String(dumped), stack: '', line: null };
}

/** The script's line in an engine stack trace (the wrapper adds no line: the script starts on line 1). */
function lineOf(stack: string): number | null {
  const found = /workflow\.js:(\d+)/.exec(stack);
  return found ? Number(found[1]) : null;
}

function diagnose(
  error: DescribedError | Settlement | undefined,
  interrupted: 'steps' | 'time' | undefined,
  unsupported: WorkflowScriptDiagnostic | undefined,
): WorkflowScriptDiagnostic {
  const line = error && 'line' in error ? error.line : null;
  if (interrupted === 'steps') {
    return { kind: 'steps', message: 'the script ran past its step limit (an endless loop?) and was stopped', line };
  }
  if (interrupted === 'time') {
    return { kind: 'time', message: 'the script ran past the time one round may take and was stopped', line };
  }
  if (unsupported) return unsupported;
  if (!error || !('name' in error)) return { kind: 'error', message: 'the script failed', line };
  const name = error.name;
  const message = error.message;
  if (/out of memory|string too long|invalid array length/i.test(message)) {
    return { kind: 'memory', message: `the script ran out of its memory limit and was stopped (${message})`, line };
  }
  if (name === 'null') {
    // The engine throws null when it cannot even allocate the error that says it is out of memory.
    return { kind: 'memory', message: 'the script stopped with no error value: it ran out of its memory limit (or threw null)', line };
  }
  if (message.includes(importRefusal)) return { kind: 'unsupported', message: `${importRefusal}: it has no modules`, line };
  if (name === 'SyntaxError') return { kind: 'syntax', message: `SyntaxError: ${message}`, line };
  const missing = /^'?([\w.$]+)'? is not defined$/.exec(message);
  if (name === 'ReferenceError' && missing && hostNames.has(missing[1]!)) {
    return {
      kind: 'unsupported',
      message: `${missing[1]} does not exist in a workflow script: it has no file system, network, environment or clock`,
      line,
    };
  }
  return { kind: 'error', message: `${name}: ${message}`, line };
}
