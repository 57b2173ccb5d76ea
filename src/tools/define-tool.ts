import type { z } from 'zod';
import type { JsonObject, JsonValue } from '../contracts/json';
import { toolInputSchema } from './json-schema';
import { toolError, type Tool, type ToolContext, type ToolResult } from './tool';

/** What a tool implementation declares: its name, description, zod argument schema and body. */
export interface ToolDefinition<Schema extends z.ZodObject> {
  name: string;
  description: string;
  /** Strict object schema: unknown arguments are reported, so a misspelt `file_path` does not pass silently. */
  schema: Schema;
  run(args: z.infer<Schema>, context: ToolContext): Promise<ToolResult>;
}

/**
 * Turns a definition into a Tool that validates its arguments first. Invalid arguments come back as an
 * `isError` result naming each argument and what is valid; an exception thrown by the body (an I/O error
 * such as EACCES) also becomes an `isError` result, so a tool call never throws into the agent loop.
 */
export function defineTool<Schema extends z.ZodObject>(definition: ToolDefinition<Schema>): Tool {
  const inputSchema = toolInputSchema(definition.schema);
  return {
    spec: { name: definition.name, description: definition.description, inputSchema },
    async run(args: JsonObject, context: ToolContext): Promise<ToolResult> {
      const parsed = definition.schema.safeParse(args);
      if (!parsed.success) {
        return toolError(describeInvalidArguments(definition.name, args, parsed.error, inputSchema));
      }
      try {
        return await definition.run(parsed.data, context);
      } catch (error) {
        return toolError(`${definition.name} failed: ${describeFailure(error)}`);
      }
    },
  };
}

/**
 * An unexpected failure as the model may read it. A system error's message ends with the path it was
 * about (`EACCES: permission denied, open '/srv/…'`): only its code and description are kept, so no
 * server path reaches the model (or, through it, anyone it talks to).
 */
export function describeFailure(error: unknown): string {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string' && 'syscall' in error) {
    return error.message.split(',')[0] ?? error.code;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Message for invalid arguments: one sentence per problem, then the valid arguments. */
export function describeInvalidArguments(toolName: string, args: JsonObject, error: z.ZodError, inputSchema: JsonObject): string {
  const problems = error.issues.map((issue) => describeIssue(issue, args));
  return `Invalid arguments for ${toolName}: ${problems.join('; ')}.\nValid arguments: ${describeArguments(inputSchema)}.`;
}

function describeIssue(issue: z.core.$ZodIssue, args: JsonObject): string {
  const name = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  }
  if (issue.code === 'invalid_type' && issue.path.length === 1 && !(name in args)) {
    return `missing required argument "${name}" (${issue.expected})`;
  }
  return `argument "${name}": ${issue.message}`;
}

/** `path (string, required): ...; start_line (integer >= 1, optional): ...` from the JSON Schema. */
function describeArguments(inputSchema: JsonObject): string {
  const properties = asObject(inputSchema['properties']) ?? {};
  const required = new Set((Array.isArray(inputSchema['required']) ? inputSchema['required'] : []).map(String));
  const parts = Object.entries(properties).map(([key, value]) => {
    const property = asObject(value) ?? {};
    const type = typeof property['type'] === 'string' ? property['type'] : 'value';
    const bounds = [
      typeof property['minimum'] === 'number' ? `>= ${property['minimum']}` : undefined,
      typeof property['maximum'] === 'number' ? `<= ${property['maximum']}` : undefined,
    ].filter((part) => part !== undefined);
    const description = typeof property['description'] === 'string' ? `: ${property['description']}` : '';
    return `${key} (${[type, ...bounds].join(' ')}, ${required.has(key) ? 'required' : 'optional'})${description}`;
  });
  return parts.length === 0 ? 'none' : parts.join('; ');
}

function asObject(value: JsonValue | undefined): JsonObject | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
}
