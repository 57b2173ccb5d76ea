import type { ServerResponse } from 'node:http';
import type { AnswerContext } from './vendor-answers';

/**
 * A chat completions stream that never ends (a script step's `endless`): the opening event, then text
 * chunks as fast as the client reads them, until the client closes the connection. The socket's
 * back-pressure is honoured, so the server itself stays small however long the client reads.
 */
export async function streamEndlessly(
  response: ServerResponse,
  opening: string,
  context: AnswerContext,
  clientGone: () => boolean,
  onWritten: (bytes: number) => void,
): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = { id: `chatcmpl-scripted-${context.callIndex}`, object: 'chat.completion.chunk', created: context.created, model: context.model };
  const wire = `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta: { content: 'endless '.repeat(2_048) }, logprobs: null, finish_reason: null }] })}\n\n`;
  let written = Buffer.byteLength(opening);
  response.write(opening);
  while (!clientGone() && !response.destroyed) {
    written += Buffer.byteLength(wire);
    onWritten(written);
    if (!response.write(wire)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          response.off('drain', done);
          response.off('close', done);
          resolve();
        };
        response.on('drain', done);
        response.on('close', done);
      });
    }
  }
}
