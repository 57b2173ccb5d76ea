#!/usr/bin/env node
/* global require, __dirname, process */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS launcher: it must load tsx before any TypeScript */
'use strict';
// The `errand` command. Runs the TypeScript sources through tsx (a runtime dependency, so this works
// right after `npm ci` in a clean clone); an installed copy without sources runs the build in dist/.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const sources = join(__dirname, '..', 'src', 'cli.ts');
let cli;
if (existsSync(sources)) {
  require('tsx/cjs/api').register();
  cli = require(sources);
} else {
  cli = require(join(__dirname, '..', 'dist', 'cli.js'));
}
cli.runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`errand: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
