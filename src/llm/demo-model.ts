import type { ChatMessage, ModelRequest } from '../contracts/model';
import type { ProviderConfig } from './provider-config';
import { ScriptedModel } from './scripted-model';
import type { ScriptStep } from './scripted-step';

/**
 * The demo model: what `npm start` answers with when no provider is configured, so errand can be
 * tried end to end without an API key. It is deterministic, says plainly that it is a demo, and
 * summarises the task it got. When it is offered a directory-listing tool (named like
 * `developer__list_directory`) it lists `.` once and then answers with a summary of what it saw.
 */

/** Provider name of the demo model. */
export const demoProviderName = 'demo';
/** Model id of the demo model. */
export const demoModelId = 'demo';
/** Prefix of every demo answer. */
export const demoPrefix = '[demo model]';

/** Provider configuration for the demo model (kind `scripted`; supply `createDemoModel()` as its model). */
export const demoProviderConfig: ProviderConfig = {
  name: demoProviderName,
  kind: 'scripted',
  models: [demoModelId],
  defaultModel: demoModelId,
};

const maxTaskChars = 300;
const maxListingLines = 12;

/** The demo model's answer to a request. */
export function demoStep(request: ModelRequest): ScriptStep {
  const lastUser = findLast(request.messages, (message) => message.role === 'user');
  const lastUserIndex = lastUser === undefined ? -1 : request.messages.lastIndexOf(lastUser);
  const task = lastUser?.content.trim() ?? '';
  const listTool = request.tools.find((tool) => /(^|_)list_directory$/.test(tool.name));
  const resultsSinceTask = request.messages.slice(lastUserIndex + 1).filter((message) => message.role === 'tool');

  if (listTool !== undefined && resultsSinceTask.length === 0) {
    return { text: `${demoPrefix} Let me look at the working directory first.`, toolCalls: [{ name: listTool.name, arguments: { path: '.' } }] };
  }
  const lines = [
    `${demoPrefix} This answer comes from errand's built-in demo model, not a real LLM. Configure a provider to get real work done.`,
    task === '' ? 'I was given no task text.' : `The task I was given: "${truncate(task, maxTaskChars)}"`,
  ];
  const listing = resultsSinceTask[resultsSinceTask.length - 1];
  if (listing !== undefined && listing.role === 'tool') {
    if (listing.isError === true) {
      lines.push(`Listing the working directory failed: ${truncate(listing.content.trim(), maxTaskChars)}`);
    } else {
      const entries = listing.content.split('\n').map((line) => line.trim()).filter((line) => line !== '');
      const shown = entries.slice(0, maxListingLines);
      lines.push(
        `The working directory has ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}` +
          (shown.length > 0 ? `: ${shown.join(', ')}${entries.length > shown.length ? ', …' : ''}.` : '.'),
      );
    }
  }
  lines.push('A real model would now carry out the task; the demo stops here.');
  return { text: lines.join('\n') };
}

/** A ChatModel that answers with `demoStep`, indefinitely. */
export function createDemoModel(): ScriptedModel {
  return new ScriptedModel((request) => demoStep(request), { name: 'demo model', record: false });
}

function truncate(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

function findLast(messages: ChatMessage[], predicate: (message: ChatMessage) => boolean): ChatMessage | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message !== undefined && predicate(message)) return message;
  }
  return undefined;
}
