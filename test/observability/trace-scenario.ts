import type { ModelRequest } from '../../src/contracts/model';
import type { ScriptStep } from '../../src/llm/scripted-step';

/**
 * The scripted conversation of the tracing test (traces.test.ts), shared with scripts/trace-screenshot.ts so
 * the documented trace is the one the test pins: a session that delegates one child, which lists its working
 * directory (a real tool call) and answers.
 */

/** Prices of the scripted model's entry (USD per million tokens), so model spans carry a cost. */
export const traceScenarioPrices = { input: 3, output: 15 };

/** The session message that starts the scenario (its `[trace-session]` marker makes the session delegate). */
export const traceScenarioSessionMessage = 'Survey the folder through a subagent [trace-session]';

/** The words of the child's final answer, which the session's transcript shows once the child is done. */
export const traceScenarioChildAnswer = 'README.md is there';

/** The first user message of a request (a session's message or a child's task). */
function taskOf(request: ModelRequest): string {
  return request.messages.find((message) => message.role === 'user')?.content ?? '';
}

/**
 * The scripted model: a session message with `[trace-session]` delegates one child, then answers; a task with
 * `[trace-child]` (or `[trace-delegation]`) lists the working directory, then answers.
 */
export function traceScenarioAnswer(request: ModelRequest): ScriptStep {
  const task = taskOf(request);
  const toolResults = request.messages.filter((message) => message.role === 'tool').length;
  if (task.includes('[trace-session]')) {
    if (toolResults > 0) return { text: `The child looked: ${traceScenarioChildAnswer}.` };
    return { text: 'Asking a subagent.', toolCalls: [{ id: 'delegate-1', name: 'delegate', arguments: { instructions: 'List the folder and say what is there [trace-child]', description: 'survey the folder' } }] };
  }
  if (task.includes('[trace-child]') || task.includes('[trace-delegation]')) {
    if (toolResults > 0) return { text: `${traceScenarioChildAnswer}.` };
    return { text: 'Looking.', toolCalls: [{ id: 'ls-1', name: 'developer__list_directory', arguments: { path: '.' } }] };
  }
  return { text: `done: ${task}` };
}
