import type { ServerResponse } from 'node:http';
import type { AnswerContext } from './vendor-answers';

/**
 * A chat completions stream that never ends (a script step's `endless`): the opening event, the step's
 * text, then text chunks as fast as the client reads them, until the client closes the connection. The socket's
 * back-pressure is honoured, so the server itself stays small however long the client reads.
 */
export async function streamEndlessly(
  response: ServerResponse,
  opening: string,
  text: string,
  context: AnswerContext,
  clientGone: () => boolean,
  onWritten: (bytes: number) => void,
): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = { id: `chatcmpl-scripted-${context.callIndex}`, object: 'chat.completion.chunk', created: context.created, model: context.model };
  const content = (piece: string): string => `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }] })}\n\n`;
  const wire = content('endless '.repeat(2_048));
  // The step's text first, then more text forever.
  const first = text === '' ? opening : `${opening}${content(text)}`;
  let written = Buffer.byteLength(first);
  response.write(first);
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
