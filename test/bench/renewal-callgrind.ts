// Instructions per ownership renewal by batch size, platform and redis-server, counted with callgrind
// (issue 11 target 4b): what one `renewMany` of B devices costs the Redis ownership store (ioredis's
// command encoding, auto-pipelining, reply parsing, the store's key strings and bookkeeping) and
// redis-server (the renewal script), per device, so the batch size of the recorder's renewals is decided
// by numbers. keepalive-callgrind.ts --redis measures the whole keepalive path; this isolates the renewal.
//   npx tsx test/bench/renewal-callgrind.ts [--batches 10,100,500] [--keys 2000] [--keep]
//   [--quick]  (500 devices, batches of 10 and 500)
//
//  1. redis-server (no persistence) and a node process holding the real store (createRedisClient +
//     createRedisOwnershipStore, as cluster-wiring.ts builds them) both run under
//     `valgrind --tool=callgrind --instr-atstart=no`; the store claims --keys devices (default 2,000);
//  2. per batch size B: the store renews all the devices in renewMany calls of B, one after the other,
//     40 times over (warm-up: the JIT tiers up), then a full collection (gc()), then 20 more rounds (the
//     JIT settles again after the collection flushed code), then counters zeroed, instrumentation on in
//     both processes, 5 more rounds of --keys devices, off, dumped;
//  3. prints per renewed device: the node process's instructions (all threads) and redis-server's, and
//     the Redis commands of the window (INFO commandstats).
// Each claim is renewed while it is ours (the script's PEXPIRE branch), as a keepalive's renewal is in the
// steady state. Everything both processes do in the window is billed (timers, GC, the cron of redis-server:
// ~1.5M instructions a second under valgrind, a few percent here).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { commandCalls, minus, startRedisUnderCallgrind } from './redis-callgrind.ts';
import { isQuick, printSummary } from './summary.ts';

const SELF = fileURLToPath(import.meta.url);
const INSTANCE = 'renewal-callgrind-a';
const TTL_MS = 210_000;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}
const QUICK = isQuick();
const KEYS = Number(arg('keys', QUICK ? '500' : '2000'));
const BATCHES = arg('batches', QUICK ? '10,500' : '10,100,500')
  .split(',')
  .map(Number)
  .filter((b) => b > 0);
const WARM_ROUNDS = 40;
const SETTLE_ROUNDS = 20;
const COUNTED_ROUNDS = 5;

const deviceIdOf = (i: number): string => `3402000000132${String(i + 1).padStart(7, '0')}`;

/** Child mode, under valgrind: the store, driven by `round B` / `gc` lines on stdin, `OK` on stdout after each. */
async function serve(): Promise<void> {
  const { createRedisClient, createRedisOwnershipStore, waitForRedisReady } = await import('@vms/cluster');
  const client = createRedisClient(arg('redis-url', ''), { commandTimeoutMs: 60_000, connectionName: 'renewal-callgrind' });
  await waitForRedisReady(client, 120_000);
  const store = createRedisOwnershipStore(client);
  const ids = Array.from({ length: KEYS }, (_, i) => deviceIdOf(i));
  await store.claimMany(
    ids.map((deviceId) => ({ deviceId, ttlMs: TTL_MS })),
    INSTANCE,
  );
  const round = async (batch: number): Promise<void> => {
    for (let i = 0; i < ids.length; i += batch) {
      const elsewhere = await store.renewMany(ids.slice(i, i + batch), INSTANCE, TTL_MS);
      if (elsewhere.size > 0) throw new Error(`${elsewhere.size} claims held elsewhere`);
    }
  };
  process.stdout.write('READY\n');
  for await (const line of createInterface({ input: process.stdin })) {
    const [what, n] = line.split(' ');
    if (what === 'gc') (globalThis as { gc?: () => void }).gc?.();
    else if (what === 'round') await round(Number(n));
    else break;
    process.stdout.write('OK\n');
  }
  await store.close();
  await client.quit();
}

function control(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${args.join(' ')} failed: ${r.stderr}`);
}

/** Total of dump `n` of the files `${prefix}.<pid>.<n>` in dir (one process, all threads). */
function dumpTotal(dir: string, prefix: string, n: number): { instructions: number; file: string } {
  let instructions = 0;
  let file = '';
  for (const f of readdirSync(dir).filter((x) => x.startsWith(`${prefix}.`) && x.endsWith(`.${n}`))) {
    const m = /^totals: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'));
    instructions += m === null ? 0 : Number(m[1]);
    file = join(dir, f);
  }
  return { instructions, file };
}

async function main(): Promise<void> {
  if (process.argv.includes('--serve')) return serve();
  const keep = process.argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'renewal-callgrind-'));
  const redis = await startRedisUnderCallgrind(join(dir, 'callgrind.redis-server'));
  const out = join(dir, 'callgrind.node');
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}.%p`, process.execPath, '--expose-gc', ...process.execArgv, SELF, '--serve', '--redis-url', redis.url, '--keys', String(KEYS)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (what: string): Promise<void> => {
    const r = await lines.next();
    if (r.done === true || r.value !== what) throw new Error(`expected ${what}, got ${String(r.value)}:\n${stderr.slice(-2000)}`);
  };
  const ask = async (line: string): Promise<void> => {
    child.stdin.write(`${line}\n`);
    await next('OK');
  };
  const pid = child.pid as number;
  const figures: string[] = [];
  try {
    await next('READY');
    let dump = 0;
    for (const batch of BATCHES) {
      for (let r = 0; r < WARM_ROUNDS; r++) await ask(`round ${batch}`);
      await ask('gc');
      for (let r = 0; r < SETTLE_ROUNDS; r++) await ask(`round ${batch}`);
      const before = await commandCalls(redis.port);
      for (const p of [pid, redis.pid]) control(p, '-z');
      for (const p of [pid, redis.pid]) control(p, '-i', 'on');
      for (let r = 0; r < COUNTED_ROUNDS; r++) await ask(`round ${batch}`);
      for (const p of [pid, redis.pid]) control(p, '-i', 'off');
      for (const p of [pid, redis.pid]) control(p, '-d');
      dump++;
      const commands = [...minus(await commandCalls(redis.port), before)].map(([c, v]) => `${c} ${v}`).join(', ');
      const node = dumpTotal(dir, 'callgrind.node', dump).instructions / (KEYS * COUNTED_ROUNDS);
      const rs = dumpTotal(dir, 'callgrind.redis-server', dump).instructions / (KEYS * COUNTED_ROUNDS);
      const fmt = (v: number): string => Math.round(v).toLocaleString('en-US');
      process.stdout.write(`batch ${batch}: ${fmt(node)} (platform) + ${fmt(rs)} (redis-server) instructions per renewed device; ${commands}\n`);
      figures.push(`batch ${batch}: ${fmt(node)} + ${fmt(rs)}`);
    }
    child.stdin.write('quit\n');
    printSummary({
      bench: 'renewal-callgrind',
      what: `instructions per ownership renewal, platform + redis-server, by renewMany batch size (${KEYS.toLocaleString('en-US')} devices, 5 rounds counted)`,
      figures: figures.join('; '),
      target: '',
      met: null,
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
    await redis.stop();
    if (keep) process.stdout.write(`callgrind files kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
