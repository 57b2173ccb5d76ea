import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../src/api/api-config';
import { hashApiKey } from '../../src/api/auth-config';
import { chooseDevSandbox, devSandboxBanner } from '../../src/cli/dev-sandbox-default';
import { createDevStackToken, devStackTokenPath, readDevStackToken, removeDevStackToken, withDevStackToken } from '../../src/cli/dev-stack-token';
import { ensureBubblewrap } from '../support/bubblewrap';

/** `errand dev`'s token file and its sandbox default (the attacks against a running stack are in test/security). */

let dataDir = '';

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'errand-dev-security-'));
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe("errand dev's token", () => {
  it('is random per start, written for the owner only, read back, and removed only by its own stack', () => {
    const first = createDevStackToken(dataDir);
    expect(first.path).toBe(devStackTokenPath(dataDir));
    expect(first.token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(first.path).mode & 0o777).toBe(0o600);
    expect(readDevStackToken(dataDir)).toBe(first.token);
    const second = createDevStackToken(dataDir);
    expect(second.token).not.toBe(first.token);
    // An older stack stopping does not remove a newer stack's token.
    removeDevStackToken(dataDir, first.token);
    expect(readDevStackToken(dataDir)).toBe(second.token);
    removeDevStackToken(dataDir, second.token);
    expect(readDevStackToken(dataDir)).toBeUndefined();
  });

  it('guards the API where authentication would be off, and leaves configured keys alone', () => {
    const off = loadApiConfig({}, dataDir, { localDefault: true });
    expect(withDevStackToken(off, 'abc').auth).toEqual({ mode: 'stack-token', tenant: 'local', sha256: hashApiKey('abc') });
    const keyed = loadApiConfig({ ERRAND_API_KEYS: JSON.stringify([{ tenant: 'acme', sha256: hashApiKey('k') }]) }, dataDir, { localDefault: true });
    expect(withDevStackToken(keyed, 'abc')).toBe(keyed);
  });
});

describe("errand dev's sandbox default", () => {
  it('uses bwrap where it works, and says so', async () => {
    await ensureBubblewrap();
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
    const choice = await chooseDevSandbox(env, dataDir);
    expect(choice).toEqual({ kind: 'default' });
    expect(env.ERRAND_SANDBOX).toBe('bwrap');
    expect(devSandboxBanner(choice, env).join('\n')).toMatch(/^bubblewrap \(the default where bwrap works\).*no network.*ERRAND_SANDBOX=none turns it off/);
  });

  it('leaves an explicit ERRAND_SANDBOX or commands.sandbox as it is, and says what none means', async () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, ERRAND_SANDBOX: 'none' };
    const choice = await chooseDevSandbox(env, dataDir);
    expect(choice).toEqual({ kind: 'explicit', value: 'none', where: 'ERRAND_SANDBOX' });
    expect(env.ERRAND_SANDBOX).toBe('none');
    expect(devSandboxBanner(choice, env).join('\n')).toMatch(/^none \(ERRAND_SANDBOX=none\): model commands run as you, unsandboxed.*\/proc/);
    const file = join(dataDir, 'errand.json');
    writeFileSync(file, JSON.stringify({ commands: { sandbox: 'none' } }));
    const fileEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, ERRAND_CONFIG: file };
    expect(await chooseDevSandbox(fileEnv, dataDir)).toEqual({ kind: 'explicit', value: 'none', where: 'commands.sandbox in ERRAND_CONFIG' });
    expect(fileEnv.ERRAND_SANDBOX).toBeUndefined();
  });

  it('runs without it where bwrap is not found, and says plainly what is then not guaranteed', async () => {
    const env: NodeJS.ProcessEnv = { PATH: join(dataDir, 'no-such-bin') };
    const choice = await chooseDevSandbox(env, dataDir);
    expect(choice.kind).toBe('unavailable');
    expect(env.ERRAND_SANDBOX).toBeUndefined();
    const banner = devSandboxBanner(choice, env).join('\n');
    expect(banner).toMatch(/^NONE — bubblewrap is not usable here \(the bwrap program is not on the PATH/);
    expect(banner).toContain("errand's data (this stack's API token included)");
    expect(banner).toContain('through /proc (your LLM provider');
  });
});
