import { parseAgentDocument, splitFrontmatter, type AgentParseResult, type ModelAliasTable } from '../domain/agent-definition';
import { parseYamlDocument } from './yaml-document';

/**
 * Reads an agent file (Markdown with YAML frontmatter). Errors name the file; a file without a
 * frontmatter block is an error because `name` is required.
 */
export function readAgentText(content: string, file: string, aliases: ModelAliasTable): AgentParseResult {
  const split = splitFrontmatter(content);
  if (!split) {
    return { errors: [`${file}: expected YAML frontmatter between --- lines at the top of the file, with at least name:`], warnings: [] };
  }
  const frontmatter = parseYamlDocument(split.frontmatter, `${file} (frontmatter)`);
  if (!frontmatter.ok) return { errors: [frontmatter.error], warnings: [] };
  return parseAgentDocument(frontmatter.value, split.body, file, aliases);
}
