import type { JsonObject } from './json';
import type { ChatMessage } from './model';
import type { SourceSnapshot } from './source';

/**
 * Wire types shared by the workflow inputs (contracts/subagent.ts, contracts/session.ts) and the activity
 * signatures (contracts/activities.ts). Kept apart so those two files do not import each other. JSON only.
 */

/**
 * A narrowing of the operator's tool policy (JSON copy of the schema in src/tools/tool-policy.ts, kept
 * here so workflow code does not import tool code). Decisions: allow, ask, deny; the strictest wins.
 */
export interface ToolPolicyNarrowingWire {
  default?: 'allow' | 'ask' | 'deny';
  rules?: Record<string, 'allow' | 'ask' | 'deny'>;
  /** An agent's `permissionMode: dontAsk`: a final `ask` is a `deny`. */
  askBecomes?: 'deny';
  /** An agent's `acceptEdits` / `bypassPermissions`: tools whose operator `ask` by default (no rule) becomes `allow`. */
  allowOverDefaultAsk?: string[];
}

/**
 * An MCP server a recipe declared, converted for errand (JSON copy of `RecipeServer` in src/tools/mcp-config.ts;
 * the worker re-validates the config before it starts anything).
 */
export interface RecipeServerWire {
  /** The name the recipe gave the extension. */
  declaredName: string;
  /** The server config; its `name` is the registered toolset name (`recipe-<name>-<hash>`). */
  config: JsonObject;
  /**
   * Which definition declared it, so the worker can find that definition itself and check the config
   * against it, and where it lives, before anything starts (src/sources/recipe-server-trust.ts).
   */
  origin?: RecipeServerOrigin;
}

/** Where a recipe-declared server came from: looked up again by the worker, never trusted as given. */
export interface RecipeServerOrigin {
  /** The source name the definition was resolved by. */
  source: string;
  /** The working directory whose sources it was resolved among. */
  resolveDir: string;
  /** The delegation's working directory (what the definition was rendered for). */
  workingDir: string;
  /** The parameter values it was rendered with. */
  values: Record<string, string>;
}

/** A person's (or the parent's) decision on a tool call that needed approval. */
export interface ApprovalDecision {
  decision: 'approve' | 'deny';
  reason?: string;
  /** Who decided: `api:<tenant>`, `parent`, `timeout`, ... */
  by: string;
}

/**
 * The recipe a session or subagent runs, as resolved when it started: its `sub_recipes` are sources for
 * its delegations, and the values it was rendered with render templated subrecipe `values`.
 */
export interface RunningRecipe {
  snapshot: SourceSnapshot;
  values: Record<string, string>;
}

/** Where one stored message lives: its conversation and sequence number (a blob reference). */
export interface MessageRef {
  conversationId: string;
  seq: number;
}

/** Text given inline, or by reference to a stored message's text or a stored blob (read by the activity). */
export type TextPart = string | { ref: MessageRef; /** The text is a task's own words: escaped as child-words.ts says. */ childWords?: true } | { blobKey: string; childWords?: true };

/** A message to store: a ChatMessage whose content may be assembled from parts (so long texts stay out of history). */
export type MessageInput =
  | ChatMessage
  | { role: 'user'; parts: TextPart[] }
  | { role: 'tool'; toolCallId: string; toolName: string; parts: TextPart[]; isError?: boolean };

/**
 * A git worktree made for a subagent (`isolation: worktree`), as the workflow carries it: made once at
 * the start (idempotent), removed at the end when nothing changed in it.
 */
export interface PreparedWorktree {
  /** Absolute path of the new worktree's top folder. */
  path: string;
  /** Its branch, `errand/<task id>` (or `errand/<task id>-<n>` when that name was taken). */
  branch: string;
  /** The commit it started from (HEAD of the working directory's checkout). */
  base: string;
  /** Where the subagent works: the worktree, or the same subfolder of it the working directory was of its repository. */
  workingDir: string;
  /** The working directory the delegation was given, symlinks resolved (the result names the worktree relative to it). */
  originalWorkingDir: string;
  /** The top folder of the repository's work tree the worktree was made from (where git removes it). */
  repository: string;
  /** `workingDir` relative to `originalWorkingDir`: how results name it (never a server path). */
  relativePath: string;
}

/** What became of a subagent's worktree at its end. */
export interface WorktreeOutcome {
  branch: string;
  /** Where the subagent worked, relative to the working directory it was delegated with. */
  path: string;
  /** True when it holds changes (a diff, untracked files or new commits): worktree and branch stay. Otherwise both were removed. */
  changed: boolean;
}

/** Where older turns of a conversation were summarised (context compaction). */
export interface ContextWindowState {
  /** Messages `0..head-1` (system prompt and task) are always sent verbatim. */
  head: number;
  /** Blob key of the summary that stands for messages `head..tailStart-1`. */
  summaryKey: string;
  /** Messages from here on are sent verbatim. */
  tailStart: number;
  /** How many compactions this conversation has had. */
  compactions: number;
}

/**
 * The start of another conversation that a conversation continues, by reference (a fork's parent turns):
 * what that conversation's model saw of its messages `0..length-1` — with its compaction state, and its own
 * prefix when it is a fork itself. Never copied: the model-call activity reads it from the store.
 */
export interface ConversationPrefix {
  conversationId: string;
  /** Messages `0..length-1` of that conversation (it ends with a completed turn). */
  length: number;
  /** Its compaction state when the fork was made. */
  window?: ContextWindowState;
  /** Its own prefix, when that conversation is a fork too. */
  prefix?: ConversationPrefix;
}
