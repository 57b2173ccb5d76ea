import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callToolUpdate } from '../../src/contracts/mcp-session-messages';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { childWorkflowId } from '../../src/contracts/workflow-ids';
import type { SourceResolver } from '../../src/sources/source-resolver';
import { endingRefusal } from '../../src/workflows/ending-guard';
import { ScriptedModel } from '../../src/llm/scripted-model';
import type { WorkerDependencies } from '../../src/worker/worker-dependencies';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Review minor 6: an MCP tool call runs in an update handler, outside the session's loop. A session that
 * ends (here: cancelled) while a `delegate` call is being planned used to start the child once the planning
 * came back, with no owner to cancel it. The session now waits for its running handlers at its end, and the
 * call is refused, naming why; no child exists. The planning is held on purpose: the resolver of the
 * recipe the call names waits until the test lets it go.
 */

let release: () => void = () => undefined;
const held = new Promise<void>((resolveHeld) => (release = resolveHeld));
let reached: () => void = () => undefined;
const planningReached = new Promise<void>((resolveReached) => (reached = resolveReached));

/** The worker's resolver, with the planning of `held-recipe` held until the test lets it go. */
function holdingPlanning(dependencies: WorkerDependencies): WorkerDependencies {
  const real = dependencies.resolverFor;
  return {
    ...dependencies,
    resolverFor: (dir: string): SourceResolver => {
      const resolver = real(dir);
      return new Proxy(resolver, {
        get(target, property, receiver) {
          if (property !== 'resolve') return Reflect.get(target, property, receiver) as unknown;
          return async (...args: Parameters<SourceResolver['resolve']>) => {
            if (args[0] === 'held-recipe') {
              reached();
              await held;
            }
            return target.resolve(...args);
          };
        },
      });
    },
  };
}

const stack = useWorkerStack({ label: 'mcp-session-ending', scripted: { scripted: { model: new ScriptedModel([]) } }, adjust: holdingPlanning });

beforeAll(() => {
  mkdirSync(join(stack.workingDir, '.goose', 'recipes'), { recursive: true });
  writeFileSync(join(stack.workingDir, '.goose', 'recipes', 'held-recipe.yaml'), 'version: 1.0.0\ntitle: held\ndescription: a recipe whose planning the test holds\ninstructions: Say done.\n');
});

// Registered after the stack, so it runs before the worker stops: a held planning would keep it from stopping.
afterAll(() => {
  release();
});

describe('an MCP session that ends while a delegate call is planned', () => {
  it('refuses the call instead of starting a child no one would cancel, and ends cancelled', async () => {
    const handle = await stack.startSession({ label: 'ending while planning', mcp: true }, 'mcp-ending');
    const workflowId = handle.workflowId;
    const call = handle.executeUpdate(callToolUpdate, { args: [{ name: 'delegate', arguments: { source: 'held-recipe', description: 'held', async: true } }] });
    await planningReached;
    await handle.signal(cancelSignal, { reason: 'the client went away' });
    // The session is ending and waits for the call; the planning comes back only now.
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_500));
    expect((await handle.describe()).status.name).toBe('RUNNING');
    release();
    const answered = await call;
    expect(answered.isError).toBe(true);
    expect(answered.parts).toEqual([endingRefusal('delegate')]);
    const result = (await handle.result()) as { status: string };
    expect(result.status).toBe('cancelled');
    const child = await stack.client.workflow.getHandle(childWorkflowId(workflowId, 'task-1')).describe().then(() => 'exists', (error: unknown) => (error instanceof WorkflowNotFoundError ? 'none' : String(error)));
    expect(child).toBe('none');
  });
});
