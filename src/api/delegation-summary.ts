import { staticSummaryMaxChars, summaryInstructionWords } from '../contracts/limits';
import type { SourceSummary, SubagentInput } from '../contracts/subagent';

/**
 * The one-line static summary and the Markdown static details the Temporal Web UI shows for a delegation
 * (DESIGN.md convention 10): what ran, from where, with which model — readable without opening the input.
 */

function firstWords(text: string, count: number): string {
  const words = text.trim().split(/\s+/).filter((word) => word !== '');
  const head = words.slice(0, count).join(' ');
  return words.length > count ? `${head} …` : head;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `<label or source> — <first words of the task>`, on one line. */
export function delegationStaticSummary(input: SubagentInput, source: SourceSummary | undefined): string {
  const prefix = source ? `${source.kind} ${source.name}` : input.label;
  const words = firstWords(input.prompt, summaryInstructionWords);
  const line = words === '' || words === prefix ? prefix : `${prefix} — ${words}`;
  return cut(line.replace(/\s+/g, ' '), staticSummaryMaxChars);
}

/** Markdown details: source and version, model, limits, working directory, tenant. */
export function delegationStaticDetails(input: SubagentInput, source: SourceSummary | undefined, startedBy: string): string {
  const lines = [
    `**Task:** ${input.label}`,
    source ? `**Source:** ${source.kind} \`${source.name}\` from ${source.store} (version \`${source.version}\`${source.path ? `, ${source.path}` : ''})` : '**Source:** ad hoc (instructions only)',
    `**Model:** \`${input.route.provider}/${input.route.model}\`${input.route.temperature === undefined ? '' : ` · temperature ${input.route.temperature}`} · max turns ${input.maxTurns}`,
    `**Toolsets:** ${input.toolsets.length > 0 ? input.toolsets.join(', ') : '(none)'}`,
    `**Working directory:** \`${input.workingDir}\``,
    ...(input.tenant ? [`**Tenant:** ${input.tenant}`] : []),
    ...(input.continuable ? ['**Continuable:** yes (accepts messages after answering)'] : []),
    `**Started by:** ${startedBy}`,
  ];
  return lines.join('  \n');
}
