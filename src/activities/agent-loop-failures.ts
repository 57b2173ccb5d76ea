import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { FailureType } from '../contracts/failures';
import type { ModelTurnInput } from '../contracts/activities';
import type { ModelInfo, ModelRegistry } from '../llm/model-port';
import { classifyModelError } from '../llm/classify-model-error';
import { isToolsetRegistryError } from '../tools/toolset-registry';
import { isBlobConflictError } from './blob-store';
import { isConversationMessageConflictError, isConversationMessageMissingError } from './conversation-store';

/*
 * How the agent-loop activities end in failure: each error is classified once, where the activity ends,
 * into an ApplicationFailure with a type from contracts/failures.ts (the workflow matches types only).
 */

/** Throws `error` as the ApplicationFailure its kind calls for (a model error, a missing toolset); cancellation passes through. */
export function classifyAndThrow(error: unknown): never {
  if (error instanceof CancelledFailure) throw error;
  // A toolset this run needs is not configured here (an MCP server removed from config, a recipe server the
  // operator does not allow): a configuration problem, not the model's, and no retry fixes it (review m18).
  if (isToolsetRegistryError(error)) throw ApplicationFailure.create({ type: FailureType.toolsetUnavailable, message: error.message, nonRetryable: true });
  const failure = classifyModelError(error);
  throw ApplicationFailure.create({
    type: failure.type,
    message: failure.message,
    nonRetryable: !failure.retryable,
    ...(failure.retryAfterMs !== undefined ? { nextRetryDelay: failure.retryAfterMs } : {}),
  });
}

/**
 * A missing or conflicting conversation entry is a broken invariant, not a passing fault: it is made a
 * non-retryable failure with a clear message instead of being retried until the activity times out.
 */
export async function classifyStoreErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isConversationMessageMissingError(error) || isConversationMessageConflictError(error) || isBlobConflictError(error)) {
      throw ApplicationFailure.create({ type: FailureType.blobMissing, message: error.message, nonRetryable: true });
    }
    throw error;
  }
}

/** The model of a route; a route no configured model serves fails once, without retries. */
export function resolveModel(models: ModelRegistry, input: { route: ModelTurnInput['route'] }) {
  try {
    return models.resolve(input.route);
  } catch (error) {
    throw ApplicationFailure.create({ type: FailureType.modelNotConfigured, message: error instanceof Error ? error.message : String(error), nonRetryable: true });
  }
}

/** What the configuration says of a route's model (context window, output limit, efforts); fails like {@link resolveModel}. */
export function modelInfo(models: ModelRegistry, input: { route: ModelTurnInput['route'] }) {
  try {
    return models.modelInfo(input.route);
  } catch (error) {
    throw ApplicationFailure.create({ type: FailureType.modelNotConfigured, message: error instanceof Error ? error.message : String(error), nonRetryable: true });
  }
}

/**
 * A route's effort must be one its model's entry lists. Planning only makes such routes; a route given
 * directly (a session or subagent input started by hand) is checked here, so it fails once with a clear
 * message instead of as a provider's 400 after retries.
 */
export function checkReasoningEffort(info: ModelInfo, effort: string | undefined): void {
  if (effort === undefined || info.reasoningEfforts.includes(effort)) return;
  throw ApplicationFailure.create({
    type: FailureType.modelNotConfigured,
    message:
      info.reasoningEfforts.length === 0
        ? `reasoning effort "${effort}" cannot be sent: model ${info.provider}/${info.model} takes none (its provider entry lists no reasoningEfforts)`
        : `reasoning effort "${effort}" is not one model ${info.provider}/${info.model} takes; valid: ${info.reasoningEfforts.join(', ')}`,
    nonRetryable: true,
  });
}
