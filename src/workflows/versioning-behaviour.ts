import type { WorkflowDefinitionOptions } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';
import { movesUpMemoValue, versioningMemoKey } from '../contracts/versioning';

/**
 * Whether the run's first workflow task ran on a versioned worker (one with a worker deployment version).
 * Temporal refuses a versioning behaviour from an unversioned worker, so runs of unversioned workers declare
 * none; so do runs that started before versioning was turned on, which then take the versioned worker's
 * default (they move up, as unversioned runs do).
 */
function versioned(): boolean {
  // An unversioned worker has a build id too (the SDK's default), but no deployment name.
  return (workflowInfo().currentDeploymentVersion?.deploymentName ?? '') !== '';
}

/**
 * What a session declares on a versioned worker (decision 0030): it moves to the current build at its next
 * workflow task. Read once when the run starts.
 */
export function sessionDefinitionOptions(): WorkflowDefinitionOptions {
  return versioned() ? { versioningBehavior: 'AUTO_UPGRADE' } : {};
}

/**
 * What a subagent declares on a versioned worker, read once when a run starts: a continuable (its memo says
 * so, see contracts/versioning.ts) moves to the current build; a one-shot subagent stays pinned to its build.
 */
export function subagentDefinitionOptions(): WorkflowDefinitionOptions {
  if (!versioned()) return {};
  return { versioningBehavior: workflowInfo().memo?.[versioningMemoKey] === movesUpMemoValue ? 'AUTO_UPGRADE' : 'PINNED' };
}
