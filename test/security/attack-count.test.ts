import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, test } from 'vitest';

/** The README and docs/security.md state how many attacks the suite tries: they must say what the suite does. */

const projectRoot = resolve(__dirname, '..', '..');

test('the README and docs/security.md state the number of attacks the suite tries', () => {
  const folder = join(projectRoot, 'test', 'security');
  const attacks = readdirSync(folder)
    .filter((file) => file.endsWith('.test.ts'))
    .flatMap((file) => readFileSync(join(folder, file), 'utf8').match(/^\s*attack\(/gm) ?? []);
  expect(attacks.length).toBeGreaterThan(0);
  const readme = /scripted model try (\d+) attacks/.exec(readFileSync(join(projectRoot, 'README.md'), 'utf8'))?.[1];
  const security = /It tries (\d+)\s+attacks/.exec(readFileSync(join(projectRoot, 'docs', 'security.md'), 'utf8'))?.[1];
  expect(Number(readme)).toBe(attacks.length);
  expect(Number(security)).toBe(attacks.length);
});
