import type { CommandOptions } from './command-environment';
import type { PathRules } from './confine-path';
import { createListDirectoryTool } from './developer/list-directory';
import { createReadFileTool } from './developer/read-file';
import { createRunCommandTool } from './developer/run-command';
import { createSearchTextTool } from './developer/search-text';
import { createWriteFileTool } from './developer/write-file';
import type { Tool, Toolset } from './tool';

import { developerToolsetName } from './developer-toolset-name';

export { developerToolsetName };

/** The worker's settings the developer tools apply to every call. */
export interface DeveloperToolsetOptions {
  /** Where paths may go: the working root (tenant folders) and the folders no tool may touch. */
  paths?: PathRules;
  /** How run_command runs: the environment allow-list and the sandbox. */
  commands?: CommandOptions;
  /** How long one search_text call may spend matching a regular expression, ms (default in limits.ts). */
  searchTextRegexDeadlineMs?: number;
}

/**
 * The built-in `developer` toolset: read_file, write_file, list_directory, search_text, run_command.
 * Every path is confined to the delegation's working directory (see confine-path.ts), errand's data
 * folder is off limits, and commands get an allow-listed environment (see command-environment.ts).
 */
export function createDeveloperToolset(options: DeveloperToolsetOptions = {}): Toolset {
  const paths = options.paths ?? {};
  const tools: Tool[] = [
    createReadFileTool(paths),
    createWriteFileTool(paths),
    createListDirectoryTool(paths),
    createSearchTextTool(paths, options.searchTextRegexDeadlineMs),
    createRunCommandTool(options.commands ?? {}, paths),
  ];
  return {
    name: developerToolsetName,
    description: 'Read, write, list and search files in the working directory, and run shell commands there.',
    tools: () => Promise.resolve(tools),
  };
}
