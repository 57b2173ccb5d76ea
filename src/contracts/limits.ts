/**
 * Every default and limit of errand (DESIGN.md convention 7), one file per owner under contracts/limits/:
 * workflow.ts (what workflow code reads, so what a replay sees), sources.ts, llm.ts, tools.ts,
 * activities.ts, observability.ts, api.ts, memory.ts, workflow-scripts.ts. Configuration may override
 * many of them; the names of the settings that do are given next to each value. Import from the owner's
 * file: this one re-exports them all for code that has not moved yet.
 */
export * from './limits/workflow';
export * from './limits/sources';
export * from './limits/llm';
export * from './limits/tools';
export * from './limits/activities';
export * from './limits/observability';
export * from './limits/api';
export * from './limits/memory';
export * from './limits/workflow-scripts';
