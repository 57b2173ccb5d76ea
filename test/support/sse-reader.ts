/** One server-sent event as a client sees it. */
export interface ServerSentEvent {
  event: string;
  data: string;
  id?: string;
}

/** What a read of an event stream saw. */
export interface EventStreamRead {
  status: number;
  contentType: string | null;
  events: ServerSentEvent[];
  /** Comment lines (`: …`), e.g. keep-alives. */
  comments: string[];
  /** The `retry:` value the server asked for, if any. */
  retry?: number;
  /** True when the server ended the stream (false: `stop` said enough first). */
  ended: boolean;
}

/**
 * Reads a server-sent event stream with fetch, parsing it as the EventSource specification does (fields
 * `event`, `data`, `id`, `retry`; a blank line ends an event), until the server ends it, `stop` returns true
 * for the events so far, or `timeoutMs` passes (then it throws with what it saw).
 */
export async function readEventStream(
  url: string,
  init: RequestInit,
  options: { stop?: (events: ServerSentEvent[]) => boolean; timeoutMs?: number } = {},
): Promise<EventStreamRead> {
  const controller = new AbortController();
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const read: EventStreamRead = { status: 0, contentType: null, events: [], comments: [], ended: false };
  try {
    const response = await fetch(url, { ...init, signal: controller.signal });
    read.status = response.status;
    read.contentType = response.headers.get('content-type');
    if (!response.body || !read.contentType?.startsWith('text/event-stream')) {
      await response.arrayBuffer();
      read.ended = true;
      return read;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let current: { event?: string; data: string[]; id?: string } = { data: [] };
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) {
        read.ended = true;
        return read;
      }
      buffer += chunk.value;
      let newline = buffer.search(/\r\n|\r|\n/);
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (current.data.length > 0 || current.event !== undefined) {
            read.events.push({ event: current.event ?? 'message', data: current.data.join('\n'), ...(current.id !== undefined ? { id: current.id } : {}) });
          }
          current = { data: [] };
        } else if (line.startsWith(':')) {
          read.comments.push(line.slice(1).trim());
        } else {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') current.event = value;
          else if (field === 'data') current.data.push(value);
          else if (field === 'id') current.id = value;
          else if (field === 'retry' && /^\d+$/.test(value)) read.retry = Number(value);
        }
        newline = buffer.search(/\r\n|\r|\n/);
      }
      if (options.stop?.(read.events)) {
        await reader.cancel();
        return read;
      }
    }
  } catch (error) {
    if (timedOut) throw new Error(`the event stream ${url} did not end within ${timeoutMs} ms; events so far: ${JSON.stringify(read.events).slice(0, 2000)}`);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** The JSON data of the events named `name`. */
export function eventData(events: ServerSentEvent[], name: string): Record<string, unknown>[] {
  return events.filter((event) => event.event === name).map((event) => {
    const value: unknown = JSON.parse(event.data);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`event ${name} has data that is not a JSON object: ${event.data}`);
    return Object.fromEntries(Object.entries(value));
  });
}
