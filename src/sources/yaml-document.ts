import { parse, YAMLParseError } from 'yaml';

/** A parsed YAML/JSON document, or an error naming the file and the line. */
export type YamlDocumentResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Parses YAML (or JSON, for `.json` files) text. Duplicate keys are errors, as in goose's serde_yaml.
 * The message names the file and the line/column of the problem.
 */
export function parseYamlDocument(text: string, file: string): YamlDocumentResult {
  if (file.toLowerCase().endsWith('.json')) {
    try {
      const value: unknown = JSON.parse(text);
      return { ok: true, value };
    } catch (error) {
      return { ok: false, error: `${file}: not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  try {
    const value: unknown = parse(text, { prettyErrors: true, uniqueKeys: true });
    return { ok: true, value };
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const position = error.linePos?.[0];
      const where = position ? ` (line ${position.line}, column ${position.col})` : '';
      const firstLine = error.message.split('\n')[0] ?? error.message;
      return { ok: false, error: `${file}${where}: not valid YAML: ${firstLine}` };
    }
    return { ok: false, error: `${file}: not valid YAML: ${error instanceof Error ? error.message : String(error)}` };
  }
}
