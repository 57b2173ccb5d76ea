/**
 * The pure rooms' modules the workflow code uses (src/contracts, src/domain), loaded once into a worker's
 * shared workflow sandbox before any workflow runs (the bundle's `preloadModules`,
 * src/temporal/workflow-bundle-options.ts; decision 0051). A module a workflow loads itself is instantiated
 * again for each cached workflow (its functions, their compiled code and feedback, its constants); these are
 * shared instead: 5,000 waiting subagents with 500 cached took 1,114 MB of worker memory without this list
 * and 777 MB with it (bench figure worker-memory).
 *
 * What may be here: modules with no state of their own (constants, types, pure functions; a bounded memo of
 * a pure function), whose top level calls nothing that needs a running workflow.
 * test/temporal/shared-workflow-modules.test.ts keeps this list equal to the contracts and domain modules the
 * workflow bundle holds, and checks they keep no state at their top level.
 */
import '../contracts/failures';
import '../contracts/limits/api';
import '../contracts/limits/memory';
import '../contracts/limits/sources';
import '../contracts/limits/tools';
import '../contracts/limits/workflow-scripts';
import '../contracts/limits/workflow';
import '../contracts/live-text';
import '../contracts/mcp-session-messages';
import '../contracts/mcp-session';
import '../contracts/model';
import '../contracts/planning-failure';
import '../contracts/search-attributes';
import '../contracts/subagent-messages';
import '../contracts/subagent-state';
import '../contracts/subagent';
import '../contracts/tenant-spend-messages';
import '../contracts/tenant-spend';
import '../contracts/versioning';
import '../contracts/wire-names';
import '../contracts/workflow-ids';
import '../contracts/workflow-run-messages';
import '../contracts/workflow-run';
import '../domain/activity-time-limits';
import '../domain/agent-ledger';
import '../domain/agent-state';
import '../domain/check-texts';
import '../domain/child-budgets';
import '../domain/child-result';
import '../domain/child-words';
import '../domain/definition-limits';
import '../domain/delegation-texts';
import '../domain/final-output';
import '../domain/message-queue';
import '../domain/model-cost';
import '../domain/notice-parts';
import '../domain/notices';
import '../domain/orchestration-tools';
import '../domain/run-caps';
import '../domain/session-prompt';
import '../domain/subagent-prompt';
import '../domain/task-limits';
import '../domain/task-registry';
import '../domain/workflow-run-task';
import '../domain/worktree-names';
