/**
 * The limits of agent memory, skills and hooks (decision 0031). Part of errand's defaults and limits:
 * src/contracts/limits.ts re-exports every file of this folder.
 */

// ---- agent memory and skills (Claude Code `memory` / `skills`, decision 0031) ------------------------
/** Lines of an agent's `MEMORY.md` put into its system prompt (Claude Code's figure). */
export const agentMemoryPromptMaxLines = 200;
/** Bytes (UTF-8) of an agent's `MEMORY.md` put into its system prompt, at most (Claude Code's 25 KB). */
export const agentMemoryPromptMaxBytes = 25 * 1024;
/** Largest file an agent's memory tools write or read back whole, in bytes. */
export const agentMemoryFileMaxBytes = 256 * 1024;
/** Most files one agent memory folder holds; a write of a new file past it is refused. */
export const agentMemoryMaxFiles = 200;
/** Longest path of a file inside a memory folder, in characters. */
export const agentMemoryPathMaxLength = 200;
/** Most folder levels of a path inside a memory folder (`topics/api/errors.md` is 3). */
export const agentMemoryPathMaxDepth = 6;
/** Times a memory write retries after another write of the same file won the race for its next revision. */
export const agentMemoryWriteAttempts = 5;
/**
 * Revisions of each memory file kept by default (`ERRAND_MEMORY_REVISIONS_KEPT`): a write deletes those
 * older than the last this many, so a file's revisions, and what a read lists, stay bounded.
 */
export const defaultAgentMemoryRevisionsKept = 10;
/** The most revisions of a memory file an operator may keep (`ERRAND_MEMORY_REVISIONS_KEPT`). */
export const agentMemoryRevisionsKeptMax = 1_000;
/** Longest agent name that names a memory folder; longer names cannot have memory. */
export const agentMemoryNameMaxLength = 64;
/** Most skills one agent file preloads (`skills`). */
export const agentSkillsMax = 32;
/** Most bytes of skill text (all preloaded `SKILL.md` files together) put into one system prompt. */
export const agentSkillsMaxTotalBytes = 256 * 1024;

/**
 * Claude Code agent-file `hooks` (decision 0032): a command hook's time limit when it names none, in
 * seconds (Claude Code's own default), and the most one may ask for (a hook blocks its tool call or the
 * end of the run while it runs).
 */
export const agentHookDefaultTimeoutSeconds = 60;
/** The longest time limit a command hook may set, in seconds. */
export const agentHookMaxTimeoutSeconds = 600;
/** The most characters of a hook's feedback (its stderr, its reason, its additional context) the model gets; start and end are kept. */
export const agentHookFeedbackMaxChars = 10_000;
/** The longest `matcher` an agent-file hook may have (it is a regular expression over tool names). */
export const agentHookMatcherMaxChars = 200;
/** Headers one `http` hook may set. */
export const agentHookHttpHeadersMax = 20;
/** Bytes of an `http` hook's answer the worker reads; a longer answer is a non-blocking error. */
export const agentHookHttpAnswerMaxBytes = 1_048_576;
