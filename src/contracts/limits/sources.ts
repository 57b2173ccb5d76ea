/**
 * The limits of recipes, agent files and their stores (owned by src/sources). Part of errand's defaults and
 * limits: src/contracts/limits.ts re-exports every file of this folder.
 */

// ---- sources (owned by src/sources) ---------------------------------------------------------------
// (sources section)
/** Largest source file (recipe or agent) a store will read; bigger files are refused. */
export const maxSourceFileBytes = 1024 * 1024;
/**
 * Work one recipe template may do while it renders (each expression, filter, loop turn and printed piece
 * counts); past it rendering stops with an error naming the file, so a nested loop cannot hold the worker.
 */
export const maxTemplateSteps = 200_000;
/**
 * Characters one template may produce (the rendered recipe, parameter values included); also the most text
 * any one value of a template may stand for (a list counts each item each time it appears, shared or not).
 */
export const maxTemplateOutputChars = 2 * 1024 * 1024;
/** How deeply a value of a template (lists in lists, objects in objects) may nest. */
export const maxTemplateValueDepth = 64;
/**
 * How long one recipe may take to render (in a thread of its own, off the event loop): past it the thread
 * is stopped and rendering ends with a template-limit error. The step and size limits stop every known
 * case far sooner; this holds whatever they miss.
 */
export const templateRenderDeadlineMs = 5_000;
/** Heap (MiB) of a rendering thread: a render that would fill more ends the thread, never the process. */
export const templateThreadHeapMb = 256;
/** Rendering threads one process runs at once; further renders wait for one. */
export const maxTemplateThreads = 4;
/** How deeply a template may nest blocks and expressions (the parser and renderer recurse on them). */
export const maxTemplateNesting = 64;
/** How long a store's listing is served from cache before it is listed again. */
export const sourceListingTtlMs = 60_000;
/**
 * Working directories whose project-folder resolvers a worker (or the API) keeps at once; the least
 * recently used is dropped past it. The operator's and user-level stores are shared, not counted here.
 */
export const maxCachedSourceDirectories = 64;
/** Minimum time between two fetches of a git-synced store (a discovery call fetches regardless). */
export const gitSyncIntervalMs = 60_000;
/** Time limit of one git command (clone, fetch, checkout). */
export const gitCommandTimeoutMs = 120_000;
/** How long a sync waits for another process's lock on the same checkout before it fails. */
export const fileLockWaitMs = 10 * 60_000;
/** A lock file older than this was left by a process that died, and is broken. */
export const fileLockStaleMs = 15 * 60_000;
/** How often a waiting sync looks at the lock again. */
export const fileLockPollMs = 200;
/** Bound on ListObjectsV2 pages read for one S3 listing (1000 keys each). */
export const maxS3ListPages = 100;
/** Bound on entries one store may list. */
export const maxStoreEntries = 10_000;
/** How deep an agent folder (`.claude/agents/team/reviewer.md`) is scanned below its top: folders deeper are not entered. */
export const maxAgentFolderDepth = 5;
/** Length at which descriptions are cut in the `load` listing. */
export const listingDescriptionChars = 160;
/** How many "did you mean" names a not-found answer offers. */
export const maxNameSuggestions = 3;
/** Time limit of one goose `retry` check command when the recipe sets no `timeout_seconds` (goose's default). */
export const defaultRetryCheckTimeoutSeconds = 300;
/** Time limit of a goose `retry` `on_failure` command when the recipe sets no `on_failure_timeout_seconds` (goose's default). */
export const defaultRetryOnFailureTimeoutSeconds = 600;
/** Largest output schema (`output_schema`, `response.json_schema`) accepted, in characters of JSON. */
export const maxOutputSchemaChars = 64 * 1024;
/** Characters of a failed check's output kept in the result's diagnostic (its start and end); the whole output is stored by reference. */
export const checkOutputPreviewChars = 2_000;
/** Time added to a check's own time limit for the activity that runs it (starting the process, storing the outcome), ms. */
export const checkActivityMarginMs = 60_000;
/** Invalid `final_output` calls one run may make before it ends `failed` (SEMANTICS §5). */
export const maxInvalidFinalOutputs = 3;
/** Largest structured result (`final_output` arguments) accepted, in characters of JSON. */
export const maxStructuredOutputChars = 64 * 1024;
/**
 * Where `isolation: worktree` puts a subagent's git worktree when `ERRAND_WORKTREE_DIR` is not set: this
 * folder inside the repository's git directory (outside its work tree, inside the tenant's folder).
 */
export const defaultWorktreeFolderName = 'errand-worktrees';
/**
 * Most entries of a repository's git directory checked, without the sandbox, before the worker runs git
 * there for `isolation: worktree` (every one must be no symbolic link); a larger one is refused.
 */
export const maxGitDirEntriesChecked = 200_000;
/** Largest `.git` file (`gitdir: …`), `commondir` file or repository `config` the worker reads to check a repository. */
export const maxGitMetadataFileBytes = 64 * 1024;
/** Branch names `errand/<name>-<n>` tried when `errand/<name>` is taken in the repository by another delegation. */
export const maxWorktreeBranchSuffix = 100;
/** Whether an agent file's `permissionMode: bypassPermissions` may be used (`ERRAND_ALLOW_BYPASS_PERMISSIONS`). */
export const defaultAllowBypassPermissions = false;
/**
 * Longest `persona` of a delegation, in characters: a persona says who the subagent is (role, voice,
 * standards) in a few paragraphs; reference material belongs in `context`, which has no such limit.
 */
export const maxPersonaChars = 4_000;
