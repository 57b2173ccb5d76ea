import type { JsonValue } from '../../src/contracts/json';
import {
  defaultWorkflowScriptLimits,
  type WorkflowAgentRequest,
  type WorkflowJournal,
  type WorkflowScriptLimits,
  type WorkflowScriptRoundInput,
  type WorkflowScriptRoundOutput,
} from '../../src/contracts/workflow-script';
import { journalWith } from '../../src/domain/workflow-journal';
import { runWorkflowScriptRound } from '../../src/workflow-scripts/run-script-round';

/** What the fake agent runner answers for one request: a result, or a failure. */
export type FakeAgentAnswer = { result: JsonValue; tokens?: number } | { failure: string };

/** Limits small enough that a hostile script ends in well under a second or two. */
export const testScriptLimits: WorkflowScriptLimits = { ...defaultWorkflowScriptLimits, memoryBytes: 8 * 1024 * 1024, steps: 300, roundMs: 5_000 };

/** Options of {@link runScriptToEnd}. */
export interface RunScriptOptions {
  args?: JsonValue;
  journal?: WorkflowJournal;
  agentDefinitions?: Record<string, string | null>;
  limits?: WorkflowScriptLimits;
  /** Rounds before the helper gives up (a script that keeps asking for agents forever). */
  maxRounds?: number;
}

/** The end of a run driven round by round, with every request the fake runner ran, in order. */
export interface ScriptRunEnd {
  output: Exclude<WorkflowScriptRoundOutput, { status: 'waiting' }>;
  journal: WorkflowJournal;
  ran: WorkflowAgentRequest[];
  rounds: number;
}

/**
 * Drives a script the way the workflow will: a round, the agents it waits on run (here by `answer`, a
 * fake agent runner), their results go into the journal, and the next round runs the script from the start.
 */
export async function runScriptToEnd(
  script: string,
  answer: (request: WorkflowAgentRequest) => FakeAgentAnswer,
  options: RunScriptOptions = {},
): Promise<ScriptRunEnd> {
  let journal = options.journal ?? {};
  const ran: WorkflowAgentRequest[] = [];
  const maxRounds = options.maxRounds ?? 50;
  for (let round = 1; round <= maxRounds; round += 1) {
    const input: WorkflowScriptRoundInput = {
      script,
      args: options.args ?? null,
      journal,
      agentDefinitions: options.agentDefinitions ?? {},
      budgetTokens: null,
      limits: options.limits ?? testScriptLimits,
    };
    const output = await runWorkflowScriptRound(input);
    if (output.status !== 'waiting') return { output, journal, ran, rounds: round };
    if (output.definitionsNeeded.length > 0) throw new Error(`the test gives no definition for ${output.definitionsNeeded.join(', ')}`);
    for (const request of output.requests) {
      ran.push(request);
      const given = answer(request);
      journal = journalWith(
        journal,
        request.key,
        'failure' in given
          ? { outcome: 'failed', failure: { type: 'AgentFailed', message: given.failure } }
          : { outcome: 'done', result: given.result, tokens: given.tokens ?? 10 },
      );
    }
  }
  throw new Error(`the script still waited on agents after ${maxRounds} rounds`);
}
