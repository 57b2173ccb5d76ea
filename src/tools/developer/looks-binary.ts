/** Bytes inspected when guessing whether content is binary (the same heuristic git and grep use). */
const sniffBytes = 8_000;

/** Whether content looks binary: a NUL byte in its first few kilobytes. */
export function looksBinary(buffer: Buffer): boolean {
  return buffer.subarray(0, sniffBytes).includes(0);
}
