import { z } from 'zod';
import type { JsonObject } from '../contracts/json';
import type { ToolSpec } from '../contracts/model';
import { agentMemoryFileMaxBytes, agentMemoryWriteAttempts } from '../contracts/limits/memory';
import { AgentMemory, isAgentMemoryConflict, type AgentMemoryOptions, isAgentMemoryError, memoryIndexFile, memoryPath, memoryPathRules } from './agent-memory';
import type { BlobStore } from './blob-store';
import type { AgentMemoryLocation } from '../contracts/subagent';
import { defineTool } from '../tools/define-tool';
import { qualifyToolName } from '../tools/tool-name';
import { toolError, toolSuccess, type Tool, type ToolResult } from '../tools/tool';

/**
 * The memory tools of an agent with `memory` (decision 0031): read, write, edit and list files of its
 * memory folder, and nothing else. They work on the blob store (agent-memory.ts), never on the working
 * directory; paths are `memory/<file>`. Offered as the toolset `memory`, beside the agent's toolsets and
 * whatever its `tools` list says, as Claude Code enables Read, Write and Edit for an agent with memory;
 * the operator's tool policy applies to them as to any tool.
 */

/** The toolset name of the memory tools (qualified names `memory__read`, ...). */
export const memoryToolsetName = 'memory';

const pathField = z.string().min(1).describe(`Path inside your memory folder, e.g. memory/${memoryIndexFile}.`);

/** Failures of the memory folder the model can act on (a bad path, a full folder) come back as error results. */
async function guarded(work: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await work();
  } catch (error) {
    if (isAgentMemoryError(error)) return toolError(error.message);
    throw error;
  }
}

function memoryTools(memory: AgentMemory | undefined): Tool[] {
  const use = (work: (folder: AgentMemory) => Promise<ToolResult>) => guarded(() => (memory ? work(memory) : Promise.resolve(toolError('this agent has no memory folder'))));
  return [
    defineTool({
      name: 'read',
      description: `Read a file of your memory folder (memory/${memoryIndexFile}, memory/<topic>.md, ...).`,
      schema: z.object({ path: pathField }).strict(),
      run: (args) => use(async (folder) => {
        const path = memoryPath(args.path);
        const content = await folder.read(path);
        return content === undefined ? toolError(`memory/${path} does not exist; list your memory folder with memory__list`) : toolSuccess(content);
      }),
    }),
    defineTool({
      name: 'write',
      description: `Create or replace a file of your memory folder with the given content (at most ${agentMemoryFileMaxBytes} bytes). Folders need no creating.`,
      schema: z.object({ path: pathField, content: z.string().describe('The complete new content of the file.') }).strict(),
      run: (args) => use(async (folder) => {
        const path = memoryPath(args.path);
        await folder.write(path, args.content);
        return toolSuccess(`Wrote memory/${path} (${Buffer.byteLength(args.content, 'utf8')} bytes)`);
      }),
    }),
    defineTool({
      name: 'edit',
      description: 'Replace one exact, unique piece of text in a file of your memory folder.',
      schema: z.object({
        path: pathField,
        old_text: z.string().min(1).describe('The text to replace: it must occur exactly once in the file.'),
        new_text: z.string().describe('The text to put in its place.'),
      }).strict(),
      run: (args) => use(async (folder) => {
        const path = memoryPath(args.path);
        // Read, change, write exactly the next revision; when a parallel write took it, do the edit again on
        // what that write left (it may have removed old_text: then the model is told so).
        for (let attempt = 0; attempt < agentMemoryWriteAttempts; attempt += 1) {
          const found = await folder.readRevision(path);
          if (found === undefined) return toolError(`memory/${path} does not exist; create it with memory__write`);
          const { content, revision } = found;
          const first = content.indexOf(args.old_text);
          if (first === -1) return toolError(`old_text does not occur in memory/${path}; read the file and copy the text exactly`);
          if (content.indexOf(args.old_text, first + 1) !== -1) return toolError(`old_text occurs more than once in memory/${path}; include more of the surrounding text so it is unique`);
          try {
            await folder.write(path, content.slice(0, first) + args.new_text + content.slice(first + args.old_text.length), { basedOn: revision });
            return toolSuccess(`Edited memory/${path}`);
          } catch (error) {
            if (!isAgentMemoryConflict(error)) throw error;
          }
        }
        return toolError(`memory/${path} is being changed by others at the same time; read it again and retry the edit`);
      }),
    }),
    defineTool({
      name: 'list',
      description: 'List the files of your memory folder.',
      schema: z.object({}).strict(),
      run: () => use(async (folder) => {
        const files = await folder.list();
        return toolSuccess(files.length === 0 ? 'Your memory folder is empty.' : files.map((file) => `memory/${file}`).join('\n'));
      }),
    }),
  ];
}

/** The memory tools' specs, with qualified names (`memory__read`, ...). */
export const memoryToolSpecs: readonly ToolSpec[] = memoryTools(undefined).map((tool) => ({ ...tool.spec, name: qualifyToolName(memoryToolsetName, tool.spec.name) }));

/** Whether a qualified tool name is one of the memory tools. */
export function isMemoryTool(qualifiedName: string): boolean {
  return memoryToolSpecs.some((spec) => spec.name === qualifiedName);
}

/** Runs a memory tool on the agent's memory folder; an unknown name or a bad location is an error result. */
export async function runMemoryTool(blobs: BlobStore, location: AgentMemoryLocation, qualifiedName: string, args: JsonObject, abortSignal: AbortSignal, options: AgentMemoryOptions = {}): Promise<ToolResult> {
  let folder: AgentMemory;
  try {
    folder = new AgentMemory(blobs, location, options);
  } catch (error) {
    if (isAgentMemoryError(error)) return toolError(error.message);
    throw error;
  }
  const tool = memoryTools(folder).find((candidate) => qualifyToolName(memoryToolsetName, candidate.spec.name) === qualifiedName);
  if (!tool) return toolError(`Unknown memory tool "${qualifiedName}". Memory tools: ${memoryToolSpecs.map((spec) => spec.name).join(', ')}.`);
  return tool.run(args, { workingDir: '', abortSignal });
}

export { memoryPathRules };
