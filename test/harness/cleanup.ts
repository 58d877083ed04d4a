/**
 * Last-resort cleanup of what the harness started: child processes and temporary directories.
 *
 * Normal teardown (`stop()`) unregisters a resource. Whatever is still registered when the test
 * process ends is removed three ways, because tests end in three ways:
 *  - normal exit or an uncaught exception: the `exit` hook (synchronous: SIGKILL + rmSync);
 *  - SIGINT / SIGTERM / SIGHUP (Ctrl-C, the test runner cancelling a file): same, then the signal is
 *    re-raised so the process still dies of it;
 *  - SIGKILL of the test process (nothing in it runs any more): a tiny detached `sh` reaper polls the
 *    parent pid and, once it is gone, kills and deletes what the manifest file still lists.
 * Nothing here runs at import: the hooks and the reaper start with the first registration.
 */
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Resource = { kind: 'pid'; pid: number } | { kind: 'dir'; path: string };

const resources = new Map<number, Resource>();
let nextId = 1;
let installed = false;
let reaperPid: number | undefined;
let manifestPath: string | undefined;

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

// Polls once a second; `kill -0` fails once the parent is gone (re-parented reaper keeps running).
const REAPER_SCRIPT = `
parent="$1"; manifest="$2"
while kill -0 "$parent" 2>/dev/null; do sleep 1; done
[ -f "$manifest" ] || exit 0
while read -r kind value; do
  case "$kind" in
    pid) kill -9 "$value" 2>/dev/null ;;
    dir) rm -rf "$value" ;;
  esac
done < "$manifest"
rm -f "$manifest"
`;

/** Registers a child process to be SIGKILLed if the test process ends without stopping it. */
export function registerPid(pid: number): () => void {
  return register({ kind: 'pid', pid });
}

/** Registers a directory to be removed if the test process ends without removing it. */
export function registerDir(path: string): () => void {
  return register({ kind: 'dir', path });
}

function register(resource: Resource): () => void {
  install();
  const id = nextId++;
  resources.set(id, resource);
  writeManifest();
  return () => {
    if (resources.delete(id)) writeManifest();
  };
}

function install(): void {
  if (installed) return;
  installed = true;
  manifestPath = join(tmpdir(), `vms-harness-${process.pid}.manifest`);
  process.once('exit', () => {
    cleanupNow();
    if (reaperPid !== undefined) tryKill(reaperPid, 'SIGKILL');
    if (manifestPath !== undefined) rmSync(manifestPath, { force: true });
  });
  for (const sig of SIGNALS) process.on(sig, onSignal);
  startReaper();
}

function onSignal(sig: NodeJS.Signals): void {
  cleanupNow();
  process.off(sig, onSignal);
  // Our listener suppressed the default action; if nobody else listens, restore it and re-raise.
  if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
}

/** Synchronously kills every registered process and removes every registered directory. */
export function cleanupNow(): void {
  const all = [...resources.values()];
  resources.clear();
  for (const r of all) if (r.kind === 'pid') tryKill(r.pid, 'SIGKILL');
  for (const r of all) if (r.kind === 'dir') rmSync(r.path, { recursive: true, force: true, maxRetries: 3 });
  writeManifest();
}

function startReaper(): void {
  if (manifestPath === undefined) return;
  try {
    const child = spawn('sh', ['-c', REAPER_SCRIPT, 'vms-harness-reaper', String(process.pid), manifestPath], {
      detached: true,
      stdio: 'ignore',
    });
    child.on('error', () => undefined); // no sh: the exit and signal hooks still work
    child.unref();
    reaperPid = child.pid;
  } catch {
    reaperPid = undefined;
  }
}

function writeManifest(): void {
  if (manifestPath === undefined) return;
  const lines = [...resources.values()].map((r) => (r.kind === 'pid' ? `pid ${r.pid}` : `dir ${r.path}`));
  writeFileSync(manifestPath, lines.length > 0 ? `${lines.join('\n')}\n` : '');
}

function tryKill(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}
