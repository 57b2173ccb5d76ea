import { describe, expect, it } from 'vitest';
import { assertAuthOnLoopback, loadApiConfig } from '../../src/api/api-config';
import { isLoopbackHost } from '../../src/settings/loopback-host';
import { joinRequestedWorkingDir, tenantWorkingDir } from '../../src/api/tenant-working-dir';
import { defaultDataDir, loadConfig } from '../../src/settings/config';

/** Security settings: where errand keeps its data, what commands get, the sandbox, auth off, tenant folders. */

describe('data folder', () => {
  it('defaults to the XDG state folder, never the current directory', () => {
    expect(defaultDataDir({ XDG_STATE_HOME: '/var/lib/someone/state', HOME: '/home/someone' })).toBe('/var/lib/someone/state/errand');
    expect(defaultDataDir({ HOME: '/home/someone' })).toBe('/home/someone/.local/state/errand');
    expect(loadConfig({ HOME: '/home/someone' }, '/home/someone/project').dataDir).toBe('/home/someone/.local/state/errand');
    expect(loadConfig({ ERRAND_DATA_DIR: 'state' }, '/srv').dataDir).toBe('/srv/state');
  });
});

describe('commands', () => {
  it('pass only the names the operator lists, and refuse names of credentials', () => {
    expect(loadConfig({ ERRAND_COMMAND_ENV: 'LC_ALL, NODE_OPTIONS' }).commands).toEqual({ env: ['LC_ALL', 'NODE_OPTIONS'], sandbox: 'none', network: false, readOnlyPaths: [], hookUrls: [] });
    expect(() => loadConfig({ ERRAND_COMMAND_ENV: 'LC_ALL,TEMPORAL_API_KEY' })).toThrow(/ERRAND_COMMAND_ENV lists TEMPORAL_API_KEY, which holds or looks like a credential: model-run commands never get credentials/);
    expect(() => loadConfig({ ERRAND_COMMAND_ENV: 'NPM_TOKEN' })).toThrow(/NPM_TOKEN, which holds or looks like a credential/);
    const providers = JSON.stringify([{ name: 'p', kind: 'openai-compatible', baseUrl: 'http://x', apiKeyEnv: 'LLM_CREDS', models: ['m'] }]);
    expect(() => loadConfig({ ERRAND_PROVIDERS: providers, ERRAND_COMMAND_ENV: 'LLM_CREDS' })).toThrow(/LLM_CREDS/);
    expect(() => loadConfig({ ERRAND_COMMAND_ENV: 'not a name' })).toThrow(/ERRAND_COMMAND_ENV="not a name" is not valid: "not a name" is not an environment variable name/);
  });

  it('name the sandbox settings and what is valid', () => {
    expect(loadConfig({ ERRAND_SANDBOX: 'bwrap', ERRAND_SANDBOX_NETWORK: 'true', ERRAND_SANDBOX_READ_ONLY_PATHS: '/opt/tools:/usr/local/go' }).commands).toEqual({
      env: [],
      sandbox: 'bwrap',
      network: true,
      readOnlyPaths: ['/opt/tools', '/usr/local/go'],
      hookUrls: [],
    });
    expect(() => loadConfig({ ERRAND_SANDBOX: 'docker' })).toThrow(/ERRAND_SANDBOX="docker" is not valid: use "bwrap"/);
    expect(() => loadConfig({ ERRAND_SANDBOX: 'bwrap', ERRAND_SANDBOX_NETWORK: 'yes' })).toThrow(/ERRAND_SANDBOX_NETWORK="yes" is not valid/);
    expect(() => loadConfig({ ERRAND_SANDBOX: 'bwrap', ERRAND_SANDBOX_READ_ONLY_PATHS: 'relative/tools' })).toThrow(/"relative\/tools" is not absolute/);
    expect(() => loadConfig({ ERRAND_SANDBOX_NETWORK: 'true' })).toThrow(/ERRAND_SANDBOX_NETWORK only applies to sandboxed commands, but ERRAND_SANDBOX is not "bwrap"/);
  });

  it('read the URLs http hooks may reach and name what is wrong with one', () => {
    expect(loadConfig({ ERRAND_HOOK_URLS: 'https://hooks.example.com/errand/, http://127.0.0.1:8080' }).commands.hookUrls).toEqual(['https://hooks.example.com/errand/', 'http://127.0.0.1:8080/']);
    expect(() => loadConfig({ ERRAND_HOOK_URLS: 'hooks.example.com' })).toThrow('ERRAND_HOOK_URLS: "hooks.example.com" is not a URL; list http(s) URL prefixes, comma-separated (e.g. "https://hooks.example.com/errand/")');
    expect(() => loadConfig({ ERRAND_HOOK_URLS: 'ftp://hooks.example.com/' })).toThrow('ERRAND_HOOK_URLS: "ftp://hooks.example.com/" is not an http(s) URL');
    expect(() => loadConfig({ ERRAND_HOOK_URLS: 'https://hooks.example.com/?x=1' })).toThrow('ERRAND_HOOK_URLS: "https://hooks.example.com/?x=1" has a user, password, query or fragment; give the scheme, host, port and path prefix only');
  });
});

describe('authentication off', () => {
  it('is allowed on loopback addresses only', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '192.168.1.5', 'example.com'].some(isLoopbackHost)).toBe(false);
    expect(() => loadApiConfig({ ERRAND_API_AUTH: 'off', ERRAND_API_HOST: '0.0.0.0' })).toThrow(/ERRAND_API_HOST=0.0.0.0 would serve the API without authentication to other machines/);
    expect(() => assertAuthOnLoopback({ mode: 'off', tenant: 'local' }, '0.0.0.0', '--host')).toThrow(/--host=0.0.0.0 would serve the API without authentication/);
    expect(() => assertAuthOnLoopback({ mode: 'keys', keys: [] }, '0.0.0.0', '--host')).not.toThrow();
    expect(loadApiConfig({ ERRAND_API_AUTH: 'off' }).host).toBe('127.0.0.1');
  });

  it('names a whole-number API setting that is out of range, and what would be valid', () => {
    expect(() => loadApiConfig({ ERRAND_API_AUTH: 'off', ERRAND_API_PORT: '70000' })).toThrow(expect.objectContaining({ name: 'ConfigError', message: 'ERRAND_API_PORT="70000" is not valid: use a whole number from 0 to 65535' }));
    expect(() => loadApiConfig({ ERRAND_API_AUTH: 'off', ERRAND_API_MAX_WAIT_MS: '1.5' })).toThrow(/ERRAND_API_MAX_WAIT_MS="1.5" is not valid: use a whole number from 0 to 900000/);
    expect(loadApiConfig({ ERRAND_API_AUTH: 'off', ERRAND_API_PORT: '' }).port).toBe(loadApiConfig({ ERRAND_API_AUTH: 'off' }).port);
  });
});

describe('tenant working directories', () => {
  it('are <root>/<tenant>, and a requested working_dir is joined by name only', () => {
    expect(tenantWorkingDir('/mnt/errand/root', { mode: 'keys', keys: [] }, 'acme')).toBe('/mnt/errand/root/acme');
    expect(tenantWorkingDir('/home/me/project', { mode: 'off', tenant: 'local' }, 'local')).toBe('/home/me/project');
    expect(joinRequestedWorkingDir('/w/acme', 'services/api')).toEqual({ ok: true, path: '/w/acme/services/api' });
    expect(joinRequestedWorkingDir('/w/acme', '..cache')).toEqual({ ok: true, path: '/w/acme/..cache' });
    for (const bad of ['../globex', '/etc', 'a/../../b', 'C:\\\\x', 'x\0y']) {
      const joined = joinRequestedWorkingDir('/w/acme', bad);
      expect(joined.ok, bad).toBe(false);
      expect(joined.ok ? '' : joined.message).not.toContain('/w/acme');
    }
  });
});
