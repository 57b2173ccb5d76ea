import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../contracts/failures';
import type { Client } from '@temporalio/client';
import type { OrchestrationActivities, PlanDelegationOutput } from '../contracts/activities';
import type { ModelAliasTable } from '../contracts/agent-definition';
import type { JsonObject, JsonValue } from '../contracts/json';
import { workflowPlanBatchMaxChars, workflowResultInlineMaxChars, workflowRunHeartbeatIntervalMs, workflowViewLogChars, workflowViewLogLines, workflowViewMaxLabels } from '../contracts/limits';
import type { SubagentActivitySettings } from '../contracts/subagent';
import type { SubagentResult } from '../contracts/subagent-result';
import type {
  PlanWorkflowAgentsInput,
  PlanWorkflowAgentsOutput,
  RecordWorkflowAgentsInput,
  RecordWorkflowAgentsOutput,
  RoundCommon,
  RunWorkflowRoundInput,
  RunWorkflowRoundOutput,
  WorkflowRunActivities,
} from '../contracts/workflow-run-activities';
import { defaultWorkflowScriptLimits, type WorkflowAgentRequest, type WorkflowJournalEntry, type WorkflowScriptRoundOutput } from '../contracts/workflow-script';
import type { SourceResolver } from '../sources/source-resolver';
import { runRoundOffThread } from '../workflow-scripts/round-thread';
import type { BlobStore } from './blob-store';
import type { ConversationStore } from './conversation-store';
import { loadJournal, putByContent, readJsonBlob, updateJournal } from './workflow-journal-store';
import { delegateRequestOf } from './workflow-agent-request';

/** What a workflow run's activities need. */
export interface WorkflowRunDependencies {
  blobs: BlobStore;
  conversations: ConversationStore;
  resolverFor(workingDir: string): SourceResolver;
  /** The orchestration activities: an agent is planned as a `delegate` call is. */
  orchestration: Pick<OrchestrationActivities, 'planDelegation'>;
  /** Toolsets an agent of a run may use (all the operator registered, as for a delegation the API starts). */
  toolsets: readonly string[];
  /** The operator's depth limit and activity settings of a delegation, and the model aliases (`haiku`, `opus`, ...) an agent's `model` may name. */
  subagent: { maxDepth: number; activity: SubagentActivitySettings; modelAliases?: ModelAliasTable };
  /** A Temporal client to read finished agents' results; by default the worker's own. */
  client?: () => Client;
}

/** Where an agent's request is stored: its key says all of its content, so the put is idempotent. */
export function requestBlobKey(key: string): string {
  return `workflow-requests/${key}.json`;
}

/** Ended agents' results one journal write reads from Temporal side by side. */
const resultReadsAtOnce = 16;

/** Agents one planning activity plans side by side. */
const plansAtOnce = 8;

/** Requests a round stores at once (each a small put, idempotent by key). */
const requestPutsAtOnce = 16;

function lastLogs(logs: readonly string[]): string[] {
  return logs.slice(-workflowViewLogLines).map((line) => (line.length > workflowViewLogChars ? `${line.slice(0, workflowViewLogChars)}…` : line));
}

function labelOf(request: WorkflowAgentRequest): string | null {
  const label = request.options['label'];
  return typeof label === 'string' ? label.slice(0, 200) : null;
}

/** The agent definitions the script names, read once per run through the sources of its folder. */
async function withDefinitions(deps: WorkflowRunDependencies, names: readonly string[], known: Record<string, string | null>, workingDir: string): Promise<Record<string, string | null>> {
  const resolver = deps.resolverFor(workingDir);
  const next = { ...known };
  for (const name of names) {
    const resolved = await resolver.resolve(name);
    next[name] = resolved.ok && resolved.snapshot.kind === 'agent' ? resolved.snapshot.content : null;
  }
  return next;
}

/** A round's output as the workflow takes it: a result (inline or by reference), a failure, or the requests it waits for. */
async function shapeRound(deps: WorkflowRunDependencies, output: WorkflowScriptRoundOutput, input: RunWorkflowRoundInput, definitionsRef: string | null, common: RoundCommon): Promise<RunWorkflowRoundOutput> {
  const logs = lastLogs(output.logs);
  if (output.status === 'failed') return { ...common, status: 'failed', diagnostic: output.diagnostic, logs };
  if (output.status === 'done') {
    const text = JSON.stringify(output.result);
    if (text.length <= workflowResultInlineMaxChars) return { ...common, status: 'done', result: output.result, logs };
    return { ...common, status: 'done', resultRef: await putByContent(deps.blobs, 'workflow-results', output.result), logs };
  }
  const running = new Set(input.running);
  const waitingRequests = output.requests.filter((request) => !running.has(request.key));
  const taken = waitingRequests.slice(0, Math.max(0, input.take));
  // The run queues all of them (a lane that frees starts the next at once): store them side by side.
  for (let at = 0; at < taken.length; at += requestPutsAtOnce) {
    await Promise.all(taken.slice(at, at + requestPutsAtOnce).map((request) => deps.blobs.put(requestBlobKey(request.key), JSON.stringify({ prompt: request.prompt, options: request.options }))));
  }
  const counts = new Map<string, number>();
  for (const request of waitingRequests) {
    let label = labelOf(request) ?? request.phase ?? '(no label)';
    if (!counts.has(label) && counts.size >= workflowViewMaxLabels) label = '(other labels)';
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return {
    ...common,
    status: 'waiting',
    requests: taken.map((request) => ({ key: request.key, label: labelOf(request), phase: request.phase })),
    waiting: [...counts].map(([label, count]) => ({ label, count })),
    waitingTotal: waitingRequests.length,
    definitionsRef,
    logs,
  };
}

/** Builds the activities of workflow runs. */
export function createWorkflowRunActivities(deps: WorkflowRunDependencies): WorkflowRunActivities {
  const client = deps.client ?? (() => Context.current().client);

  const activities: WorkflowRunActivities = {
    async runWorkflowRound(input) {
      let script: string;
      let scriptRef: string;
      if (input.script !== undefined) {
        script = input.script;
        scriptRef = await putByContent(deps.blobs, 'workflow-scripts', script);
      } else if (input.scriptRef !== undefined) {
        scriptRef = input.scriptRef;
        script = await readJsonBlob<string>(deps.blobs, scriptRef, 'the script of the run');
      } else throw ApplicationFailure.create({ type: FailureType.invalidInput, message: 'a round needs script or scriptRef', nonRetryable: true });
      const recorded = input.record && (input.record.add.length > 0 || input.record.remove.length > 0) ? await recordAgents({ journalRef: input.journalRef, ...input.record }) : undefined;
      const journal = await loadJournal(deps.blobs, recorded?.journalRef ?? input.journalRef);
      const common: RoundCommon = { scriptRef, journalSize: Object.keys(journal).length, ...(recorded ? { recorded } : {}) };
      let definitionsRef = input.definitionsRef;
      let definitions = definitionsRef === null ? {} : await readJsonBlob<Record<string, string | null>>(deps.blobs, definitionsRef, 'the agent definitions of the run');
      const limits = { ...defaultWorkflowScriptLimits, agents: input.maxAgents };
      for (;;) {
        const output = await runRoundOffThread({ script, args: input.args, journal, agentDefinitions: definitions, budgetTokens: input.budgetTokens, limits });
        if (output.status === 'waiting' && output.definitionsNeeded.length > 0) {
          const missing = output.definitionsNeeded.filter((name) => !Object.hasOwn(definitions, name));
          if (missing.length > 0) {
            definitions = await withDefinitions(deps, missing, definitions, input.workingDir);
            definitionsRef = await putByContent(deps.blobs, 'workflow-definitions', definitions);
            continue;
          }
        }
        return shapeRound(deps, output, input, definitionsRef, common);
      }
    },

    async planWorkflowAgents(input: PlanWorkflowAgentsInput): Promise<PlanWorkflowAgentsOutput> {
      // Side by side: each plan reads its request and the sources (cached by the resolver), little CPU each.
      const plans: PlanDelegationOutput[] = [];
      let chars = 0;
      for (let at = 0; at < input.keys.length; at += plansAtOnce) {
        const batch = await Promise.all(input.keys.slice(at, at + plansAtOnce).map((key) => planOne(key, input)));
        for (const plan of batch) {
          chars += JSON.stringify(plan).length;
          // The answer stays small: past the limit the rest are asked for again (the first always goes).
          if (plans.length > 0 && chars > workflowPlanBatchMaxChars) return { plans };
          plans.push(plan);
        }
      }
      return { plans };
    },

    async recordWorkflowAgents(input: RecordWorkflowAgentsInput): Promise<RecordWorkflowAgentsOutput> {
      const recorded = await recordAgents(input);
      return { ...recorded, size: Object.keys(await loadJournal(deps.blobs, recorded.journalRef)).length };
    },
  };
  /** Adds ended agents to the journal (their results read from Temporal) and drops keys: the new journal's reference. */
  async function recordAgents(input: RecordWorkflowAgentsInput): Promise<Pick<RecordWorkflowAgentsOutput, 'journalRef' | 'entries'>> {
    const add: Record<string, WorkflowJournalEntry> = {};
    const remove = [...input.remove];
    if (input.dropFailed === true) {
      const journal = await loadJournal(deps.blobs, input.journalRef);
      for (const [key, entry] of Object.entries(journal)) if (entry.outcome === 'failed') remove.push(key);
    }
    const entries: RecordWorkflowAgentsOutput['entries'] = [];
    // Each ended child's result is one read from Temporal: a batch reads them side by side, in their order.
    for (let at = 0; at < input.add.length; at += resultReadsAtOnce) {
      const part = input.add.slice(at, at + resultReadsAtOnce);
      const read = await Promise.all(part.map((finished): Promise<WorkflowJournalEntry> => ('failure' in finished ? Promise.resolve({ outcome: 'failed', failure: finished.failure }) : entryOfChild(deps, client, finished.workflowId))));
      part.forEach((finished, index) => {
        const entry = read[index] as WorkflowJournalEntry;
        add[finished.key] = entry;
        entries.push({ key: finished.key, outcome: entry.outcome, tokens: entry.outcome === 'done' ? entry.tokens : 0, ...(entry.outcome === 'failed' ? { failure: entry.failure } : {}) });
      });
    }
    return { journalRef: await updateJournal(deps.blobs, input.journalRef, add, remove), entries };
  }
  return {
    runWorkflowRound: beating(activities.runWorkflowRound),
    planWorkflowAgents: beating(activities.planWorkflowAgents),
    recordWorkflowAgents: beating(activities.recordWorkflowAgents),
  };

  /** One agent's plan: its stored request as a `delegate` call of the run (the run's agents report to nobody). */
  async function planOne(key: string, input: PlanWorkflowAgentsInput): Promise<PlanDelegationOutput> {
    const stored = await readJsonBlob<{ prompt: string; options: JsonObject }>(deps.blobs, requestBlobKey(key), 'the request of a workflow agent');
    const request = delegateRequestOf(stored.prompt, stored.options, deps.subagent.modelAliases);
    if (!request.ok) return { ok: false, message: request.message };
    return deps.orchestration.planDelegation({
      request: request.request as JsonObject,
      parent: {
        workflowId: input.runId,
        taskId: `agent-${key.slice(0, 16)}`,
        workingDir: input.workingDir,
        toolsets: [...deps.toolsets],
        ...(input.tenant ? { tenant: input.tenant } : {}),
        activity: deps.subagent.activity,
        childDepth: 1,
        maxDepth: deps.subagent.maxDepth,
        ...(input.remainingTokens !== undefined ? { remainingBudget: input.remainingTokens } : {}),
        ...(input.remainingTimeMs !== undefined ? { remainingTimeMs: input.remainingTimeMs } : {}),
        ...(input.remainingCostMicroUsd !== undefined ? { remainingCostMicroUsd: input.remainingCostMicroUsd } : {}),
      },
    });
  }
}

/** A finished child's journal entry: its structured result or its whole final text; any other end is a failure. */
async function entryOfChild(deps: WorkflowRunDependencies, client: () => Client, workflowId: string): Promise<WorkflowJournalEntry> {
  let result: SubagentResult;
  try {
    result = (await client().workflow.getHandle(workflowId).result()) as SubagentResult;
  } catch (error) {
    return { outcome: 'failed', failure: { type: 'AgentFailed', message: `the agent's workflow did not complete: ${error instanceof Error ? error.message : String(error)}` } };
  }
  const tokens = result.totalUsage ? result.totalUsage.inputTokens + result.totalUsage.outputTokens : result.usage.inputTokens + result.usage.outputTokens;
  if (result.status !== 'completed') {
    return { outcome: 'failed', failure: { type: result.status, message: result.diagnostic ?? `the agent ended ${result.status}` } };
  }
  const whole = async (): Promise<string> => {
    if (!result.outputRef) return result.output;
    const [message] = await deps.conversations.readRange(result.outputRef.conversationId, result.outputRef.seq, 1);
    return message?.content ?? result.output;
  };
  if (result.structured !== undefined) return { outcome: 'done', result: result.structured, tokens };
  if (result.structuredCut === true) return { outcome: 'done', result: JSON.parse(await whole()) as JsonValue, tokens };
  return { outcome: 'done', result: result.outputCut === true ? await whole() : result.output, tokens };
}

/**
 * Heartbeats while the work runs (a round runs in a thread, so the event loop is free to), so a lost
 * worker's round, plan or journal write moves to another worker within the heartbeat timeout.
 */
function beating<A, R>(work: (input: A) => Promise<R>): (input: A) => Promise<R> {
  return async (input: A): Promise<R> => {
    const context = Context.current();
    const timer = setInterval(() => context.heartbeat(), workflowRunHeartbeatIntervalMs);
    try {
      return await work(input);
    } finally {
      clearInterval(timer);
    }
  };
}
