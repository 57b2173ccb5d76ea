import type { WorkflowDefinitionOptions } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';
import { movesUpMemoValue, versioningMemoKey } from '../contracts/versioning';

/**
 * What a versioned worker declares for a session (decision 0030): it moves to the current build at its next
 * workflow task. An unversioned worker ignores it.
 */
export const sessionDefinitionOptions: WorkflowDefinitionOptions = { versioningBehavior: 'AUTO_UPGRADE' };

/**
 * What a versioned worker declares for a subagent, read once when a run starts: a continuable (its memo says
 * so, see contracts/versioning.ts) moves to the current build; a one-shot subagent stays pinned to its build.
 */
export function subagentDefinitionOptions(): WorkflowDefinitionOptions {
  return { versioningBehavior: workflowInfo().memo?.[versioningMemoKey] === movesUpMemoValue ? 'AUTO_UPGRADE' : 'PINNED' };
}
