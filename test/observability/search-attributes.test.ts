import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { searchAttributes } from '../../src/contracts/search-attributes';
import { sessionStartOptions, subagentStartOptions } from '../../src/observability/start-options';
import { subagentInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';
import { createSessionModel, pollUntil, runSessionWithTwoChildren, scheduledActivities, sessionInput, sessionWorkingDir, type SessionRun } from './session-scenario';

/**
 * What the Temporal Web UI and visibility queries see of a session with two children: search attributes
 * (kind, source, parent, status, tenant, model, turns), static summaries and details, current details,
 * and the summaries of the activities in each history — all read back through the Temporal client.
 */

const model = createSessionModel();
let run: SessionRun;
const tenant = 'acme';

const stack = useWorkerStack({ label: 'observability-sa', scripted: { scripted: { model } } });
beforeAll(async () => {
  run = await runSessionWithTwoChildren(stack.client, {
    taskQueue: stack.taskQueue,
    workflowId: `errand-obs-${Date.now().toString(36)}`,
    workingDir: sessionWorkingDir(),
    tenant,
  });
});
afterAll(async () => {
  await run?.handle.cancel().catch(() => undefined);
});

describe('search attributes and summaries of a session with two children', () => {
  test('the scripted model saw one session message, two delegations and their children', () => {
    // session: delegate turn + answer turn; child 1: tool turn + answer; child 2: answer.
    expect(model.calls).toHaveLength(5);
    expect(model.exhaustedCalls).toBe(0);
  });

  test('the session: kind, source, status, tenant, model, turns and its static summary and details', async () => {
    await pollUntil(async () => {
      const description = await run.handle.describe();
      return description.typedSearchAttributes.get(searchAttributes.turns) === 2 && description.typedSearchAttributes.get(searchAttributes.status) === 'waiting';
    }, { timeoutMs: 20_000, what: 'the session to show 2 turns, waiting' });
    const description = await run.handle.describe();
    const attributes = description.typedSearchAttributes;
    expect(attributes.get(searchAttributes.kind)).toBe('session');
    expect(attributes.get(searchAttributes.source)).toBe('ad-hoc');
    expect(attributes.get(searchAttributes.parent)).toBeUndefined();
    expect(attributes.get(searchAttributes.tenant)).toBe(tenant);
    expect(attributes.get(searchAttributes.model)).toBe('scripted/scripted-model');
    const expected = sessionStartOptions(run.input, { workflowId: run.sessionId, tenant, startedBy: 'test' });
    expect(await description.staticSummary()).toBe(expected.staticSummary);
    expect(expected.staticSummary).toBe('session · release check — You coordinate release checks by delegating them to subagents.');
    const details = await description.staticDetails();
    expect(details).toContain('**Model:** `scripted/scripted-model`');
    expect(details).toContain('5 turns per message');
    expect(details).toContain('**Tenant:** acme');
  });

  test('each child: kind, parent, source, tenant, model, final status and turns; summary = description', async () => {
    const expectedTurns = [2, 1];
    const descriptions = ['survey the working folder', 'check for open issues'];
    for (const [index, childId] of run.childIds.entries()) {
      const handle = stack.client.workflow.getHandle(childId);
      await pollUntil(async () => (await handle.describe()).typedSearchAttributes.get(searchAttributes.status) === 'completed', {
        timeoutMs: 20_000,
        what: `${childId} to show status completed`,
      });
      const description = await handle.describe();
      expect(description.status.name).toBe('COMPLETED');
      expect(description.parentExecution?.workflowId).toBe(run.sessionId);
      const attributes = description.typedSearchAttributes;
      expect(attributes.get(searchAttributes.kind)).toBe('subagent');
      expect(attributes.get(searchAttributes.parent)).toBe(run.sessionId);
      expect(attributes.get(searchAttributes.source)).toBe('ad-hoc');
      expect(attributes.get(searchAttributes.tenant)).toBe(tenant);
      expect(attributes.get(searchAttributes.model)).toBe('scripted/scripted-model');
      expect(attributes.get(searchAttributes.turns)).toBe(expectedTurns[index]);
      expect(await description.staticSummary()).toBe(descriptions[index]);
      const details = await description.staticDetails();
      expect(details).toContain('model: scripted/scripted-model');
      expect(details).toContain(`parent: ${run.sessionId}`);
    }
  });

  test('a visibility query finds exactly the two children of the session', async () => {
    const query = `${searchAttributes.kind.name} = 'subagent' AND ${searchAttributes.parent.name} = '${run.sessionId}'`;
    let found: string[] = [];
    await pollUntil(async () => {
      found = [];
      for await (const execution of stack.client.workflow.list({ query })) found.push(execution.workflowId);
      return found.length === 2;
    }, { timeoutMs: 20_000, what: `the list query ${query} to return both children` });
    expect(found.sort()).toEqual([...run.childIds].sort());

    const completed = `${query} AND ${searchAttributes.status.name} = 'completed' AND ${searchAttributes.tenant.name} = '${tenant}'`;
    await pollUntil(async () => (await stack.client.workflow.count(completed)).count === 2, { timeoutMs: 20_000, what: 'both children to count as completed' });
    const sessions = `${searchAttributes.kind.name} = 'session' AND ${searchAttributes.tenant.name} = '${tenant}' AND WorkflowId = '${run.sessionId}'`;
    await pollUntil(async () => (await stack.client.workflow.count(sessions)).count === 1, { timeoutMs: 20_000, what: 'the session to be found by kind and tenant' });
  });

  test('every model and tool activity has a summary: "model <provider/model> · turn n", "tool <name>"', async () => {
    const session = await scheduledActivities(run.handle);
    const sessionModelCalls = session.filter((activity) => activity.activityType === 'modelTurn');
    expect(sessionModelCalls.map((activity) => activity.summary)).toEqual(['model scripted/scripted-model · turn 1', 'model scripted/scripted-model · turn 2']);

    const first = await scheduledActivities(stack.client.workflow.getHandle(run.childIds[0]));
    expect(first.filter((activity) => activity.activityType === 'modelTurn').map((activity) => activity.summary)).toEqual([
      'model scripted/scripted-model · turn 1',
      'model scripted/scripted-model · turn 2',
    ]);
    expect(first.filter((activity) => activity.activityType === 'runTool').map((activity) => activity.summary)).toEqual(['tool developer__list_directory']);

    const second = await scheduledActivities(stack.client.workflow.getHandle(run.childIds[1]));
    expect(second.filter((activity) => activity.activityType === 'modelTurn').map((activity) => activity.summary)).toEqual(['model scripted/scripted-model · turn 1']);
  });

  test('the child workflows started by the session carry their summaries in its history', async () => {
    const history = await run.handle.fetchHistory();
    const started = (history.events ?? [])
      .filter((event) => event.startChildWorkflowExecutionInitiatedEventAttributes)
      .map((event) => ({
        workflowId: event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId,
        summary: event.userMetadata?.summary ? defaultPayloadConverter.fromPayload<string>(event.userMetadata.summary) : undefined,
      }));
    // The two delegations are planned in parallel, so either may be started first.
    expect([...started].sort((a, b) => String(a.workflowId).localeCompare(String(b.workflowId)))).toEqual([
      { workflowId: run.childIds[0], summary: 'survey the working folder' },
      { workflowId: run.childIds[1], summary: 'check for open issues' },
    ]);
  });

  test('current details show the state, turn and last tool of a workflow', async () => {
    const metadata: { currentDetails?: string } = await stack.client.workflow.getHandle(run.childIds[0]).query('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toMatch(/^\*\*completed\*\* · turn 2 of \d+ \(total 2\) · 1 tool calls/);
    expect(metadata.currentDetails).toContain('last tool: `developer__list_directory`');
    const session: { currentDetails?: string } = await run.handle.query('__temporal_workflow_metadata');
    expect(session.currentDetails).toContain('**waiting**');
    expect(session.currentDetails).toContain('tasks: task-1 completed, task-2 completed');
  });
});

describe('start options of top-level workflows', () => {
  test('a subagent: summary from the label and the first words of the prompt; attributes for a top-level delegation', () => {
    const input = subagentInput({
      label: 'triage',
      prompt: 'Read every open issue in the tracker and sort them by how urgent they look to a maintainer today',
      workingDir: '/work',
      tenant: 'from-input',
      tokenBudget: 5_000,
    });
    const options = subagentStartOptions(input, { workflowId: 'errand-abc123', tenant: 'acme', startedBy: 'api' });
    expect(options.staticSummary).toBe('triage — Read every open issue in the tracker and sort them by how …');
    expect(options.staticDetails).toContain('**Limits:** max turns 10 · depth 1 of 1 · token budget 5000');
    expect(options.staticDetails).toContain('**Source:** ad hoc');
    expect(options.staticDetails).toContain('**Started by:** api');
    const values = Object.fromEntries(options.typedSearchAttributes.map((pair) => [pair.key.name, pair.value]));
    expect(values).toEqual({
      ErrandKind: 'subagent',
      ErrandSource: 'ad-hoc',
      ErrandStatus: 'running',
      ErrandModel: 'scripted/scripted-model',
      ErrandTurns: 0,
      ErrandTenant: 'acme',
    });
  });

  test('a subagent from a recipe: the source names the summary, details give store and version', () => {
    const input = subagentInput({
      label: 'deploy',
      prompt: 'Deploy',
      workingDir: '/work',
      source: { kind: 'recipe', name: 'deploy', store: 'git:https://example.test/recipes#main', version: 'abc1234', path: 'deploy.yaml' },
    });
    const options = subagentStartOptions(input, { workflowId: 'errand-x' });
    expect(options.staticSummary).toBe('recipe deploy — Deploy');
    expect(options.staticDetails).toContain('**Source:** recipe `deploy` from git:https://example.test/recipes#main (version `abc1234`, deploy.yaml)');
    expect(options.typedSearchAttributes.find((pair) => pair.key.name === 'ErrandSource')?.value).toBe('deploy');
    expect(options.typedSearchAttributes.some((pair) => pair.key.name === 'ErrandTenant')).toBe(false);
  });

  test('a session with a first message starts as running; summaries stay on one short line', () => {
    const input = { ...sessionInput('/work', 'acme'), initialMessage: `Start with\nthis ${'word '.repeat(100)}` };
    const options = sessionStartOptions(input, { workflowId: 'errand-s' });
    expect(options.typedSearchAttributes.find((pair) => pair.key.name === 'ErrandStatus')?.value).toBe('running');
    expect(options.staticSummary).not.toContain('\n');
    expect(options.staticSummary.length).toBeLessThanOrEqual(200);
    expect(options.staticSummary.startsWith('session · release check — Start with this word')).toBe(true);
  });
});
