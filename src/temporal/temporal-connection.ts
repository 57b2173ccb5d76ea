import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { loadClientConfigProfile, loadConfigData, type ClientConfigProfile, type ConfigDataSource } from '@temporalio/envconfig';

/**
 * How errand reaches a Temporal cluster: the local dev server, a self-hosted cluster, or Temporal Cloud.
 *
 * Settings come from Temporal's own environment configuration (`@temporalio/envconfig`), so a `temporal`
 * CLI profile and errand agree: the TOML file named by `TEMPORAL_CONFIG_FILE` (default
 * `~/.config/temporalio/temporal.toml`), profile `TEMPORAL_PROFILE` (default `default`), overridden by the
 * standard variables `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS`,
 * `TEMPORAL_TLS_CLIENT_CERT_PATH` / `_DATA`, `TEMPORAL_TLS_CLIENT_KEY_PATH` / `_DATA`,
 * `TEMPORAL_TLS_SERVER_CA_CERT_PATH` / `_DATA`, `TEMPORAL_TLS_SERVER_NAME` and `TEMPORAL_GRPC_META_*`.
 * errand's older `ERRAND_TEMPORAL_ADDRESS` / `ERRAND_TEMPORAL_NAMESPACE` win over all of them.
 *
 * Everything is checked here, once, at start (DESIGN.md convention 8): a half-configured connection (a
 * certificate without its key, credentials without an address, Temporal Cloud without credentials) is an
 * error that names the setting, rather than a TLS handshake failure minutes later.
 */

/** Thrown for a missing or inconsistent connection setting; the message names the setting. */
export class TemporalConnectionConfigError extends Error {
  readonly errandError = 'TemporalConnectionConfigError';
  constructor(message: string) {
    super(message);
    this.name = 'TemporalConnectionConfigError';
  }
}

/**
 * TLS settings in the shape both `Connection.connect` (client) and `NativeConnection.connect` (worker)
 * accept (`TLSConfig` of @temporalio/common).
 */
export interface TemporalTlsOptions {
  serverNameOverride?: string;
  serverRootCACertificate?: Uint8Array;
  clientCertPair?: { crt: Uint8Array; key: Uint8Array };
}

/**
 * Options accepted as they are by both `Connection.connect` and `NativeConnection.connect`. A field is
 * present only when it is set, so the SDK's own defaults apply otherwise.
 */
export interface TemporalConnectOptions {
  address: string;
  /** `true` = TLS with the system's CAs; an object adds mTLS, a private CA or an SNI override. */
  tls?: TemporalTlsOptions | true;
  /** Sent as `Authorization: Bearer <key>` (Temporal Cloud API keys); always over TLS. */
  apiKey?: string;
  /** Extra gRPC headers (`TEMPORAL_GRPC_META_*`, profile `grpc_meta`). */
  metadata?: Record<string, string>;
}

/** The resolved connection: options for either connection kind, the namespace, and a log-safe summary. */
export interface TemporalConnectionSettings {
  connection: TemporalConnectOptions;
  namespace: string;
  /** One line for the start-up log: address, namespace and the kind of auth, never a secret. */
  summary: string;
}

/** Values from errand's own configuration file, used when neither the environment nor a profile sets them. */
export interface TemporalConnectionFallback {
  address?: string | undefined;
  namespace?: string | undefined;
}

/** The local dev server (`temporal server start-dev`), used when nothing else is configured. */
export const localTemporalAddress = '127.0.0.1:7233';
/** The namespace the dev server creates. */
export const localTemporalNamespace = 'default';

const temporalCloudHost = /\.tmprl\.cloud$/i;

function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) result[name] = value;
  return result;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** Which setting a value came from, for error messages: the env variable when set, else the profile key. */
function origin(env: Record<string, string>, variables: string[], profileKey: string, where: string): string {
  const set = variables.filter((name) => nonEmpty(env[name]) !== undefined);
  return set.length > 0 ? set.join(' / ') : `${profileKey} in ${where}`;
}

function checkAddress(address: string, setting: string): void {
  // host:port, [v6]:port — the SDKs take no scheme and need the port.
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:/\s[\]]+):(\d{1,5})$/.exec(address);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port < 1 || port > 65_535) {
    throw new TemporalConnectionConfigError(
      `${setting}="${address}" is not a Temporal address: use host:port without a scheme, e.g. "${localTemporalAddress}" (dev server), ` +
        '"temporal-frontend.internal:7233" (self-hosted) or "<namespace>.<account>.tmprl.cloud:7233" (Temporal Cloud)',
    );
  }
}

function readPem(source: ConfigDataSource | undefined, setting: string, label: string): Uint8Array | undefined {
  if (source === undefined) return undefined;
  if ('path' in source && !existsSync(source.path)) {
    throw new TemporalConnectionConfigError(`${setting} names ${source.path}, which does not exist (${label})`);
  }
  let bytes: Uint8Array | undefined;
  try {
    bytes = loadConfigData(source);
  } catch (error) {
    throw new TemporalConnectionConfigError(`${setting} cannot be read (${label}): ${error instanceof Error ? error.message : String(error)}`);
  }
  if (bytes === undefined || bytes.length === 0) throw new TemporalConnectionConfigError(`${setting} is empty (${label})`);
  // Secrets stores often hold a PEM with its newlines escaped; refuse it here, where the cause is clear.
  const text = Buffer.from(bytes).toString('utf8');
  if (!text.includes('-----BEGIN ')) {
    throw new TemporalConnectionConfigError(
      `${setting} is not PEM (${label}): expected text starting with "-----BEGIN ..."; if it came from a secret, check that its newlines were kept`,
    );
  }
  return bytes;
}

/**
 * Resolves and validates the Temporal connection from the environment (and the TOML profile it names).
 * `fallback` carries values from errand's own configuration file; they apply only where neither the
 * environment nor the profile sets a value. Throws {@link TemporalConnectionConfigError} naming the setting.
 *
 * @example
 * const temporal = temporalConnectionOptions(process.env);
 * const connection = await NativeConnection.connect(temporal.connection);
 * const worker = await Worker.create({ connection, namespace: temporal.namespace, ... });
 */
export function temporalConnectionOptions(env: NodeJS.ProcessEnv = process.env, fallback: TemporalConnectionFallback = {}): TemporalConnectionSettings {
  const vars = definedEnv(env);
  const configFile = nonEmpty(vars.TEMPORAL_CONFIG_FILE);
  // envconfig treats a missing file as "no file", which would silently drop an explicit setting.
  if (configFile !== undefined && !existsSync(configFile)) {
    throw new TemporalConnectionConfigError(`TEMPORAL_CONFIG_FILE names ${configFile}, which does not exist: fix the path or unset it`);
  }
  const profileName = nonEmpty(vars.TEMPORAL_PROFILE) ?? 'default';
  const where = `profile "${profileName}" of ${configFile ?? 'the default Temporal config file (~/.config/temporalio/temporal.toml)'}`;
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: vars });
  } catch (error) {
    throw new TemporalConnectionConfigError(`Temporal client configuration (${where}) cannot be loaded: ${error instanceof Error ? error.message : String(error)}`);
  }

  const errandAddress = nonEmpty(vars.ERRAND_TEMPORAL_ADDRESS);
  const profileAddress = nonEmpty(profile.address);
  const address = errandAddress ?? profileAddress ?? nonEmpty(fallback.address) ?? localTemporalAddress;
  const addressSetting = errandAddress ? 'ERRAND_TEMPORAL_ADDRESS' : origin(vars, ['TEMPORAL_ADDRESS'], 'address', where);
  checkAddress(address, addressSetting);
  const namespace = nonEmpty(vars.ERRAND_TEMPORAL_NAMESPACE) ?? nonEmpty(profile.namespace) ?? nonEmpty(fallback.namespace) ?? localTemporalNamespace;

  const apiKey = nonEmpty(profile.apiKey);
  const tlsSettings = profile.tls;
  const certSetting = origin(vars, ['TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_DATA'], 'tls.client_cert_path / tls.client_cert_data', where);
  const keySetting = origin(vars, ['TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_CLIENT_KEY_DATA'], 'tls.client_key_path / tls.client_key_data', where);
  const caSetting = origin(vars, ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_SERVER_CA_CERT_DATA'], 'tls.server_ca_cert_path / tls.server_ca_cert_data', where);
  const certificate = readPem(tlsSettings?.clientCert, certSetting, 'the mTLS client certificate');
  const key = readPem(tlsSettings?.clientKey, keySetting, 'the mTLS client private key');
  const serverCa = readPem(tlsSettings?.serverCACert, caSetting, 'the CA certificate of the server');
  if (certificate && !key) {
    throw new TemporalConnectionConfigError(`the mTLS client certificate is set (${certSetting}) but its private key is missing: set TEMPORAL_TLS_CLIENT_KEY_PATH or TEMPORAL_TLS_CLIENT_KEY_DATA`);
  }
  if (key && !certificate) {
    throw new TemporalConnectionConfigError(`the mTLS client private key is set (${keySetting}) but its certificate is missing: set TEMPORAL_TLS_CLIENT_CERT_PATH or TEMPORAL_TLS_CLIENT_CERT_DATA`);
  }
  const tlsDisabled = tlsSettings?.disabled === true;
  const tlsSetting = origin(vars, ['TEMPORAL_TLS'], 'tls.disabled', where);
  if (tlsDisabled && (apiKey || certificate || serverCa)) {
    throw new TemporalConnectionConfigError(
      `TLS is turned off (${tlsSetting}) but ${apiKey ? 'an API key' : certificate ? 'an mTLS certificate' : 'a server CA certificate'} is configured: ` +
        'credentials are only ever sent over TLS; remove TEMPORAL_TLS=false (or tls.disabled) or the credentials',
    );
  }
  const credentialsConfigured = apiKey !== undefined || certificate !== undefined;
  if (credentialsConfigured && !errandAddress && !profileAddress && !nonEmpty(fallback.address)) {
    throw new TemporalConnectionConfigError(
      `Temporal credentials are configured (${apiKey ? 'TEMPORAL_API_KEY / api_key' : certSetting}) but no address: set TEMPORAL_ADDRESS ` +
        `(e.g. "<namespace>.<account>.tmprl.cloud:7233"); the default ${localTemporalAddress} is the local dev server`,
    );
  }
  const host = address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  const cloud = temporalCloudHost.test(host) || /^[a-z0-9-]+\.[a-z0-9-]+\.api\.temporal\.io$/i.test(host);
  if (cloud) {
    if (!credentialsConfigured) {
      throw new TemporalConnectionConfigError(
        `${address} is Temporal Cloud, which needs credentials: set TEMPORAL_API_KEY (an API key), or TEMPORAL_TLS_CLIENT_CERT_PATH and ` +
          'TEMPORAL_TLS_CLIENT_KEY_PATH (or their _DATA forms) for mTLS',
      );
    }
    if (namespace === localTemporalNamespace) {
      throw new TemporalConnectionConfigError(`${address} is Temporal Cloud, where the namespace is "<name>.<account>": set TEMPORAL_NAMESPACE (or ERRAND_TEMPORAL_NAMESPACE)`);
    }
    if (tlsDisabled) throw new TemporalConnectionConfigError(`${address} is Temporal Cloud, which accepts only TLS: remove ${tlsSetting}`);
  }
  if (isIP(host) === 0 && host.length > 253) throw new TemporalConnectionConfigError(`${addressSetting}: the host name is longer than 253 characters`);

  let tls: TemporalTlsOptions | true | undefined;
  if (!tlsDisabled) {
    const custom: TemporalTlsOptions = {
      ...(nonEmpty(tlsSettings?.serverName) ? { serverNameOverride: nonEmpty(tlsSettings?.serverName) } : {}),
      ...(serverCa ? { serverRootCACertificate: serverCa } : {}),
      ...(certificate && key ? { clientCertPair: { crt: certificate, key } } : {}),
    };
    if (Object.keys(custom).length > 0) tls = custom;
    // An API key implies TLS (as envconfig and the CLI do); so does `TEMPORAL_TLS=true` alone or Cloud.
    else if (tlsSettings !== undefined || apiKey !== undefined || cloud) tls = true;
  }
  const metadata = profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? { ...profile.grpcMeta } : undefined;

  const auth = [apiKey ? 'API key' : undefined, certificate ? 'mTLS client certificate' : undefined].filter(Boolean).join(' + ') || 'no credentials';
  return {
    connection: {
      address,
      ...(tls !== undefined ? { tls } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(metadata ? { metadata } : {}),
    },
    namespace,
    summary: `${address} (namespace ${namespace}, ${tls ? 'TLS' : 'plaintext'}, ${auth})`,
  };
}

/** Settings of the Temporal connection (address, TLS, API key: {@link TemporalConnectOptions}) and its namespace, as the API's client connects. */
export interface TemporalClientSettings {
  connection: TemporalConnectOptions;
  namespace: string;
}
