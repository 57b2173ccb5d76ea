/**
 * The limits of the built-in tools, commands and MCP servers (owned by src/tools). Part of errand's defaults
 * and limits: src/contracts/limits.ts re-exports every file of this folder.
 */

// ---- tools (owned by src/tools) -------------------------------------------------------------------
// (tools section)
/** Separator between toolset name and tool name in the qualified names the model sees (`developer__read_file`). */
export const toolNameSeparator = '__';
/** Most characters of tool output returned to the model (read_file, run_command, search_text, list_directory). */
export const toolOutputMaxChars = 50_000;
/** Largest file read_file will open, in bytes (a line range still needs the file to be read). */
export const readFileMaxBytes = 10 * 1024 * 1024;
/** Largest content write_file accepts, in characters. */
export const writeFileMaxChars = 5 * 1024 * 1024;
/** Most entries list_directory returns. */
export const listDirectoryMaxEntries = 500;
/** Default and ceiling of the number of matches search_text returns. */
export const searchTextDefaultMaxMatches = 100;
export const searchTextMaxMatchesCeiling = 1_000;
/** Files larger than this are skipped by search_text (bytes). */
export const searchTextMaxFileBytes = 1024 * 1024;
/** Most files search_text visits before stopping (bounds a search of a huge tree). */
export const searchTextMaxFiles = 20_000;
/** Longest line excerpt of a search_text match, in characters. */
export const searchTextMaxLineChars = 300;
/** Default and ceiling of run_command's timeout, in milliseconds. */
export const runCommandDefaultTimeoutMs = 120_000;
export const runCommandMaxTimeoutMs = 600_000;
/** Grace period between SIGTERM and SIGKILL when run_command stops a process group, in milliseconds. */
export const runCommandKillGraceMs = 2_000;
/**
 * The environment variables a model-run command (`run_command`) gets from the worker, besides the names the
 * operator lists (`ERRAND_COMMAND_ENV`). Nothing else passes: the worker's environment holds credentials.
 */
export const commandBaseEnvironment = ['PATH', 'HOME', 'LANG', 'TMPDIR'] as const;
/**
 * System folders a sandboxed command (`ERRAND_SANDBOX=bwrap`) sees, read-only, when they exist; the
 * working directory is the only writable place, `/tmp` and the home folder are private and empty.
 */
export const sandboxSystemPaths = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'] as const;
/** How long the worker's start-up check of the sandbox may take (it runs `true` inside one), in milliseconds. */
export const sandboxCheckTimeoutMs = 15_000;
/** How long the worker's start-up probe of process containment (a PID namespace per command) may take, in milliseconds. */
export const containmentProbeTimeoutMs = 5_000;
/** Recipe-server configs a worker remembers as checked against their recipe (then the set starts over). */
export const recipeVerifiedCacheEntries = 1_024;
/** Working directories one recipe server config may run a process for at once on a worker (one process each). */
export const maxRecipeServerInstancesPerConfig = 64;
/** How long after a delegation last claimed it an idle recipe server config may be retired to make room for another. */
export const recipeServerRetireAfterMs = 10 * 60_000;
/** Longest search_text pattern, in characters (a regular expression's program grows with its text). */
export const searchTextMaxPatternChars = 1_000;
/**
 * How long one search_text call may spend matching a regular expression, in milliseconds
 * (`ERRAND_SEARCH_TEXT_REGEX_DEADLINE_MS`). Matching runs
 * in a worker thread with a linear-time engine (RE2), so the worker's event loop keeps serving other
 * activities; past this the thread is stopped and the model is told to simplify the pattern.
 */
export const searchTextRegexDeadlineMs = 20_000;
/** Mode of a tenant's working folder, created on first use under the working root (owner and group only). */
export const tenantWorkingDirMode = 0o750;
