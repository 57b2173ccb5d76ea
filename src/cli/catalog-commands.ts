import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { hashApiKey, tenantSchema } from '../api/auth-config';
import { modelsResponseSchema } from '../contracts/model-api';
import { listSourcesResponseSchema, sourceContentResponseSchema } from '../contracts/source-api';
import { call } from './api-transport';
import type { CliContext } from './cli-context';
import { UsageError } from './cli-io';

/** `errand sources | models | api-key`. */

/** `errand sources [name] [--refresh] [--raw]`: the listing, or one source as `load(name)` shows it. */
export async function sourcesCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, refresh: { type: 'boolean' }, raw: { type: 'boolean' } }, allowPositionals: true, strict: true });
  if (positionals.length > 1) throw new UsageError('usage: errand sources [name] [--refresh] [--raw] [--json]');
  const [name] = positionals;
  const transport = context.transport();
  if (name) {
    const { body } = await call(transport, 'GET', `/v1/sources/${encodeURIComponent(name)}`, sourceContentResponseSchema);
    if (values.json) context.io.stdout(`${JSON.stringify(body, null, 2)}\n`);
    else context.io.stdout(`${values.raw ? body.content : `${body.text}\n\n(${body.store.description}: ${body.path}, version ${body.version})`}\n`);
    return 0;
  }
  const { body } = await call(transport, 'GET', `/v1/sources${values.refresh ? '?refresh=true' : ''}`, listSourcesResponseSchema);
  if (values.json) {
    context.io.stdout(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  if (body.items.length === 0) context.io.stdout(`no sources found; searched:\n${body.searched.map((place) => `  ${place}`).join('\n')}\n`);
  for (const item of body.items) {
    const required = item.requiredParameters.length > 0 ? ` (needs ${item.requiredParameters.join(', ')})` : '';
    context.io.stdout(`${item.name.padEnd(24)} ${item.kind.padEnd(9)} ${item.description ?? ''}${required}\n`);
  }
  for (const problem of body.problems) context.io.stderr(`warning: ${problem}\n`);
  for (const note of body.shadowed) context.io.stderr(`note: ${note}\n`);
  return 0;
}

/** `errand models [provider]`: the model allow-list, with the reasoning efforts of models that take any (`--json`: every setting). */
export async function modelsCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  if (positionals.length > 1) throw new UsageError('usage: errand models [provider] [--json]');
  const [provider] = positionals;
  const { body } = await call(context.transport(), 'GET', `/v1/models${provider ? `?provider=${encodeURIComponent(provider)}` : ''}`, modelsResponseSchema);
  if (values.json) {
    context.io.stdout(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  if (body.providers.length === 0) context.io.stdout('no providers are configured (ERRAND_PROVIDERS)\n');
  for (const entry of body.providers) {
    for (const model of entry.entries) {
      const isDefault = body.default?.provider === entry.provider && body.default.model === model.id;
      const efforts = model.reasoningEfforts.map((effort) => (effort === model.defaultReasoningEffort ? `${effort} (default)` : effort)).join(', ');
      const prices = model.prices ? `  $/M tokens: ${model.prices.input} in, ${model.prices.output} out${model.prices.cachedInput !== undefined ? `, ${model.prices.cachedInput} cached` : ''}` : '';
      context.io.stdout(`${entry.provider}/${model.id}${isDefault ? '  (default)' : ''}${efforts ? `  efforts: ${efforts}` : ''}${prices}\n`);
    }
  }
  return 0;
}

/**
 * `errand api-key <tenant>`: makes a new API key and prints it once, with the configuration entry that
 * holds only its hash (for ERRAND_API_KEYS).
 */
export async function apiKeyCommand(argv: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: { json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const [tenant] = positionals;
  const parsed = tenantSchema.safeParse(tenant);
  if (!tenant || positionals.length > 1 || !parsed.success) throw new UsageError(`usage: errand api-key <tenant>${tenant && !parsed.success ? ` (${parsed.error.issues[0]?.message ?? 'invalid tenant'})` : ''}`);
  const key = `errand_${randomBytes(24).toString('base64url')}`;
  const entry = { tenant: parsed.data, sha256: hashApiKey(key) };
  if (values.json) context.io.stdout(`${JSON.stringify({ key, entry }, null, 2)}\n`);
  else context.io.stdout(`API key (shown once; give it to the client as ERRAND_API_KEY):\n  ${key}\nConfiguration entry (add it to the ERRAND_API_KEYS array):\n  ${JSON.stringify(entry)}\n`);
  return 0;
}
