// redis-server under callgrind for the benches that count its instructions beside the platform's
// (keepalive-callgrind.ts --redis, renewal-callgrind.ts): started with instrumentation off, switched on
// for a window with callgrind_control; `INFO commandstats` says which commands the window ran.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, requireBinary } from '@vms/harness';

export interface CallgrindRedis {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

/** redis-server (no persistence, so it never forks) under callgrind, instrumentation off until switched on. */
export async function startRedisUnderCallgrind(out: string): Promise<CallgrindRedis> {
  const bin = requireBinary('redis-server', 'redis-server');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ka-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--protected-mode', 'no', '--logfile', ''];
  const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}.%p`, bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server under valgrind not ready in 120 s:\n${output.slice(-2000)}`)), 120_000);
    void exited.then(() => reject(new Error(`redis-server under valgrind exited:\n${output.slice(-2000)}`)));
    const onData = (d: Buffer): void => {
      output += d.toString();
      if (/Ready to accept connections/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid as number,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `INFO commandstats` as command → calls (RESP over a plain socket: the bench needs no client for it). */
export async function commandCalls(port: number): Promise<Map<string, number>> {
  const text = await new Promise<string>((resolve, reject) => {
    const sock = createConnection(port, '127.0.0.1');
    let buf = '';
    sock.setEncoding('latin1');
    sock.on('error', reject);
    sock.on('data', (d: string) => {
      buf += d;
      const m = /^\$(\d+)\r\n/.exec(buf);
      if (m !== null && buf.length >= m[0].length + Number(m[1]) + 2) {
        sock.end();
        resolve(buf.slice(m[0].length, m[0].length + Number(m[1])));
      }
    });
    sock.write('INFO commandstats\r\n');
  });
  const calls = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1] as string, Number(m[2]));
  return calls;
}

export function minus(after: ReadonlyMap<string, number>, before: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) out.set(k, v - (before.get(k) ?? 0));
  out.delete('info');
  return out;
}
