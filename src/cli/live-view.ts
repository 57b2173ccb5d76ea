import type { PeekView } from '../contracts/delegation-api';
import { cliLiveTextLines } from '../contracts/limits/api';
import { liveEvents, type LiveCursor } from '../domain/live-events';
import type { CliIo } from './cli-io';

/**
 * The live view of a waiting `errand delegate` and of `errand peek --follow`, on stderr: a progress line
 * (turns, elapsed time, last tool) and under it the text the model is writing now (the API peek's
 * `partial`). On a terminal it redraws in place: the progress line with a spinner, then the last lines of
 * the text. Without one it prints a progress line only when something changed, and the text as it comes —
 * each new piece once, no spinner, no redraws — so a log reads like a transcript.
 */
export class LiveView {
  private readonly io: CliIo;
  private readonly startedAt = Date.now();
  private frame = 0;
  /** Lines the last redraw took (terminal). */
  private drawn = 0;
  /** What the last progress line said (no terminal): a new one is printed only when this changes. */
  private lastKey = '';
  /** What was printed of the text (no terminal). */
  private told: LiveCursor | undefined;
  /** True when the last thing printed (no terminal) was text without its line end. */
  private midLine = false;
  /** The model call whose text is being printed (no terminal). */
  private writing = '';

  constructor(io: CliIo) {
    this.io = io;
  }

  /** Shows the latest state. */
  update(id: string, state: string, peek: PeekView | null): void {
    if (this.io.interactive) this.redraw(id, state, peek);
    else this.append(id, state, peek);
  }

  /** Clears the view (terminal) or ends the text's line, before the final output. */
  finish(): void {
    if (this.io.interactive) {
      this.io.stderr(`${this.drawn > 1 ? `\x1b[${this.drawn - 1}A` : ''}\r\x1b[J`);
      this.drawn = 0;
    } else if (this.midLine) {
      this.io.stderr('\n');
      this.midLine = false;
    }
  }

  private progressText(id: string, state: string, peek: PeekView | null): { text: string; key: string } {
    const elapsed = `${Math.round((Date.now() - (peek?.startedAt ?? this.startedAt)) / 1000)}s`;
    const turns = peek ? `turn ${peek.turns}/${peek.maxTurns}` : 'starting';
    // A tool name is the model's choice: printed like its text, never as terminal control sequences.
    const tool = peek?.lastToolCall ? ` · last tool ${printable(peek.lastToolCall.name)}` : '';
    // Without a terminal, elapsed time alone is not news.
    return { text: `${id} · ${state} · ${turns} · ${elapsed}${tool}`, key: `${state} ${turns}${tool}` };
  }

  private redraw(id: string, state: string, peek: PeekView | null): void {
    const width = Math.max(20, (this.io.columns ?? 80) - 1);
    const spinner = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'][this.frame++ % 10] ?? '-';
    const lines = [`${spinner} ${this.progressText(id, state, peek).text}`.slice(0, width)];
    const partial = peek?.partial;
    if (partial && partial.text.length > 0) {
      const cut = partial.chars > partial.text.length;
      const wrapped = wrap(`${cut ? '…' : ''}${printable(partial.text)}`, width - 2);
      lines.push(...wrapped.slice(-cliLiveTextLines).map((line) => `  ${line}`));
    }
    const up = this.drawn > 1 ? `\x1b[${this.drawn - 1}A` : '';
    this.io.stderr(`${up}\r\x1b[J${lines.join('\n')}`);
    this.drawn = lines.length;
  }

  private append(id: string, state: string, peek: PeekView | null): void {
    const progress = this.progressText(id, state, peek);
    if (progress.key !== this.lastKey) {
      this.line(progress.text);
      this.lastKey = progress.key;
    }
    const { events, cursor } = liveEvents(this.told, { state, peek });
    this.told = cursor;
    for (const event of events) {
      if (event.event !== 'text') continue;
      const { turn, attempt, delta, restart, gap } = event.data;
      const call = `${turn}.${attempt}`;
      if (restart) this.line(`[turn ${turn}: the model call was retried (attempt ${attempt}); its text starts again]`);
      else if (!this.midLine || call !== this.writing) this.line(`[turn ${turn} writing]`);
      this.writing = call;
      if (gap) this.io.stderr(' … ');
      this.io.stderr(printable(delta));
      this.midLine = true;
    }
  }

  /** Prints a whole line, ending the text's line first. */
  private line(text: string): void {
    this.io.stderr(`${this.midLine ? '\n' : ''}${text}\n`);
    this.midLine = false;
  }
}

/**
 * The model's text without terminal control sequences: it is written by a model and may contain anything,
 * and an escape sequence must not move the cursor, retitle the window or hide what follows.
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- removing control characters is what this does
  return text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '').replace(/\t/g, '  ');
}

/** Hard-wraps text at `width` characters, keeping its own line breaks. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    if (paragraph.length === 0) lines.push('');
    for (let start = 0; start < paragraph.length; start += width) lines.push(paragraph.slice(start, start + width));
  }
  return lines;
}
