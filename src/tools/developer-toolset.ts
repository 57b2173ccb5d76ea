import { listDirectoryTool } from './developer/list-directory';
import { readFileTool } from './developer/read-file';
import { runCommandTool } from './developer/run-command';
import { searchTextTool } from './developer/search-text';
import { writeFileTool } from './developer/write-file';
import type { Tool, Toolset } from './tool';

/** Name of the built-in developer toolset. */
export const developerToolsetName = 'developer';

/**
 * The built-in `developer` toolset: read_file, write_file, list_directory, search_text, run_command.
 * Every path is confined to the delegation's working directory (see confine-path.ts).
 */
export function createDeveloperToolset(): Toolset {
  const tools: Tool[] = [readFileTool, writeFileTool, listDirectoryTool, searchTextTool, runCommandTool];
  return {
    name: developerToolsetName,
    description: 'Read, write, list and search files in the working directory, and run shell commands there.',
    tools: () => Promise.resolve(tools),
  };
}
