import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * API keys as configuration stores them: a tenant and the SHA-256 (hex) of the key, never the key itself.
 * `ERRAND_API_KEYS='[{"tenant":"acme","sha256":"<64 hex>"}]'` or the same JSON in the file named by
 * `ERRAND_API_KEYS_FILE`. `errand api-key` prints a new key and its entry.
 */

/**
 * A tenant name. Tenants go into search attributes and visibility queries, so they are limited to
 * characters that need no quoting.
 */
export const tenantSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, { error: 'tenant must be 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit' });

/** One configured key. */
export const apiKeyEntrySchema = z.strictObject({
  tenant: tenantSchema,
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, { error: 'sha256 must be the 64 hex digits of the SHA-256 of the key (e.g. from `errand api-key`), not the key itself' })
    .transform((hex) => hex.toLowerCase()),
  /** A note for operators (who holds the key); never shown to clients. */
  label: z.string().optional(),
});
/** One configured key. */
export type ApiKeyEntry = z.output<typeof apiKeyEntrySchema>;

/** The configured key list: at least one entry, no hash twice. */
export const apiKeyListSchema = z
  .array(apiKeyEntrySchema, { error: 'expected a JSON array of {"tenant": "...", "sha256": "..."}' })
  .superRefine((entries, context) => {
    const seen = new Map<string, number>();
    entries.forEach((entry, index) => {
      const earlier = seen.get(entry.sha256);
      if (earlier !== undefined) {
        context.addIssue({ code: 'custom', path: [index, 'sha256'], message: `the same key hash is already configured at index ${earlier}; one key belongs to one tenant` });
      }
      seen.set(entry.sha256, index);
    });
  });

/** Parses a key list from JSON text; the error names `where` (the setting) and each bad field. */
export function parseApiKeys(text: string, where: string): ApiKeyEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${where} is not valid JSON (expected [{"tenant": "...", "sha256": "..."}]): ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = apiKeyListSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${where}${issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')}: ${issue.message}`);
    throw new Error(`invalid API key configuration:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

/** The SHA-256 hex of an API key, as configuration stores it. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
