import { maxInvalidFinalOutputs } from '../contracts/limits/sources';

/**
 * Texts and names of structured output (SEMANTICS §5: goose `response.json_schema`, `output_schema` on
 * `delegate` and the API): a subagent with an output schema is offered a `final_output` tool whose input
 * schema is that schema, and finishes by calling it. Pure; tests pin the wording.
 */

/** The tool a structured-output run finishes with. Bare, like the orchestration tools: no toolset owns it. */
export const finalOutputToolName = 'final_output';

/** The description the model reads. */
export const finalOutputToolDescription =
  'Finish your task by calling this tool once, with your result as its arguments (they must match its input schema). ' +
  'This is how your result is delivered: a plain text answer is not accepted. Call it when your work is done, not before.';

/** The system-prompt section of a structured-output run. */
export const finalOutputPromptSection =
  '# Delivering your result\n\nYour result is structured data. When your work is done, call the `final_output` tool once with the ' +
  'result as its arguments, matching its input schema exactly. Do not answer with plain text instead: a run that ends without a ' +
  'valid `final_output` call fails.';

/** The reminder a run gets once, after a plain text answer. */
export const finalOutputReminder =
  '[errand] You answered in plain text, but your result must be delivered by calling the `final_output` tool with arguments ' +
  'that match its input schema. Call it now.';

/** The tool result of an accepted call. */
export const finalOutputAccepted = 'Final output accepted.';

/** The tool result of a call whose arguments were not accepted (the model may call again). */
export function finalOutputRejected(errors: readonly string[]): string {
  return [
    'final_output was not accepted: its arguments do not match the input schema.',
    ...errors.map((error) => `- ${error}`),
    `Call final_output again with corrected arguments (at most ${maxInvalidFinalOutputs} calls that do not match are accepted).`,
  ].join('\n');
}

/** The diagnostic of a run that gave up after too many invalid calls. */
export function tooManyInvalidFinalOutputs(count: number, lastErrors: readonly string[]): string {
  return `final_output was called ${count} times with arguments that do not match its schema; the last errors: ${lastErrors.join('; ')}`;
}

/** The diagnostic of a run that answered in plain text after its reminder (or with no turn left for one). */
export function didNotCallFinalOutput(reminded: boolean): string {
  return reminded
    ? 'did not call final_output: it answered in plain text again after being reminded'
    : 'did not call final_output: it answered in plain text on its last turn';
}

/** The text of a structured result, as the parent and the output text show it. */
export function structuredText(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
