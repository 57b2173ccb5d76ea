import { capOutput } from './output-cap';
import type { ToolResult } from './tool';

/** A call result as the text the model reads: text parts as they are, other parts described. */
export function convertCallResult(result: Record<string, unknown>): ToolResult {
  const isError = result['isError'] === true;
  const content = Array.isArray(result['content']) ? result['content'] : undefined;
  let text: string;
  if (content === undefined) {
    // Servers on the 2024-10-07 protocol answer with `toolResult`.
    text = JSON.stringify(result['toolResult'] ?? result['structuredContent'] ?? null);
  } else {
    const parts = content.map(describeContentPart);
    if (parts.length === 0 && result['structuredContent'] !== undefined) parts.push(JSON.stringify(result['structuredContent']));
    text = parts.join('\n');
  }
  return { content: capOutput(text), isError };
}

/** One content part as text: text as it is, binary parts and links described, so the model knows what it did not see. */
function describeContentPart(part: unknown): string {
  if (part === null || typeof part !== 'object') return String(part);
  const record = part as Record<string, unknown>;
  switch (record['type']) {
    case 'text':
      return typeof record['text'] === 'string' ? record['text'] : '';
    case 'image':
    case 'audio': {
      const data = typeof record['data'] === 'string' ? record['data'] : '';
      return `[${String(record['type'])} ${String(record['mimeType'] ?? '')}, ${Math.floor((data.length * 3) / 4)} bytes, not shown]`;
    }
    case 'resource_link':
      return `[resource link: ${String(record['uri'] ?? '')}${typeof record['name'] === 'string' ? ` (${record['name']})` : ''}]`;
    case 'resource': {
      const resource = record['resource'] as Record<string, unknown> | undefined;
      if (resource && typeof resource['text'] === 'string') return resource['text'];
      return `[resource ${String(resource?.['uri'] ?? '')}${resource?.['mimeType'] ? ` (${String(resource['mimeType'])})` : ''}, binary, not shown]`;
    }
    default:
      return JSON.stringify(part);
  }
}
