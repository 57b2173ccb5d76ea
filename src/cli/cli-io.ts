/** Where a CLI command writes; injectable so tests and the dev stack can capture output. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** True when stderr is a terminal (live progress lines redraw in place). */
  interactive: boolean;
  /** Width of that terminal in characters, when known (the live view wraps the model's text to it). */
  readonly columns?: number;
}

/** The process's own streams. */
export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  interactive: process.stderr.isTTY === true,
  // Read on each use: the terminal may be resized while a command waits.
  get columns() {
    return process.stderr.columns;
  },
};

/** Thrown for a command line that cannot be run; exits 2 with the usage. */
export class UsageError extends Error {
  readonly errandError = 'UsageError';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
