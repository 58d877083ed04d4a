#!/usr/bin/env node
// Runs one package's node:test files through tsx. Usage: run-tests.mjs [dir ...] (default: src test)
// Files named *.test.ts are found recursively; the spec reporter prints the "ℹ pass N" lines scripts/test.sh sums.
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passthrough = process.argv.slice(2).filter((a) => a.startsWith('--'));
const roots = dirs.length > 0 ? dirs : ['src', 'test'];
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full);
    else if (name.endsWith('.test.ts')) files.push(full);
  }
};
for (const root of roots) if (existsSync(root)) walk(root);
files.sort();
if (files.length === 0) {
  console.log('no test files');
  process.exit(0);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', ...passthrough, ...files],
  { stdio: 'inherit', env: { ...process.env, FORCE_COLOR: '0' } },
);
process.exit(result.status ?? 1);
