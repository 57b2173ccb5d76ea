import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './client-config';
import { defaultAnthropicApiKeyEnv, type ProviderConfig } from '../llm/provider-config';
import type { McpServerConfig } from '../tools/mcp-config';

/**
 * How model-run commands (`run_command`) are run: which worker variables they see and whether they run in a
 * sandbox. Part of errand's configuration (config.ts); kept apart because the credential checks are a
 * concern of their own.
 */

/** An environment variable name (`commands.env`, `ERRAND_COMMAND_ENV`). */
export const envNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected an environment variable name' });

/** Sandboxes model-run commands can run in (`ERRAND_SANDBOX`). */
export const CommandSandbox = { none: 'none', bwrap: 'bwrap' } as const;
/** One of {@link CommandSandbox}. */
export type CommandSandbox = (typeof CommandSandbox)[keyof typeof CommandSandbox];

/** How model-run commands (`run_command`) are run (`commands` in the file, `ERRAND_COMMAND_ENV`, `ERRAND_SANDBOX*`). */
export interface CommandSettings {
  /** Worker environment variables passed to commands besides PATH, HOME, LANG and TMPDIR. */
  env: string[];
  /** `bwrap`: every command runs in a bubblewrap sandbox; `none`: as a plain child process. */
  sandbox: CommandSandbox;
  /** Whether a sandboxed command may use the network (default false: its own empty network namespace). */
  network: boolean;
  /** Extra absolute paths a sandboxed command sees read-only (a toolchain outside the system folders). */
  readOnlyPaths: string[];
  /**
   * URL prefixes agent files' `http` hooks may POST to (`ERRAND_HOOK_URLS`); empty: no http hook runs. The
   * worker makes the request, from inside the operator's network, so only the operator can say where.
   */
  hookUrls: string[];
}

/** The `commands` section of the configuration file. */
export const commandsFileSchema = z.strictObject({
  env: z.array(envNameSchema).optional(),
  sandbox: z.enum([CommandSandbox.none, CommandSandbox.bwrap], { error: 'expected "none" or "bwrap"' }).optional(),
  network: z.boolean().optional(),
  readOnlyPaths: z.array(z.string().min(1)).optional(),
  hookUrls: z.array(z.string().min(1)).optional(),
});

/** Names of variables errand itself reads credentials from: never passed to model-run commands. */
const credentialVariables = [
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'ERRAND_API_KEYS',
  'ERRAND_API_KEYS_FILE',
  'ERRAND_SECRET_ENV',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_PROFILE',
];

/** A name that reads like a credential (the logger's secret pattern, plus "credential"). */
const credentialLikeName = /key|token|secret|password|authorization|credential/i;

/**
 * The command settings. An environment variable named in `ERRAND_COMMAND_ENV` that holds (or looks like)
 * a credential is an error, not a silent drop: model-run commands never get credentials, and an operator
 * who listed one should learn that at start.
 */
export function commandSettings(
  env: NodeJS.ProcessEnv,
  file: { env?: string[] | undefined; sandbox?: CommandSandbox | undefined; network?: boolean | undefined; readOnlyPaths?: string[] | undefined; hookUrls?: string[] | undefined } | undefined,
  providers: readonly ProviderConfig[],
  mcpServers: readonly McpServerConfig[],
): CommandSettings {
  let names = file?.env ?? [];
  let source = 'commands.env (ERRAND_CONFIG)';
  const listed = env.ERRAND_COMMAND_ENV;
  if (listed !== undefined && listed.trim() !== '') {
    names = listed.split(',').map((name) => name.trim()).filter((name) => name !== '');
    source = 'ERRAND_COMMAND_ENV';
    const invalid = names.filter((name) => !envNameSchema.safeParse(name).success);
    if (invalid.length > 0) throw new ConfigError(`${source}="${listed}" is not valid: ${invalid.map((name) => `"${name}"`).join(', ')} ${invalid.length === 1 ? 'is not an environment variable name' : 'are not environment variable names'}; use a comma-separated list such as "LC_ALL,NODE_OPTIONS"`);
  }
  const credentials = new Set([
    ...credentialVariables,
    ...providers.map((provider) => provider.apiKeyEnv ?? (provider.kind === 'anthropic' ? defaultAnthropicApiKeyEnv : undefined)).filter((name): name is string => name !== undefined),
    ...mcpServers.flatMap((server) => (server.type === 'stdio' ? server.envFrom ?? [] : [])),
  ]);
  const refused = names.filter((name) => credentials.has(name) || credentialLikeName.test(name));
  if (refused.length > 0) {
    throw new ConfigError(`${source} lists ${refused.join(', ')}, which ${refused.length === 1 ? 'holds or looks like a credential' : 'hold or look like credentials'}: model-run commands never get credentials; remove ${refused.length === 1 ? 'it' : 'them'} (give a tool that needs a credential to an MCP server's envFrom instead)`);
  }

  let sandbox: CommandSandbox = file?.sandbox ?? CommandSandbox.none;
  const sandboxSetting = env.ERRAND_SANDBOX;
  if (sandboxSetting !== undefined && sandboxSetting !== '') {
    if (sandboxSetting !== CommandSandbox.none && sandboxSetting !== CommandSandbox.bwrap) {
      throw new ConfigError(`ERRAND_SANDBOX="${sandboxSetting}" is not valid: use "bwrap" (run every model command in a bubblewrap sandbox) or "none"`);
    }
    sandbox = sandboxSetting;
  }
  let network = file?.network ?? false;
  const networkSetting = env.ERRAND_SANDBOX_NETWORK;
  if (networkSetting !== undefined && networkSetting !== '') {
    if (networkSetting !== 'true' && networkSetting !== 'false') throw new ConfigError(`ERRAND_SANDBOX_NETWORK="${networkSetting}" is not valid: use true (sandboxed commands may use the network) or false (the default)`);
    network = networkSetting === 'true';
  }
  let readOnlyPaths = file?.readOnlyPaths ?? [];
  let pathsSource = 'commands.readOnlyPaths (ERRAND_CONFIG)';
  const pathsSetting = env.ERRAND_SANDBOX_READ_ONLY_PATHS;
  if (pathsSetting !== undefined && pathsSetting.trim() !== '') {
    readOnlyPaths = pathsSetting.split(':').map((path) => path.trim()).filter((path) => path !== '');
    pathsSource = 'ERRAND_SANDBOX_READ_ONLY_PATHS';
  }
  const relative = readOnlyPaths.filter((path) => !isAbsolute(path));
  if (relative.length > 0) throw new ConfigError(`${pathsSource}: ${relative.map((path) => `"${path}"`).join(', ')} ${relative.length === 1 ? 'is' : 'are'} not absolute; give absolute paths, ":"-separated (e.g. "/opt/toolchain:/usr/local/go")`);
  if (sandbox === CommandSandbox.none && (network || readOnlyPaths.length > 0)) {
    throw new ConfigError(`${network ? 'ERRAND_SANDBOX_NETWORK' : pathsSource} only applies to sandboxed commands, but ERRAND_SANDBOX is not "bwrap"; set ERRAND_SANDBOX=bwrap or remove it`);
  }
  return { env: [...new Set(names)], sandbox, network, readOnlyPaths, hookUrls: hookUrlSettings(env, file?.hookUrls) };
}

/**
 * `ERRAND_HOOK_URLS` (comma-separated) or `commands.hookUrls`: the http(s) URL prefixes agent files' `http`
 * hooks may POST to. Each is an absolute URL without a user, password, query or fragment; a hook's URL
 * is allowed when it has the same origin and its path starts with the prefix's path at a `/`.
 */
function hookUrlSettings(env: NodeJS.ProcessEnv, file: string[] | undefined): string[] {
  let urls = file ?? [];
  let source = 'commands.hookUrls (ERRAND_CONFIG)';
  const listed = env.ERRAND_HOOK_URLS;
  if (listed !== undefined && listed.trim() !== '') {
    urls = listed.split(',').map((url) => url.trim()).filter((url) => url !== '');
    source = 'ERRAND_HOOK_URLS';
  }
  return urls.map((text) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new ConfigError(`${source}: "${text}" is not a URL; list http(s) URL prefixes, comma-separated (e.g. "https://hooks.example.com/errand/")`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${source}: "${text}" is not an http(s) URL`);
    if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
      throw new ConfigError(`${source}: "${text}" has a user, password, query or fragment; give the scheme, host, port and path prefix only`);
    }
    return url.href;
  });
}
