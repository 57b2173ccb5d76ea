import type { ProviderChoice } from '../domain/model-precedence';
import { providerChoices } from '../llm/provider-config';
import type { ErrandConfig } from '../settings/config';
import type { TaskLimits } from '../contracts/subagent';
import type { PathRules } from '../tools/confine-path';
import type { SourceResolver } from '../sources/source-resolver';
import type { BlobStore } from './blob-store';

/** What planning needs besides the request and the parent. */
export interface PlanContext {
  resolver: SourceResolver;
  providers: readonly ProviderChoice[];
  configuredDefault: { provider: string; model: string } | undefined;
  override: { provider?: string; model?: string };
  /** ERRAND_SUBAGENT_MAX_TURNS (or the default 25). */
  configuredMaxTurns: number;
  /**
   * ERRAND_MAX_OUTPUT_TOKENS: the output-token limit a recipe's `settings.max_output_tokens` may not raise
   * (a model entry's own `maxOutputTokens` wins for that model). No cap from it when absent.
   */
  configuredMaxOutputTokens?: number;
  /** Toolsets the operator has registered (names a delegation may ask for). */
  availableToolsets: readonly string[];
  tasks: TaskLimits;
  /** How long a tool call under `ask` waits for a decision (ms). */
  approvalTimeoutMs: number;
  /**
   * Whether recipe-declared MCP servers may run, which worker environment variables they may get, and
   * where they may come from: the working root (tenant folders) and the folders under it the operator
   * trusts (`ERRAND_TRUSTED_RECIPE_DIRS`). Without `workingRoot` no recipe's servers are planned.
   */
  mcp: { allowRecipeServers: boolean; recipeEnvKeys?: string[]; workingRoot?: string; trustedRecipeDirs?: readonly string[] };
  /** The working directory whose sources `resolver` lists (recorded so the worker can resolve a recipe again). */
  resolveDir?: string;
  /** The worker's path rules, applied to `file` parameters like to tool paths (absent in the API). */
  paths?: PathRules;
  /**
   * Whether the workers' disk is this machine's: true on a worker; for the API, whether the configured
   * working root exists here (beside its workers) or not (a serverless function). Checks that look at the
   * working directory (is it in a git repository?) run only where it is true. Default true. A function is
   * asked only when such a check comes up (the API's answer is a file-system call, kept off plain starts).
   */
  workersDiskIsLocal?: boolean | (() => boolean);
  /**
   * The operator's caps of a delegation (`ERRAND_MAX_TIME_BUDGET_SECS`, `ERRAND_MAX_COST_BUDGET_USD`): a
   * request may ask for less, never more; a delegation that asks for none runs under them.
   */
  caps?: { timeBudgetMs?: number; costBudgetMicroUsd?: number };
  /** Whether an agent's `permissionMode: bypassPermissions` may be used (`ERRAND_ALLOW_BYPASS_PERMISSIONS`; default no). */
  allowBypassPermissions?: boolean;
  /** errand's blob store, where agents' memory folders live (an agent with `memory` is refused without it). */
  memoryStore?: BlobStore;
}

/**
 * What planning takes from the configuration alone, the same for the worker's `delegate` tool and the API's
 * starts: models and their precedence, limits and caps, task limits, approvals, recipe servers, and the
 * store of agents' memory folders. Each adds what is its own (toolsets, paths, where sources are listed).
 */
export function configuredPlanning(config: ErrandConfig, memoryStore?: BlobStore): Omit<PlanContext, 'resolver' | 'availableToolsets'> {
  return {
    providers: providerChoices(config.providers),
    configuredDefault: config.defaultModel,
    override: {
      ...(config.subagent.providerOverride ? { provider: config.subagent.providerOverride } : {}),
      ...(config.subagent.modelOverride ? { model: config.subagent.modelOverride } : {}),
    },
    configuredMaxTurns: config.subagent.maxTurns,
    configuredMaxOutputTokens: config.model.maxOutputTokens,
    caps: config.caps,
    tasks: config.tasks,
    approvalTimeoutMs: config.approvalTimeoutMs,
    allowBypassPermissions: config.allowBypassPermissions,
    mcp: {
      allowRecipeServers: config.tools.settings.allowRecipeServers ?? false,
      ...(config.tools.settings.recipeEnvKeys ? { recipeEnvKeys: config.tools.settings.recipeEnvKeys } : {}),
      workingRoot: config.workingDir,
      ...(config.tools.settings.trustedRecipeDirs ? { trustedRecipeDirs: config.tools.settings.trustedRecipeDirs } : {}),
    },
    ...(memoryStore ? { memoryStore } : {}),
  };
}
