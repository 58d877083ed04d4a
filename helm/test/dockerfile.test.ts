// Static checks of the repository's Dockerfile (there is no Docker engine on the build machines):
// the image is built in two stages, the final one runs as an unprivileged user with production
// dependencies only, and still has everything the service loads at run time. What it cannot check:
// that the image builds and starts; the recipe of the final stage (npm ci --omit=dev with the
// workspace manifests, then `node --import tsx services/signaling/src/main.ts`) was run by hand in a
// scratch directory when it was written (docs/kubernetes.md "Image").
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { parseDockerfile, type Stage } from '../src/dockerfile.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const final = stages[stages.length - 1] as Stage;
const args = (s: Stage, keyword: string): string[] => s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const readJson = (path: string): Record<string, unknown> => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as Record<string, unknown>;

/**
 * What the final stage's COPY instructions put where, relative to its WORKDIR: a destination ending in
 * `/` (or several sources) receives each source by its base name; otherwise the destination is the path.
 */
const copied = args(final, 'COPY').flatMap((a) => {
  const parts = a.split(/\s+/).filter((p) => !p.startsWith('--'));
  const sources = parts.slice(0, -1);
  const rawDest = (parts[parts.length - 1] ?? '').replace(/^\.\/?/, '');
  const intoDir = rawDest === '' || rawDest.endsWith('/') || sources.length > 1;
  return sources.map((source) => ({
    source,
    dest: intoDir ? `${rawDest}${source.split('/').pop() ?? ''}` : rawDest,
  }));
});

/** The workspace folders npm sees: root package.json globs expanded on this checkout. */
function workspaceDirs(): string[] {
  const globs = readJson('package.json')['workspaces'] as string[];
  return globs.flatMap((g) =>
    g.endsWith('/*') ? readdirSync(join(ROOT, g.slice(0, -2))).map((d) => `${g.slice(0, -2)}/${d}`).filter((d) => existsSync(join(ROOT, d, 'package.json'))) : [g],
  );
}

describe('Dockerfile', () => {
  it('is multi-stage: a build stage with every dependency, a separate final stage', () => {
    assert.ok(stages.length >= 2, `${stages.length} stage(s)`);
    const build = stages.find((s) => s.name === 'build');
    assert.ok(build, 'a stage named build');
    assert.ok(args(build, 'RUN').some((r) => /\bnpm ci\b(?![^&]*--omit=dev)/.test(r)), 'build stage installs all dependencies');
    assert.ok(args(build, 'RUN').some((r) => /\btsc -p\b/.test(r)), 'build stage type-checks');
    assert.notEqual(final.from, 'build', 'final stage starts from a clean base image');
    assert.match(final.from, /node/);
  });

  it('runs the final stage as a non-root user', () => {
    const users = args(final, 'USER');
    assert.ok(users.length > 0, 'USER in the final stage');
    const user = (users[users.length - 1] ?? '').split(':')[0];
    assert.ok(user !== 'root' && user !== '0', `USER ${user}`);
    const userAt = final.instructions.findIndex((i) => i.keyword === 'USER');
    const entryAt = final.instructions.findIndex((i) => i.keyword === 'ENTRYPOINT' || i.keyword === 'CMD');
    assert.ok(userAt >= 0 && userAt < entryAt, 'USER before the entrypoint');
  });

  it('gives the embedded store (no MYSQL_URL) a data directory the unprivileged user owns, as a volume', () => {
    const env = args(final, 'ENV').join(' ');
    const dir = /\bVMS_DATA_DIR=(\S+)/.exec(env)?.[1];
    assert.ok(dir !== undefined && dir.startsWith('/'), `ENV VMS_DATA_DIR (${env})`);
    const user = (args(final, 'USER').at(-1) ?? '').split(':')[0] ?? '';
    assert.ok(args(final, 'RUN').some((r) => r.includes(`chown ${user}`) && r.includes(dir)), `${dir} owned by ${user}`);
    assert.ok(args(final, 'VOLUME').some((v) => v.includes(dir)), `VOLUME ${dir}`);
  });

  it('has no devDependencies in the final stage', () => {
    const installs = args(final, 'RUN').filter((r) => /\bnpm (ci|install|i)\b/.test(r));
    assert.ok(installs.length > 0, 'final stage installs its dependencies itself');
    for (const r of installs) assert.match(r, /--omit=dev/, r);
    for (const c of copied) {
      assert.doesNotMatch(c.source, /node_modules/, `COPY ${c.source}`);
      assert.ok(!['/src', '/src/', '.', './'].includes(c.source), 'the build stage is not copied whole');
    }
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    assert.ok(ignore.includes('**/node_modules') && ignore.includes('.git'), '.dockerignore keeps node_modules and .git out of the context');
    // the entrypoint's loader is a production dependency, so --omit=dev keeps it
    const entry = args(final, 'ENTRYPOINT').join(' ');
    assert.match(entry, /--import", "tsx"/);
    const signaling = readJson('services/signaling/package.json');
    assert.ok(Object.keys(signaling['dependencies'] as object).includes('tsx'), 'tsx in @vms/signaling dependencies');
  });

  it('gives npm ci every workspace manifest and the service everything it loads', () => {
    const has = (path: string): boolean => copied.some((c) => path === c.dest || path.startsWith(`${c.dest}/`));
    assert.ok(has('package.json') && has('package-lock.json'));
    for (const dir of workspaceDirs()) assert.ok(has(`${dir}/package.json`), `${dir}/package.json (npm ci refuses a lockfile naming a missing workspace)`);
    // what services/signaling loads at run time: its sources, every @vms package it depends on, the migrations
    assert.ok(has('services/signaling/src/main.ts'));
    const deps = Object.keys(readJson('services/signaling/package.json')['dependencies'] as object).filter((d) => d.startsWith('@vms/'));
    for (const dep of deps) assert.ok(has(`shared/${dep.slice('@vms/'.length)}/src/index.ts`), dep);
    assert.ok(has('deploy/sql/V001__devices.sql'));
  });

  it('exposes SIP over UDP and TCP and the HTTP API', () => {
    const exposed = args(final, 'EXPOSE').join(' ').split(/\s+/);
    for (const p of ['5060/udp', '5060/tcp']) assert.ok(exposed.includes(p), p);
    assert.ok(exposed.includes('18080') || exposed.includes('18080/tcp'));
  });
});
