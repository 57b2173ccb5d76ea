import type { ToolOutcome } from './agent-loop';

/** Small builders of the outcomes the orchestration tools return to the calling model. */

/** The message of whatever was thrown. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A tool error the calling model reads. */
export function toolError(text: string): ToolOutcome {
  return { parts: [text], isError: true };
}

/** A tool result the calling model reads. */
export function toolText(text: string): ToolOutcome {
  return { parts: [text], isError: false };
}

/** Runs an activity-backed step; a failure becomes a tool error for the calling model, never a workflow failure. */
export async function attempt(what: string, work: () => Promise<string>): Promise<ToolOutcome> {
  try {
    return toolText(await work());
  } catch (error) {
    return toolError(`${what} failed: ${errorText(error)}`);
  }
}
