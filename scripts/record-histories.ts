import { childWorkflowId } from '../src/contracts/workflow-ids';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../src/settings/config';
import { childProbeIntervalMs } from '../src/contracts/limits/workflow';
import type { ChatMessage } from '../src/contracts/model';
import type { SessionInput } from '../src/contracts/session';
import { cancelSignal, peekQuery, sendMessageUpdate, transcriptQuery } from '../src/contracts/subagent-messages';
import type { SubagentActivitySettings, SubagentInput } from '../src/contracts/subagent';
import { startDevServer, type DevServer } from '../src/dev/temporal-dev-server';
import { createScriptedModel } from '../src/llm/scripted-model';
import type { ScriptStep } from '../src/llm/scripted-step';
import { sendUpdateAcrossRunChange } from '../src/temporal/temporal-update-retry';
import { createErrandWorker } from '../src/worker/errand-worker';
import { createWorkerDependencies } from '../src/worker/worker-dependencies';
import { workflowsFromSources } from '../src/worker/workflow-source';
import { moreScenarios, recordAgentHooksBeforePatch, recordAgentHooksPatched, recordOrchestrationHooksBeforePatch, recordOrchestrationHooksPatched, recordCostBeforePatch, recordCostPatched, recordLongAnswerBeforePatch, recordLongAnswerPatched, recordLongChildBeforePatch, recordLongChildPatched, recordProgressThrottleBeforePatch, recordProgressThrottlePatched, recordStopHookLastTurnBeforePatch, recordStopHookLastTurnPatched, recordApprovals, recordCompaction, recordLoadPeekBeforePatch, recordLoadPeekPatched, recordIdleTimeout, recordProbeLoop, type HeldStep, type RecordingContext, recordSpendAddsUpBeforePatch, recordSpendAddsUpPatched, recordMcpNoticesBeforePatch, recordMcpNoticesPatched, recordWorkflowRun } from './record-more-histories';
import { recordSessionRunWorkflow } from './record-run-workflow-history';
import { holdPlanning, recordMcpEndingBeforePatch, recordMcpEndingPatched } from './record-ending-history';
import { recordRunPlansBeforePatch, recordRunPlansPatched } from './record-run-plans-history';
import { recordRunSharesBeforePatch, recordRunSharesPatched } from './record-run-shares-history';
import { bundleWithPatchesWithheld } from './withheld-patches';

/**
 * Records workflow histories for the replay test (test/deploy/replay.test.ts): a plain subagent run, one
 * with tool calls, one that reaches max_turns, a cancelled one, a session that delegates (the session
 * and its child), and runs shaped by their definitions: a recipe's checks with a retry, structured output
 * through final_output, a subagent in its own git worktree, and a session that forks (the session and its
 * fork, which starts from the session's turns by reference), and a session with a continuable task that both
 * continue as new (each run recorded) with send_message, waits and the probe loop between; and the
 * long-haul scenarios of record-more-histories.ts (an approval, a compaction, `load(peek)` with and without
 * its patch, the probe loop of a session that continued as new while its task runs, the idle alarm, an
 * agent file's hooks, its hooks around an orchestration tool, a session whose foreground child answers at length
 * (its slim result), a child's throttled progress signals, a Stop hook at a subagent's last turn and a
 * delegation and a session that answer at length (read back only up to the result's inline maximum), each with and
 * without their patch). Each is run
 * against a Temporal dev server with a scripted model and written as JSON to test/fixtures/histories/. A second worker
 * runs a bundle that withholds the patches in `withheldPatches` (withheld-patches.ts): its runs are the
 * "before the patch" side that patches.json lists. Re-record after a deliberate, versioned change to workflow
 * code (docs/deploy.md, "Upgrades"), never to make a failing replay pass.
 *
 * Usage: `tsx scripts/record-histories.ts [--address host:port] [--out test/fixtures/histories] [--only a,b]`
 * (`--only` records those scenarios and keeps every other fixture and its index entry).
 * Without `--address` it starts its own dev server from the project-installed CLI (`npm run tools`).
 */

const identity = 'errand-record-histories';
/** Every scenario, as `--only` names them. */
const allScenarios = ['plain', 'tool-calls', 'max-turns', 'cancelled', 'session', 'checks', 'structured', 'worktree', 'fork', 'continuables', ...moreScenarios, 'session-run-workflow', 'mcp-ending', 'mcp-ending-before-patch', 'workflow-run-shares', 'workflow-run-shares-before-patch', 'workflow-run-plans-ahead', 'workflow-run-plans-ahead-before-patch'] as const;
/** The patches the second worker withholds (its runs are the "before the patch" side of the replay fixtures). */
const withheldPatches = ['load-peek-live-text', 'agent-file-hooks', 'cost-search-attribute', 'orchestration-tool-hooks', 'slim-child-result', 'progress-throttle', 'stop-hook-every-stop', 'long-texts-by-reference', 'spend-adds-up', 'mcp-notices-kept-until-acknowledged', 'child-ids-without-slash', 'no-start-when-ending', 'workflow-run-shares-caps', 'workflow-run-plans-ahead-in-batches', 'workflow-run-longer-links', 'idle-and-spend-in-one-marker'];
/** The context window of the model the compaction scenario uses: a few file reads outgrow it. */
const compactionWindow = 4_000;
/** History events after which the recording server suggests continue-as-new (scenario 10 passes it). */
const continueAsNewThreshold = 80;
const activity: SubagentActivitySettings = { modelCallTimeoutMs: 60_000, modelHeartbeatTimeoutMs: 5_000, toolCallTimeoutMs: 30_000, modelMaximumAttempts: 3 };

/**
 * Scripts by marker: each conversation names its script with `[script:<name>]` in its first user message;
 * a fork, whose first user message is its parent's, with `[fork-script:<name>]` in its task.
 */
const scripts = new Map<string, Array<ScriptStep | HeldStep>>();
function markerOf(messages: ChatMessage[]): string | undefined {
  const forks = messages.flatMap((message) => (message.role === 'user' ? [...message.content.matchAll(/\[fork-script:([A-Za-z0-9_-]+)\]/g)].map((match) => match[1]) : []));
  if (forks.length > 0) return forks[forks.length - 1];
  const first = messages.find((message) => message.role === 'user');
  return first?.role === 'user' ? /\[script:([A-Za-z0-9_-]+)\]/.exec(first.content)?.[1] : undefined;
}
/** The system prompt of a compaction's summarising call (src/activities/compaction.ts). */
const summarising = 'You compress the history';
const model = createScriptedModel((request) => {
  // Compaction's summarising calls are answered apart from the conversation's script (how many it makes is its own business).
  const first = request.messages[0];
  if (first?.role === 'system' && first.content.startsWith(summarising)) return { text: 'Summary: notes were read, one file at a time.' };
  const name = markerOf(request.messages);
  const step = name ? scripts.get(name)?.shift() : undefined;
  return typeof step === 'function' ? step() : step;
});
function script(name: string, steps: Array<ScriptStep | HeldStep>): string {
  scripts.set(name, steps);
  return `[script:${name}]`;
}

async function waitUntil(what: string, predicate: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { address: { type: 'string' }, out: { type: 'string' }, only: { type: 'string' } }, strict: true });
  // `--only a,b`: record those scenarios and keep every other fixture (and its index entry) as it is.
  const only = values.only?.split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = only?.filter((name) => !(allScenarios as readonly string[]).includes(name)) ?? [];
  if (unknown.length > 0) throw new Error(`--only: unknown scenario ${unknown.join(', ')}; scenarios: ${allScenarios.join(', ')}`);
  const want = (name: (typeof allScenarios)[number]) => only === undefined || only.includes(name);
  const root = resolve(__dirname, '..');
  const out = resolve(values.out ?? join(root, 'test', 'fixtures', 'histories'));
  const scratch = mkdtempSync(join(tmpdir(), 'errand-record-'));
  let server: DevServer | undefined;
  // The continue-as-new threshold is low enough for the continuables scenario (10) to continue as new, and
  // above the other scenarios' histories (60 events at most), which stay one run each.
  if (!values.address) server = await startDevServer({ dbFile: join(scratch, 'temporal.sqlite'), logFile: join(scratch, 'temporal.log'), headless: true, dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': continueAsNewThreshold } });
  const address = values.address ?? server?.address ?? '';

  // A fixed, machine-independent working directory: it is written into the recorded inputs.
  const workingDir = join(tmpdir(), 'errand-histories-work');
  mkdirSync(join(workingDir, 'docs'), { recursive: true });
  writeFileSync(join(workingDir, 'notes.txt'), 'the answer is 42\n');
  writeFileSync(join(workingDir, 'docs', 'readme.md'), '# docs\n');

  const config = loadConfig({ ERRAND_DATA_DIR: join(scratch, 'data'), ERRAND_PROVIDERS: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: ['scripted-model', { id: 'small-window-model', contextWindow: compactionWindow, maxOutputTokens: 200 }, { id: 'priced-model', prices: { input: 2, output: 8 } }] }]) });
  const dependencies = createWorkerDependencies(config, { scripted: { scripted: model }, env: {}, homeDirectory: join(scratch, 'home') });
  // The ending scenarios hold a delegate's planning on purpose (record-ending-history.ts).
  const planningHold = holdPlanning(dependencies);
  const taskQueue = `record-histories-${Date.now()}`;
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await createErrandWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    dependencies,
    workflows: workflowsFromSources(),
    tuning: { identity, shutdownGraceTime: '2s' },
  });
  // A second worker whose bundle withholds the patches under test: it records "before the patch" histories.
  const withheldTaskQueue = `${taskQueue}-withheld`;
  const withheldWorker = await createErrandWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue: withheldTaskQueue,
    dependencies,
    workflows: { workflowBundle: { code: await bundleWithPatchesWithheld(withheldPatches) } },
    tuning: { identity, shutdownGraceTime: '2s' },
  });
  const running = Promise.all([worker.run(), withheldWorker.run()]);
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, identity });
  const stamp = Date.now();
  const subagent = (prompt: string, overrides: Partial<SubagentInput> = {}): SubagentInput => ({
    label: 'recorded delegation',
    prompt,
    workingDir,
    system: {},
    route: { provider: 'scripted', model: 'scripted-model' },
    toolsets: ['developer'],
    maxTurns: 10,
    depth: 1,
    maxDepth: 1,
    activity,
    ...overrides,
  });
  const sessionInput: SessionInput = {
    label: 'recorded session',
    route: { provider: 'scripted', model: 'scripted-model' },
    toolsets: ['developer'],
    workingDir,
    system: {},
    maxTurnsPerMessage: 10,
    maxDepth: 1,
    tasks: { maxBackgroundTasks: 5, waitTimeoutMs: 30_000, completedTaskTtlMs: 600_000 },
    activity,
  };
  const recorded: Record<string, string> = {};
  /** File name → workflow id: replay needs the id (child ids derive from it), which a history does not hold. */
  const index: Record<string, string> = {};
  const record = async (name: string, workflowId: string, runId?: string): Promise<void> => {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    recorded[name] = `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`;
    index[`${name}.json`] = workflowId;
  };

  try {
    if (want('plain')) {
      // 1. plain: one model call, a final answer.
      const plainId = `errand-record-plain-${stamp}`;
      await client.workflow.execute('subagentWorkflow', { taskQueue, workflowId: plainId, args: [subagent(`Summarise the project ${script('plain', [{ text: 'All done: the summary.' }])}`)] });
      await record('subagent-plain', plainId);
    }

    if (want('tool-calls')) {
      // 2. tool calls: two tools in parallel, then the answer.
      const toolsId = `errand-record-tools-${stamp}`;
      const tools = script('tools', [
        { toolCalls: [{ id: 'call-a', name: 'developer__read_file', arguments: { path: 'notes.txt' } }, { id: 'call-b', name: 'developer__list_directory', arguments: { path: 'docs' } }] },
        { text: 'The notes say 42 and docs has a readme.' },
      ]);
      await client.workflow.execute('subagentWorkflow', { taskQueue, workflowId: toolsId, args: [subagent(`Look around ${tools}`)] });
      await record('subagent-tool-calls', toolsId);
    }

    if (want('max-turns')) {
      // 3. max_turns: never answers, stopped by the turn limit.
      const limitId = `errand-record-max-turns-${stamp}`;
      const loop: ScriptStep = { text: 'Still looking...', toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] };
      await client.workflow.execute('subagentWorkflow', { taskQueue, workflowId: limitId, args: [subagent(`Never finish ${script('limit', [loop, loop, loop])}`, { maxTurns: 3 })] });
      await record('subagent-max-turns', limitId);
    }

    if (want('cancelled')) {
      // 4. cancelled: a slow model call, cancelled by the cancel signal while it runs.
      const cancelId = `errand-record-cancelled-${stamp}`;
      const slow = script('cancel', [{ toolCalls: [{ id: 'ls', name: 'developer__list_directory', arguments: { path: 'docs' } }] }, { text: 'too late', delayMs: 60_000 }]);
      const cancelHandle = await client.workflow.start('subagentWorkflow', { taskQueue, workflowId: cancelId, args: [subagent(`Take your time ${slow}`)] });
      await waitUntil('the second model call', async () => (await cancelHandle.query(peekQuery)).turns >= 2);
      await cancelHandle.signal(cancelSignal, { reason: 'the user changed their mind' });
      await cancelHandle.result();
      await record('subagent-cancelled', cancelId);
    }

    if (want('session')) {
      // 5. a session that delegates in the foreground, answers, and is then ended.
      const sessionId = `errand-record-session-${stamp}`;
      const child = script('session-child', [{ text: 'Child says: 2 files.' }]);
      const session = script('session', [
        { toolCalls: [{ id: 'delegate-1', name: 'delegate', arguments: { instructions: `Count the files ${child}`, description: 'count files' } }] },
        { text: 'The child found 2 files.' },
      ]);
      const sessionHandle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId: sessionId, args: [sessionInput] });
      await sessionHandle.executeUpdate(sendMessageUpdate, { args: [{ message: `How many files? ${session}` }] });
      await waitUntil('the session reply', async () => {
        const view = await sessionHandle.query(transcriptQuery);
        return view.state === 'waiting' && view.entries.some((entry) => entry.role === 'assistant');
      });
      await sessionHandle.signal(cancelSignal, { reason: 'recording done' });
      await sessionHandle.result();
      await record('session-delegates', sessionId);
      await record('session-delegates-child', childWorkflowId(sessionId, 'task-1'));
    }

    if (want('checks')) {
      // 6. a recipe's checks (goose retry): the check fails, on_failure runs, the second attempt passes.
      const checksId = `errand-record-checks-${stamp}`;
      rmSync(join(workingDir, 'checked.txt'), { force: true });
      const retry = { maxRetries: 1, checks: [{ type: 'shell' as const, command: 'test -f checked.txt' }], onFailure: 'touch checked.txt', timeoutSeconds: 60, onFailureTimeoutSeconds: 60 };
      await client.workflow.execute('subagentWorkflow', { taskQueue, workflowId: checksId, args: [subagent(`Make the check pass ${script('checks', [{ text: 'first try' }, { text: 'second try' }])}`, { retry })] });
      await record('subagent-checks', checksId);
    }

    if (want('structured')) {
      // 7. structured output: an invalid final_output call, then a valid one.
      const structuredId = `errand-record-structured-${stamp}`;
      const outputSchema = { type: 'object', properties: { files: { type: 'integer' } }, required: ['files'] };
      const structured = script('structured', [
        { toolCalls: [{ id: 'out-1', name: 'final_output', arguments: { files: 'two' } }] },
        { toolCalls: [{ id: 'out-2', name: 'final_output', arguments: { files: 2 } }] },
      ]);
      await client.workflow.execute('subagentWorkflow', { taskQueue, workflowId: structuredId, args: [subagent(`Count the files ${structured}`, { outputSchema })] });
      await record('subagent-structured', structuredId);
    }

    if (want('worktree')) {
      // 8. isolation worktree: the subagent writes a file in its own worktree, which is kept.
      const worktreeId = `errand-record-worktree-${stamp}`;
      const repository = join(tmpdir(), 'errand-histories-repo');
      rmSync(repository, { recursive: true, force: true });
      mkdirSync(repository, { recursive: true });
      const git = (args: string[]) => execFileSync('git', args, { cwd: repository, env: { ...process.env, GIT_AUTHOR_NAME: 'errand', GIT_AUTHOR_EMAIL: 'errand@example.invalid', GIT_COMMITTER_NAME: 'errand', GIT_COMMITTER_EMAIL: 'errand@example.invalid' } });
      git(['init', '--quiet', '--initial-branch=main']);
      writeFileSync(join(repository, 'readme.md'), '# recorded\n');
      git(['add', '--all']);
      git(['commit', '--quiet', '-m', 'initial']);
      const isolated = script('worktree', [{ toolCalls: [{ id: 'write', name: 'developer__write_file', arguments: { path: 'notes.txt', content: 'notes\n' } }] }, { text: 'Wrote notes.txt.' }]);
      await client.workflow.execute('subagentWorkflow', { taskQueue, workflowId: worktreeId, args: [subagent(`Take notes ${isolated}`, { workingDir: repository, isolation: 'worktree' })] });
      await record('subagent-worktree', worktreeId);
    }

    if (want('fork')) {
      // 9. fork: a session looks around, then forks a subagent that starts from its turns (by reference).
      const forkSessionId = `errand-record-fork-${stamp}`;
      script('fork-child', [{ text: 'The fork read the listing: docs and notes.txt.' }]);
      const forking = script('fork', [
        { toolCalls: [{ id: 'look', name: 'developer__list_directory', arguments: { path: '.' } }] },
        { toolCalls: [{ id: 'fork-1', name: 'delegate', arguments: { fork: true, instructions: '[fork-script:fork-child] Say what the listing holds.', description: 'fork' } }] },
        { text: 'The fork answered.' },
      ]);
      const forkHandle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId: forkSessionId, args: [{ ...sessionInput, label: 'recorded fork' }] });
      await forkHandle.executeUpdate(sendMessageUpdate, { args: [{ message: `Look, then fork ${forking}` }] });
      await waitUntil('the forking session reply', async () => {
        const view = await forkHandle.query(transcriptQuery);
        return view.state === 'waiting' && view.entries.some((entry) => entry.role === 'assistant');
      });
      await forkHandle.signal(cancelSignal, { reason: 'recording done' });
      await forkHandle.result();
      await record('session-forks', forkSessionId);
      await record('session-forks-child', childWorkflowId(forkSessionId, 'task-1'));
    }

    if (want('continuables')) {
      // 10. continuables: a session starts a continuable task, talks until the server suggests continue-as-new
      // (run 1 ends continued as new), then, in its second run, waits with the task waiting (the probe loop
      // and the idle alarms run here) and passes a message on with send_message; the task then takes messages
      // until it continues as new too, and the session is cancelled with its task.
      const continuablesId = `errand-record-continuables-${stamp}`;
      // The helper answers after the session's first run has ended, so its notice makes a run of its own.
      script('cont-child', [{ text: 'Child ready.', delayMs: 3_000 }, { text: 'Child got the second message.' }]);
      const contSteps: ScriptStep[] = [
        { toolCalls: [{ id: 'delegate-c', name: 'delegate', arguments: { instructions: 'Stay around [script:cont-child]', continuable: true, description: 'helper' } }] },
        { text: 'Started the helper.' },
      ];
      const contMarker = script('cont', contSteps);
      const contHandle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId: continuablesId, args: [{ ...sessionInput, label: 'recorded continuables' }] });
      const firstRunId = contHandle.firstExecutionRunId;
      /** The session waits and has used every scripted step. */
      const sessionDone = async () => contSteps.length === 0 && (await contHandle.query(transcriptQuery)).state === 'waiting';
      contSteps.push({ text: 'The helper is ready.' }); // the turn for the helper's first notice
      await contHandle.executeUpdate(sendMessageUpdate, { args: [{ message: `Start a helper ${contMarker}` }] });
      await waitUntil('the helper notice turn', sessionDone);
      for (let reply = 1; (await contHandle.describe()).runId === firstRunId; reply += 1) {
        if (reply > 20) throw new Error('the session did not continue as new');
        contSteps.push({ text: `Reply ${reply}.` });
        await sendUpdateAcrossRunChange(() => contHandle.executeUpdate(sendMessageUpdate, { args: [{ message: `Message ${reply}` }], updateId: `${continuablesId}-message-${reply}` }));
        await waitUntil('a reply', async () => (await contHandle.describe()).runId !== firstRunId || (await sessionDone()));
      }
      await waitUntil('the reply in the second run', sessionDone);
      // Past one probe interval of the second run, where the helper is a task this run does not watch.
      await new Promise((done) => setTimeout(done, childProbeIntervalMs + 5_000));
      contSteps.push(
        { toolCalls: [{ id: 'send-c', name: 'send_message', arguments: { task_id: 'task-1', message: 'A second message.' } }] },
        { text: 'Passed it on.' },
        { text: 'The helper answered.' },
      );
      await sendUpdateAcrossRunChange(() => contHandle.executeUpdate(sendMessageUpdate, { args: [{ message: 'Tell the helper something' }], updateId: `${continuablesId}-send` }));
      await waitUntil('the helper answer turn', async () => {
        const view = await contHandle.query(transcriptQuery);
        return contSteps.length === 0 && view.state === 'waiting';
      });
      // The helper takes messages straight from a client until it, too, continues as new (from its wait).
      const helper = client.workflow.getHandle(childWorkflowId(continuablesId, 'task-1'));
      const helperFirstRunId = (await helper.describe()).runId;
      const helperSteps = scripts.get('cont-child') ?? [];
      for (let message = 1; (await helper.describe()).runId === helperFirstRunId; message += 1) {
        if (message > 20) throw new Error('the helper did not continue as new');
        helperSteps.push({ text: `Helper answer ${message}.` });
        contSteps.push({ text: `Noted helper answer ${message}.` });
        await sendUpdateAcrossRunChange(() => helper.executeUpdate(sendMessageUpdate, { args: [{ message: `Direct message ${message}` }], updateId: `${continuablesId}-direct-${message}` }));
        await waitUntil('the helper answer and its notice turn', async () => (await helper.describe()).runId !== helperFirstRunId || (helperSteps.length === 0 && (await sessionDone())));
      }
      await waitUntil('the last notice turn', async () => helperSteps.length === 0 && (await sessionDone()));
      await contHandle.signal(cancelSignal, { reason: 'recording done' });
      await contHandle.result();
      await helper.result();
      const helperFirstRun = await client.workflow.getHandle(helper.workflowId, helperFirstRunId).fetchHistory();
      recorded['session-continuables-child-run-1'] = `${JSON.stringify(JSON.parse(historyToJSON(helperFirstRun)), null, 1)}\n`;
      index['session-continuables-child-run-1.json'] = helper.workflowId;
      const firstRun = await client.workflow.getHandle(continuablesId, firstRunId).fetchHistory();
      recorded['session-continuables-run-1'] = `${JSON.stringify(JSON.parse(historyToJSON(firstRun)), null, 1)}\n`;
      index['session-continuables-run-1.json'] = continuablesId;
      await record('session-continuables-run-2', continuablesId);
      await record('session-continuables-child-run-2', childWorkflowId(continuablesId, 'task-1'));
    }

    // 11.-20. the long-haul scenarios (record-more-histories.ts).
    const context: RecordingContext = {
      client, taskQueue, withheldTaskQueue, stamp, workingDir, subagent, sessionInput,
      script: (name, steps) => script(name, steps),
      stepsOf: (name) => scripts.get(name) ?? [],
      waitUntil,
      record: async (name, workflowId, runId) => {
        await record(name, workflowId, runId);
      },
    };
    if (want('approvals')) await recordApprovals(context);
    if (want('compaction')) await recordCompaction(context);
    if (want('load-peek')) await recordLoadPeekPatched(context);
    if (want('load-peek-before-patch')) await recordLoadPeekBeforePatch(context);
    if (want('probe-loop')) await recordProbeLoop(context);
    if (want('idle-timeout')) await recordIdleTimeout(context);
    if (want('agent-hooks')) await recordAgentHooksPatched(context);
    if (want('agent-hooks-before-patch')) await recordAgentHooksBeforePatch(context);
    if (want('orchestration-hooks')) await recordOrchestrationHooksPatched(context);
    if (want('orchestration-hooks-before-patch')) await recordOrchestrationHooksBeforePatch(context);
    if (want('cost')) await recordCostPatched(context);
    if (want('cost-before-patch')) await recordCostBeforePatch(context);
    if (want('long-child')) await recordLongChildPatched(context);
    if (want('long-child-before-patch')) await recordLongChildBeforePatch(context);
    if (want('long-answer')) await recordLongAnswerPatched(context);
    if (want('long-answer-before-patch')) await recordLongAnswerBeforePatch(context);
    if (want('progress-throttle')) await recordProgressThrottlePatched(context);
    if (want('progress-throttle-before-patch')) await recordProgressThrottleBeforePatch(context);
    if (want('stop-hook-last-turn')) await recordStopHookLastTurnPatched(context);
    if (want('stop-hook-last-turn-before-patch')) await recordStopHookLastTurnBeforePatch(context);
    if (want('spend-adds-up')) await recordSpendAddsUpPatched(context);
    if (want('spend-adds-up-before-patch')) await recordSpendAddsUpBeforePatch(context);
    if (want('mcp-notices')) await recordMcpNoticesPatched(context);
    if (want('mcp-notices-before-patch')) await recordMcpNoticesBeforePatch(context);
    if (want('workflow-run')) await recordWorkflowRun(context);
    if (want('session-run-workflow')) await recordSessionRunWorkflow(context);
    if (want('mcp-ending')) await recordMcpEndingPatched(context, planningHold);
    if (want('mcp-ending-before-patch')) await recordMcpEndingBeforePatch(context, planningHold);
    if (want('workflow-run-shares')) await recordRunSharesPatched(context);
    if (want('workflow-run-shares-before-patch')) await recordRunSharesBeforePatch(context);
    if (want('workflow-run-plans-ahead')) await recordRunPlansPatched(context);
    if (want('workflow-run-plans-ahead-before-patch')) await recordRunPlansBeforePatch(context);
  } finally {
    worker.shutdown();
    withheldWorker.shutdown();
    await running;
    await nativeConnection.close();
    await connection.close();
    await server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }

  mkdirSync(out, { recursive: true });
  for (const [name, text] of Object.entries(recorded)) {
    writeFileSync(join(out, `${name}.json`), text);
    process.stdout.write(`record-histories: ${name}.json (${Math.round(text.length / 1024)} KiB)\n`);
  }
  // The index keeps the entries of fixtures this run did not record.
  const indexFile = join(out, 'index.json');
  const kept = only !== undefined && existsSync(indexFile) ? (JSON.parse(readFileSync(indexFile, 'utf8')) as Record<string, string>) : {};
  writeFileSync(indexFile, `${JSON.stringify({ ...kept, ...index }, null, 2)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`record-histories: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
