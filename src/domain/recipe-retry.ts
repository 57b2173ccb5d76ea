import { defaultRetryCheckTimeoutSeconds, defaultRetryOnFailureTimeoutSeconds } from '../contracts/limits/sources';
import type { RetryPolicy } from '../contracts/subagent';
import type { RecipeDefinition } from '../contracts/recipe-schema';

/**
 * A recipe's goose `retry` as the typed policy a subagent input carries, with goose's default time
 * limits filled in (300 s per check, 600 s for `on_failure`). Pure. Undefined when the recipe has none.
 */
export function recipeRetryPolicy(recipe: RecipeDefinition): RetryPolicy | undefined {
  const retry = recipe.retry;
  if (retry === undefined || retry === null) return undefined;
  return {
    maxRetries: retry.max_retries,
    checks: retry.checks.map((check) => ({ type: check.type, command: check.command })),
    ...(retry.on_failure ? { onFailure: retry.on_failure } : {}),
    timeoutSeconds: retry.timeout_seconds ?? defaultRetryCheckTimeoutSeconds,
    onFailureTimeoutSeconds: retry.on_failure_timeout_seconds ?? defaultRetryOnFailureTimeoutSeconds,
  };
}
