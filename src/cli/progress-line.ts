import type { PeekView } from '../contracts/api';
import type { CliIo } from './cli-io';

/**
 * The live progress line of a waiting `errand delegate`: turns, elapsed time and the last tool. On a
 * terminal it redraws in place; otherwise it prints a line only when something changed, so logs stay short.
 */
export class ProgressLine {
  private readonly io: CliIo;
  private readonly startedAt = Date.now();
  private last = '';
  private frame = 0;

  constructor(io: CliIo) {
    this.io = io;
  }

  /** Shows the latest state. */
  update(id: string, state: string, peek: PeekView | null): void {
    const elapsed = `${Math.round((Date.now() - (peek?.startedAt ?? this.startedAt)) / 1000)}s`;
    const turns = peek ? `turn ${peek.turns}/${peek.maxTurns}` : 'starting';
    const tool = peek?.lastToolCall ? ` · last tool ${peek.lastToolCall.name}` : '';
    const text = `${id} · ${state} · ${turns} · ${elapsed}${tool}`;
    if (this.io.interactive) {
      const spinner = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'][this.frame++ % 10] ?? '-';
      this.io.stderr(`\r\x1b[K${spinner} ${text}`);
      return;
    }
    // Without a terminal, elapsed time alone is not news.
    const key = `${state} ${turns}${tool}`;
    if (key !== this.last) this.io.stderr(`${text}\n`);
    this.last = key;
  }

  /** Clears the line before the final output. */
  finish(): void {
    if (this.io.interactive) this.io.stderr('\r\x1b[K');
  }
}
