import type { RunActivities } from '../contracts/run-activities';
import { commandEnvironment, type CommandOptions } from '../tools/command-environment';
import type { PathRules } from '../tools/confine-path';
import type { ToolPolicyConfig } from '../tools/tool-policy';
import type { BlobStore } from './blob-store';
import type { ConversationStore } from './conversation-store';
import { runCheck } from './check-activities';
import { runAgentHook } from './agent-hook-activity';
import type { HeartbeatSettings } from './heartbeat';
import { FinalOutputTools } from './final-output';
import { SafeGit } from './safe-git';
import { finishWorktree, prepareWorktree } from './worktree-activities';

/** What the run activities need; injected so tests and the worker choose the real parts. */
export interface RunActivityDependencies {
  blobs: BlobStore;
  /** How `run_command` runs on this worker (environment allow-list, sandbox): recipe checks run the same way. */
  commands: CommandOptions;
  /** The worker's path rules (working root, errand's own folders). */
  paths: PathRules;
  /** The worker's conversation store: an orchestration tool's result, which a PostToolUse hook reads, may refer to stored texts. */
  conversations?: ConversationStore;
  /** The operator's tool policy: a check runs only where `run_command` may. */
  toolPolicy?: ToolPolicyConfig;
  /** `ERRAND_WORKTREE_DIR`: where `isolation: worktree` puts worktrees (absent: inside the repository's git directory). */
  worktreeDir?: string;
  /** How checks heartbeat (keep-alive, the in-flight registry); absent: the defaults. */
  heartbeats?: HeartbeatSettings;
}

/**
 * Builds the activities that shape a delegation's run (SEMANTICS §5): storing the output schema of a
 * structured-output run, running a recipe's checks, and making and removing the worktree of an isolated
 * subagent.
 */
export function createRunActivities(deps: RunActivityDependencies): RunActivities {
  const finalOutput = new FinalOutputTools(deps.blobs);
  // git in a model's repository runs with the command allow-list, never the worker's credentials (safe-git.ts).
  // With the sandbox configured, that git runs in it too, seeing only the tenant's folder (safe-git.ts).
  const git = new SafeGit(commandEnvironment(deps.commands), deps.commands.sandbox);
  const worktrees = { blobs: deps.blobs, git, paths: deps.paths, ...(deps.worktreeDir !== undefined ? { worktreeDir: deps.worktreeDir } : {}) };
  return {
    storeOutputSchema: (input) => finalOutput.storeSchema(input.conversationId, input.schema),
    runCheck: (input) => runCheck(input, { blobs: deps.blobs, commands: deps.commands, paths: deps.paths, ...(deps.toolPolicy ? { toolPolicy: deps.toolPolicy } : {}), ...(deps.heartbeats ? { heartbeats: deps.heartbeats } : {}) }),
    runAgentHook: (input) => runAgentHook(input, { blobs: deps.blobs, ...(deps.conversations ? { conversations: deps.conversations } : {}), commands: deps.commands, paths: deps.paths, ...(deps.toolPolicy ? { toolPolicy: deps.toolPolicy } : {}), ...(deps.heartbeats ? { heartbeats: deps.heartbeats } : {}) }),
    prepareWorktree: (input) => prepareWorktree(input, worktrees),
    finishWorktree: (input) => finishWorktree(input, worktrees),
  };
}
