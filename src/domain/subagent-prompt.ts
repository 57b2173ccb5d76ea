import { finalOutputPromptSection } from './final-output';
import type { MemoryPromptPart, PreloadedSkill } from '../contracts/subagent';
import { agentMemoryPromptMaxLines } from '../contracts/limits/memory';

/**
 * Pure text builders for a subagent's conversation. Used by workflow code: no I/O, deterministic.
 */

/** Parts a subagent's system prompt is made of. */
export interface SystemPromptParts {
  instructions?: string;
  context?: string;
  /** Who the subagent is (`persona` on `delegate`): a section of its own, apart from instructions and context. */
  persona?: string;
  workingDir: string;
  maxTurns: number;
  toolsets: string[];
  /** Whether the agent may delegate (load / delegate tools offered). */
  canDelegate?: boolean;
  /** It finishes by calling `final_output` (structured output). */
  finalOutput?: boolean;
  /** It works in a git worktree on this branch (`isolation: worktree`). */
  worktreeBranch?: string;
  /** Skills its agent file preloads (`skills`), full text. */
  skills?: PreloadedSkill[];
  /** Its memory folder's scope and the start of its MEMORY.md (`memory`). */
  memory?: MemoryPromptPart;
}

/**
 * The memory section (Claude Code's `memory`, decision 0031): what the folder is for, how to reach it,
 * and the start of MEMORY.md, marked as the agent's own notes.
 */
export function memoryPromptSection(memory: MemoryPromptPart): string {
  const lines = [
    '# Agent memory',
    '',
    `You have a persistent memory folder (scope: ${memory.scope}) that outlives this task: later delegations of this agent start with ` +
      'the start of its MEMORY.md below. Reach it only with the memory tools (memory__read, memory__write, memory__edit, memory__list) and ' +
      'paths under memory/ (memory/MEMORY.md, memory/<topic>.md); it is not in your working directory. Before you finish, record what ' +
      'will help next time (patterns, decisions, pitfalls) and keep memory/MEMORY.md a short index: ' +
      `its first ${agentMemoryPromptMaxLines} lines are all that is shown at the start, so move details into topic files.`,
    '',
  ];
  if (memory.excerpt.trim() === '') {
    lines.push('memory/MEMORY.md is empty or does not exist yet.');
  } else {
    lines.push('The start of memory/MEMORY.md:', '', '<agent-memory>', memory.excerpt, '</agent-memory>');
    if (memory.truncated) lines.push('', 'MEMORY.md goes on past this point: read it with memory__read, and shorten it.');
  }
  return lines.join('\n');
}

/** The preloaded skills section: each skill's SKILL.md as its agent file asked for it, in order. */
export function skillsPromptSection(skills: readonly PreloadedSkill[]): string {
  return ['# Skills', '', 'These skills were loaded for you at start; follow them where they apply.', ...skills.map((skill) => `\n## Skill: ${skill.name}\n\n${skill.content.trim()}`)].join('\n');
}

/** Builds the system prompt of a subagent. */
export function buildSubagentSystemPrompt(parts: SystemPromptParts): string {
  const sections: string[] = [
    'You are a subagent: another agent delegated a task to you. Work on it on your own and finish with a final answer ' +
      'that stands alone, because your final message is all the delegating agent will see.',
    `Your working directory is ${parts.workingDir}. You have at most ${parts.maxTurns} turns (model calls).`,
    parts.toolsets.length > 0 ? `Toolsets available to you: ${parts.toolsets.join(', ')}.` : 'You have no tools: answer from what you know.',
  ];
  if (parts.worktreeBranch) {
    sections.push(
      `Your working directory is in a git worktree of its own, on branch ${parts.worktreeBranch}: your changes stay apart from the main ` +
        'checkout, and they are kept (committed or not) for the delegating agent to review.',
    );
  }
  if (parts.canDelegate) {
    sections.push('You may delegate parts of the work with the `delegate` tool; `load` lists what can be delegated and your background tasks.');
  }
  if (parts.persona && parts.persona.trim().length > 0) sections.push(`# Persona\n\n${parts.persona.trim()}`);
  if (parts.instructions && parts.instructions.trim().length > 0) sections.push(`# Instructions\n\n${parts.instructions.trim()}`);
  if (parts.skills && parts.skills.length > 0) sections.push(skillsPromptSection(parts.skills));
  if (parts.memory) sections.push(memoryPromptSection(parts.memory));
  if (parts.context && parts.context.trim().length > 0) sections.push(`# Reference material\n\n${parts.context.trim()}`);
  if (parts.finalOutput) sections.push(finalOutputPromptSection);
  return sections.join('\n\n');
}

/** Parts of a fork's first message (a fork has no system prompt of its own: it continues its parent's). */
export interface ForkTaskParts {
  /** The fork's task (`instructions` of the `delegate` call). */
  task: string;
  maxTurns: number;
  workingDir: string;
  toolsets: string[];
  /** Whether the fork may delegate itself. */
  canDelegate: boolean;
  finalOutput?: boolean;
  worktreeBranch?: string;
}

/**
 * The first message of a fork: what changed for the model (it is now a subagent with a task of its own,
 * its final message is all its parent sees, its limits and tools), then the task. It is a user message
 * after the parent's turns, so the parent's system prompt stays the same and the provider's prompt cache
 * of the conversation applies.
 */
export function buildForkTask(parts: ForkTaskParts): string {
  const lines = [
    '[errand] You are now a fork of this conversation: a subagent that starts from everything above and works on the task below on ' +
      'its own. Whoever you were talking to does not see your messages: your final answer, which must stand alone, is all the ' +
      'delegating agent will get.',
    `You have at most ${parts.maxTurns} turns (model calls). Your working directory is ${parts.workingDir}.`,
    parts.toolsets.length > 0 ? `Toolsets available to you now: ${parts.toolsets.join(', ')}.` : 'You have no toolsets now: answer from what you know.',
    parts.canDelegate ? 'You may delegate parts of the work with the `delegate` tool.' : 'You cannot delegate any further.',
  ];
  if (parts.worktreeBranch) lines.push(`Your working directory is a git worktree of its own, on branch ${parts.worktreeBranch}; your changes are kept there for review.`);
  const sections = [lines.join('\n'), ...(parts.finalOutput ? [finalOutputPromptSection] : []), `# Your task\n\n${parts.task.trim()}`];
  return sections.join('\n\n');
}

/**
 * The reminder a subagent gets once it has used more than half of its turns (SEMANTICS §3), or
 * undefined before that.
 */
export function turnBudgetNote(turn: number, maxTurns: number, finalOutput = false): string | undefined {
  const used = turn - 1;
  if (used * 2 <= maxTurns) return undefined;
  const left = maxTurns - used;
  if (left <= 1) {
    return finalOutput
      ? `Turn budget: this is your last turn (${turn} of ${maxTurns}). Call final_output with your result now; other tool calls will not be run.`
      : `Turn budget: this is your last turn (${turn} of ${maxTurns}). Give your final answer now; tool calls will not be run.`;
  }
  return `Turn budget: you have used ${used} of ${maxTurns} turns; ${left} remain, including this one. Plan to finish in time.`;
}

/** Cuts a text to `length` characters, marking the cut. */
export function preview(text: string, length: number): string {
  if (text.length <= length) return text;
  return `${text.slice(0, Math.max(0, length - 1))}…`;
}

/**
 * The system prompt with what an agent file's SubagentStart hooks printed (decision 0032), as a section of
 * its own at the end; unchanged when they printed nothing.
 */
export function withHookContext(system: string, context: readonly string[]): string {
  if (context.length === 0) return system;
  return `${system}\n\n# Context from the agent's SubagentStart hooks\n\n${context.join('\n\n')}`;
}

/** What the model reads when a Stop hook sends it back to work (Claude Code: the hook's reason, as the next message). */
export function stopHookFeedback(feedback: readonly string[]): string {
  return `[Stop hook] You are not done yet:\n${feedback.join('\n')}`;
}

/** Why a Stop hook's block cannot send the subagent back to work: its last turn, or a structured-output run's result is delivered. */
export type StopTooLate = 'last-turn' | 'structured';

/** The history note of a Stop hook that blocked where the run ends anyway (decision 0032). */
export function stopHookTooLate(agentName: string, why: StopTooLate, feedback: readonly string[]): string {
  const reason = why === 'last-turn' ? 'it was the last turn' : 'the structured-output run ends';
  return `a Stop hook of agent ${agentName} blocked, but ${reason}, so the run ends as it would have: ${feedback.join('\n')}`;
}

/** A tool call's result when a PreToolUse hook blocked it (decision 0032): the call was not made. */
export function toolHookBlocked(toolName: string, agentName: string, feedback: readonly string[]): string {
  return `The call of ${toolName} was blocked by a PreToolUse hook of agent ${agentName}: ${feedback.join('\n')}`;
}

/**
 * What the tool hooks add after a call's result, each on a paragraph of its own: the PreToolUse hooks'
 * `additionalContext`, then the PostToolUse hooks' feedback and context.
 */
export function toolHookAdditions(pre: { context: readonly string[] } | undefined, post: { feedback: readonly string[]; context: readonly string[] } | undefined): string[] {
  return [
    ...(pre?.context ?? []).map((context) => `[PreToolUse hook] ${context}`),
    ...(post?.feedback ?? []).map((feedback) => `[PostToolUse hook] ${feedback}`),
    ...(post?.context ?? []).map((context) => `[PostToolUse hook] ${context}`),
  ];
}
