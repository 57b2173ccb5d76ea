import { agentFrontmatterKeys, parseAgentDocument, splitFrontmatter, type AgentParseResult, type ModelAliasTable } from '../contracts/agent-definition';
import { readFrontmatter } from './frontmatter';

/**
 * Reads an agent file (Markdown with frontmatter). Frontmatter that is not strict YAML is read key by
 * key, as Claude Code reads it, with a warning per field read that way. Errors name the file; a file
 * without a frontmatter block is an error because `name` is required.
 */
export function readAgentText(content: string, file: string, aliases: ModelAliasTable): AgentParseResult {
  const split = splitFrontmatter(content);
  if (!split) {
    return { errors: [`${file}: expected YAML frontmatter between --- lines at the top of the file, with at least name:`], warnings: [] };
  }
  const frontmatter = readFrontmatter(split.frontmatter, file, agentFrontmatterKeys);
  if (!frontmatter.ok) return { errors: [frontmatter.error], warnings: [] };
  const parsed = parseAgentDocument(frontmatter.value, split.body, file, aliases);
  return { ...parsed, warnings: [...frontmatter.warnings, ...parsed.warnings] };
}
