import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { asLiveText, type LiveText } from '../contracts/live-text';

/**
 * Reads the text a workflow's model call has written so far: the heartbeat details of its pending
 * `modelTurn` activity, as `describe()` returns them (the same field the Web UI shows in its pending
 * activities panel). A workflow cannot see another workflow's pending activities, so the API and the
 * parent's `load(peek)` (through an activity) read them here.
 */

/** Activity type of the model call, whose heartbeat details carry the text written so far. */
export const modelTurnActivityType = 'modelTurn';

/**
 * The text-so-far of the pending model call in `description`, if one is writing. Details of an earlier
 * attempt (Temporal keeps them for the next attempt) are left out: after a stream broke off, the retry's
 * text starts again from nothing, and the two are never shown as one.
 */
export async function pendingLiveText(converter: LoadedDataConverter, description: Pick<WorkflowExecutionDescription, 'raw'>): Promise<LiveText | undefined> {
  for (const pending of description.raw.pendingActivities ?? []) {
    if (pending.activityType?.name !== modelTurnActivityType) continue;
    const payloads = pending.heartbeatDetails?.payloads;
    if (!payloads || payloads.length === 0) continue;
    let values: unknown[];
    try {
      values = await decodeArrayFromPayloads(converter, payloads);
    } catch {
      continue; // not details of ours (another data converter): nothing to show
    }
    const live = asLiveText(values[values.length - 1]);
    if (!live) continue;
    const attempt = pending.attempt ?? undefined;
    if (live.attempt !== undefined && attempt !== undefined && live.attempt !== attempt) continue;
    return { ...live, ...(attempt === undefined ? {} : { attempt }) };
  }
  return undefined;
}

/** Describes `workflowId` and returns the text its model call has written so far (none when it is not writing or has ended). */
export async function readLiveText(client: Client, workflowId: string): Promise<LiveText | undefined> {
  let description: WorkflowExecutionDescription;
  try {
    description = await client.workflow.getHandle(workflowId).describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
  if (description.status.name !== 'RUNNING') return undefined;
  return pendingLiveText(client.options.loadedDataConverter, description);
}

export { livePartial } from '../contracts/live-text';
