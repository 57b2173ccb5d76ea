import { toolOutputMaxChars } from '../contracts/limits/tools';

/**
 * Caps text returned to the model, keeping the start and noting how much was cut, so one tool call
 * cannot flood the context (or the workflow history).
 */
export function capOutput(text: string, maxChars: number = toolOutputMaxChars, hint = ''): string {
  if (text.length <= maxChars) return text;
  const dropped = text.length - maxChars;
  return `${text.slice(0, maxChars)}\n[output truncated: ${dropped} more characters${hint ? `; ${hint}` : ''}]`;
}

/**
 * Collects a stream of output keeping the first and the last half of the budget: for a command, the
 * beginning says what ran and the end holds the error, so both are worth more than the middle.
 */
export class HeadTailBuffer {
  private head = '';
  private tail = '';
  private dropped = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(maxChars: number = toolOutputMaxChars) {
    this.headMax = Math.ceil(maxChars / 2);
    this.tailMax = Math.floor(maxChars / 2);
  }

  append(text: string): void {
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (text.length === 0) return;
    const combined = this.tail + text;
    if (combined.length > this.tailMax) {
      this.dropped += combined.length - this.tailMax;
      this.tail = combined.slice(combined.length - this.tailMax);
    } else {
      this.tail = combined;
    }
  }

  toString(): string {
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n[... ${this.dropped} characters of output omitted ...]\n${this.tail}`;
  }
}
