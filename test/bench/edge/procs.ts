// Shared by test/bench/edge.ts and test/bench/edge-callgrind.ts: Kamailio started with a bench config,
// CPU ticks of a process tree from /proc, and a GB/T 28181 keepalive as the SIPp scenario sends it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireBinary, spawnManaged, tmpDir, type ManagedProcess } from '@vms/harness';

export const SERVER_ID = '34020000002000000001';
export const REALM = SERVER_ID.slice(0, 10);
export const TICK_US = 1_000_000 / 100; // USER_HZ = 100 on Linux
export const deviceIdOf = (i: number): string => `3402000000132${String(i).padStart(7, '0')}`;

function ticksOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime, stime (fields 14, 15)
  } catch {
    return 0;
  }
}

/** The process and its descendants (Kamailio forks its workers). */
export function treeOf(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      const children = readFileSync(`/proc/${out[i]}/task/${out[i]}/children`, 'utf8').trim();
      if (children !== '') out.push(...children.split(/\s+/).map(Number));
    } catch {
      // gone
    }
  }
  return out;
}

export const cpuTicks = (pid: number): number => treeOf(pid).reduce((s, p) => s + ticksOf(p), 0);

const udpBound = (port: number): boolean => readFileSync('/proc/net/udp', 'utf8').includes(`:${port.toString(16).toUpperCase().padStart(4, '0')} `);

/**
 * Kamailio on a bench config (-A defines), ready once `port` is bound. `wrap` runs it under e.g. valgrind;
 * `single`: `-D` (no daemon, the main process serves, with the config's `fork=no`) instead of `-DD`.
 */
export async function startKamailio(cfg: string, defines: readonly string[], port: number, o: { wrap?: readonly string[]; waitMs?: number; single?: boolean } = {}): Promise<ManagedProcess> {
  const bin = requireBinary('kamailio', 'kamailio');
  const run = tmpDir('vms-bench-kam-');
  const wrap = o.wrap ?? [];
  const waitMs = o.waitMs ?? 5000;
  const args = ['-f', cfg, o.single === true ? '-D' : '-DD', '-E', '-m', '64', '-M', '8', '-x', 'fm', '-P', join(run.path, 'kam.pid'), ...defines.flatMap((d) => ['-A', d])];
  const proc = wrap.length === 0 ? spawnManaged(bin, args, { name: 'kamailio' }) : spawnManaged(wrap[0] as string, [...wrap.slice(1), bin, ...args], { name: 'kamailio' });
  for (let i = 0; i < waitMs / 50; i++) {
    if (udpBound(port)) return proc;
    if (!proc.isRunning()) throw new Error(`kamailio failed to start: ${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`kamailio did not bind ${port}: ${proc.output()}`);
}

/** A keepalive as test/sipp/edge/keepalive.xml sends it (Via with rport, GB2312 body). */
export function keepalive(k: number, deviceId: string, localPort: number, tag = 'b'): Buffer {
  const body = `<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>${k}</SN>\r\n<DeviceID>${deviceId}</DeviceID>\r\n<Status>OK</Status>\r\n</Notify>\r\n`;
  const lines = [
    `MESSAGE sip:${SERVER_ID}@${REALM} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${localPort};rport;branch=z9hG4bK-${tag}${process.pid}-${k}`,
    `From: <sip:${deviceId}@${REALM}>;tag=${process.pid}k${k}`,
    `To: <sip:${SERVER_ID}@${REALM}>`,
    `Call-ID: ${tag}${k}-${process.pid}@127.0.0.1`,
    'CSeq: 20 MESSAGE',
    'Max-Forwards: 70',
    'User-Agent: vms-bench',
    'Content-Type: Application/MANSCDP+xml',
    `Content-Length: ${body.length}`,
    '',
    body,
  ];
  return Buffer.from(lines.join('\r\n'), 'latin1');
}

/** One command to edge-child.ts's bench control (TCP, `edge control <port>` in its output); its answer line. */
export async function edgeControl(port: number, command: string, timeoutMs = 60_000): Promise<string> {
  const { connect } = await import('node:net');
  return await new Promise<string>((resolve, reject) => {
    const conn = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`edge control: no answer to ${command}`));
    }, timeoutMs);
    conn.setEncoding('latin1');
    conn.on('data', (d: string) => (text += d));
    conn.on('end', () => {
      clearTimeout(timer);
      resolve(text.trim());
    });
    conn.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    conn.end(`${command}\n`);
  });
}
