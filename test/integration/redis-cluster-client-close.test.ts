// A Redis Cluster client closed while its periodic slot refresh is in flight lets the process exit
// (cluster-slot-refresh.ts: ioredis 5.11 re-arms the refresh timer when that refresh completes, and the
// timer then refreshes the closed client forever, which kept a test file alive 2 runs in 24 under load).
// The client lives in a child process: whether that process ends by itself is the behaviour under test.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startRedisCluster, type RedisClusterHandle } from '@vms/harness';

let cluster: RedisClusterHandle;

before(async () => {
  cluster = await startRedisCluster({ masters: 3 });
});
after(async () => {
  await cluster?.stop();
});

/** Closes the client right after its first timed refresh round started (the round's refresh in flight). */
const CHILD = `
import { createRedisClient, subscriberConnection, waitForRedisReady } from '@vms/cluster';
const client = createRedisClient(process.env.CLUSTER_URL);
await waitForRedisReady(client);
const target = process.env.WHICH === 'subscriber' ? subscriberConnection(client, 'sub') : client;
if (target !== client) {
  await new Promise((resolve) => target.once('ready', resolve));
  client.disconnect();
}
const refresh = target.refreshSlotsCache.bind(target);
let closed = false;
target.refreshSlotsCache = (callback) => {
  refresh(callback);
  if (closed || callback === undefined) return;
  closed = true;
  target.disconnect();
  process.stdout.write('closed mid-refresh\\n');
};
`;

async function runChild(which: 'client' | 'subscriber'): Promise<{ exited: boolean; out: string; ms: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
    env: { ...process.env, CLUSTER_URL: cluster.url, WHICH: which },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const started = Date.now();
  // the refresh interval is 2 s: the first round, then at most one more interval until the chain ends
  const exited = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (!exited) child.kill('SIGKILL');
  return { exited, out, ms: Date.now() - started };
}

describe('Redis Cluster client closed mid slot refresh', () => {
  for (const which of ['client', 'subscriber'] as const) {
    it(`the ${which} connection's process exits by itself`, async () => {
      const { exited, out, ms } = await runChild(which);
      assert.match(out, /closed mid-refresh/, `the close must land while a refresh round is in flight\n${out}`);
      assert.ok(exited, `still running 15 s after start (the slot-refresh timer re-armed on a closed client)\n${out}`);
      assert.ok(ms < 15_000);
    });
  }
});
