/** Parts of a session's system prompt. */
export interface SessionPromptParts {
  instructions?: string;
  context?: string;
  workingDir: string;
  toolsets: string[];
  canDelegate: boolean;
}

/** Builds the system prompt of a parent session. Pure (used in workflow code). */
export function buildSessionSystemPrompt(parts: SessionPromptParts): string {
  const sections = [
    'You are an agent working with a person. You can hand work to subagents: `load` lists the recipes, subrecipes and ' +
      'agents you can delegate to and your background tasks; `delegate` starts a subagent (in the foreground, or in the ' +
      'background with async: true, or continuable: true to keep talking to it with send_message).',
    `Your working directory is ${parts.workingDir}.`,
    parts.toolsets.length > 0 ? `Toolsets available to you: ${parts.toolsets.join(', ')}.` : 'You have no toolsets of your own.',
  ];
  if (!parts.canDelegate) sections.push('Delegation is switched off for this session.');
  if (parts.instructions && parts.instructions.trim().length > 0) sections.push(`# Instructions\n\n${parts.instructions.trim()}`);
  if (parts.context && parts.context.trim().length > 0) sections.push(`# Reference material\n\n${parts.context.trim()}`);
  return sections.join('\n\n');
}
