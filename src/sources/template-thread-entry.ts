import { parentPort } from 'node:worker_threads';
import { renderRecipeDocument, type RecipeRenderResult } from './recipe-render';
import type { TemplateThreadReply, TemplateThreadRequest } from './template-thread';

/**
 * The program of a rendering thread (see template-thread.ts): it renders one recipe file per message and
 * answers with the result. Built as an entry of its own in every build (dist/, the CLI bundle, the API's
 * Lambda bundle), so the thread loads only the template engine and the YAML parser.
 */

function render(request: TemplateThreadRequest): RecipeRenderResult {
  try {
    return renderRecipeDocument(request.content, request.values, request.file, request.path, request.options);
  } catch (error) {
    // Not a template error (those are results): the file still cannot be rendered, and the reason is told.
    return { ok: false, error: `${request.file}: cannot render the template: ${error instanceof Error ? error.message : String(error)}` };
  }
}

const port = parentPort;
if (port) {
  port.on('message', (request: TemplateThreadRequest) => {
    const reply: TemplateThreadReply = { id: request.id, result: render(request) };
    port.postMessage(reply);
  });
  port.postMessage({ ready: true });
}
