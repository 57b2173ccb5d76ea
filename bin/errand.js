#!/usr/bin/env node
/* global require, __dirname, process */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS launcher: it must pick the bundle or load tsx before any TypeScript */
'use strict';
// The `errand` command. Runs the bundled CLI (dist/cli-bundle/, built by `npm ci` through the `prepare` script and
// by `npm run build`) when it is at least as new as every source file and the installed dependencies;
// otherwise the TypeScript sources through tsx (a runtime dependency, so a clone works right after
// `npm ci --ignore-scripts`, and an edited source is never shadowed by an old bundle). An installed copy
// without sources runs the bundle, or the tsc build in dist/.
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const bundle = join(root, 'dist', 'cli-bundle', 'errand.mjs');
const sources = join(root, 'src');

function modifiedMs(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** The newest modification time under a folder (about 2 ms for the project's sources). */
function newestUnder(folder) {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : modifiedMs(path));
  }
  return newest;
}

/** Whether the bundle was built after the last change to the sources, package.json and the install. */
function bundleIsFresh() {
  const built = modifiedMs(bundle);
  if (built === 0) return false;
  // npm rewrites node_modules/.package-lock.json on every install, so a dependency change shows there.
  const inputs = [join(root, 'package.json'), join(root, 'package-lock.json'), join(root, 'node_modules', '.package-lock.json')];
  return inputs.every((input) => modifiedMs(input) <= built) && newestUnder(sources) <= built;
}

async function load() {
  if (existsSync(sources) && !bundleIsFresh()) {
    require('tsx/cjs/api').register();
    // The CLI loads each command with a dynamic import(), which Node hands to its ES module loader.
    (await import('tsx/esm/api')).register();
    return require(join(sources, 'cli.ts'));
  }
  if (existsSync(bundle)) return import(bundle);
  return require(join(root, 'dist', 'cli.js'));
}

// A reader that stops early (`errand peek --follow --json | head -3`) closes the pipe: stop quietly, as Unix
// tools do, instead of dying on the next write with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error && error.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw error;
  });
}

load()
  .then((cli) => cli.runCli(process.argv.slice(2)))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`errand: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
