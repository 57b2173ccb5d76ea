import { parentPort } from 'node:worker_threads';
import type { WorkflowScriptRoundInput } from '../contracts/workflow-script';
import { runWorkflowScriptRound } from './run-script-round';
import type { RoundThreadReply } from './round-thread';

/**
 * The program of a workflow round's thread (see round-thread.ts): it runs one round per message and
 * answers with its output. An entry of its own in every build, so the thread loads only the sandbox.
 */

const port = parentPort;
if (port) {
  port.on('message', (request: { id: number; input: WorkflowScriptRoundInput }) => {
    void runWorkflowScriptRound(request.input).then(
      (output) => port.postMessage({ id: request.id, output } satisfies RoundThreadReply),
      (error: unknown) =>
        port.postMessage({
          id: request.id,
          output: { status: 'failed', diagnostic: { kind: 'error', message: `the round could not run: ${error instanceof Error ? error.message : String(error)}`, line: null }, logs: [] },
        } satisfies RoundThreadReply),
    );
  });
  port.postMessage({ ready: true });
}
