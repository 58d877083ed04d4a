// One device floods an instance with unsolicited 64 KB Catalog MESSAGEs over real UDP (SPEC SEC-3,
// issue #10 item 7). Prints, for the server's event loop: the longest block (perf_hooks
// monitorEventLoopDelay, max and p99), per-message answer latency at the start and the end of the
// flood (does a message cost more as the device's catalog grows?), RSS growth, the answers the device
// got (200 / 503 rate limited / 403 over the channel cap), and the time to parse one 64 KB body.
// Two runs: bounds lifted (per-message cost as the catalog grows to 105,000 channels) and defaults.
// Run from the repository root: npx tsx test/bench/device-flood.ts [--messages 150] [--quick]
// On a loaded machine the wall-clock figures (event loop, latency) stretch with the load; the CPU
// figures do not: read `uptime` beside them.
import dgram from 'node:dgram';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseManscdpCommand } from '@vms/gb28181';
import { pino } from 'pino';
import { loadConfig } from '../../services/signaling/src/config/load.ts';
import { systemClock } from '../../services/signaling/src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../services/signaling/src/devices/device-repository.memory.ts';
import { createDeviceEvents } from '../../services/signaling/src/events/device-events.ts';
import { startDeviceSide } from '../../services/signaling/src/sip/device-side.ts';
import { monitorMainThreadCpu } from './main-thread-cpu.ts';
import { isQuick, printSummary } from './summary.ts';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
};
const quick = isQuick();
const MESSAGES = Number(arg('messages') ?? (quick ? 40 : 150));
const ITEMS = 700;
const WINDOW = 8; // datagrams in flight: within the server's 4 MiB receive buffer
const DEV = '34020000001320000001';
const SERVER = '34020000002000000001';

/** A Catalog Response of 700 new items, ~62 KB, for message `n`. */
function catalogBody(n: number): string {
  const items: string[] = [];
  for (let i = 0; i < ITEMS; i++) {
    const id = `3402000000131${String(n * ITEMS + i).padStart(7, '0')}`;
    items.push(`<Item><DeviceID>${id}</DeviceID><Name>c${i}</Name><Status>ON</Status></Item>`);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\r\n<Response><CmdType>Catalog</CmdType><SN>${900_000 + n}</SN><DeviceID>${DEV}</DeviceID><SumNum>${MESSAGES * ITEMS}</SumNum><DeviceList Num="${ITEMS}">${items.join('')}</DeviceList></Response>`;
}

function request(method: string, port: number, localPort: number, cseq: number, body: string): Buffer {
  const head = [
    `${method} sip:${SERVER}@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${localPort};rport;branch=z9hG4bK${method}${cseq}x${Math.random().toString(16).slice(2)}`,
    `From: <sip:${DEV}@3402000000>;tag=flood`,
    `To: <sip:${method === 'REGISTER' ? DEV : SERVER}@3402000000>`,
    `Call-ID: flood-${method}-${cseq}`,
    `CSeq: ${cseq} ${method}`,
    'Max-Forwards: 70',
    ...(method === 'REGISTER' ? [`Contact: <sip:${DEV}@127.0.0.1:${localPort}>`, 'Expires: 3600'] : ['Content-Type: Application/MANSCDP+xml']),
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`);
}

interface RunFigures {
  readonly cpuMsPerMessage: number;
  readonly loopMaxMs: number;
  readonly blockCpuMaxMs: number;
  readonly firstMs: number;
  readonly lastMs: number;
}

async function run(label: string, env: Record<string, string>): Promise<RunFigures> {
  const config = loadConfig([], { VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', ...env });
  const devices = createMemoryDeviceRepository({ maxChannelsPerDevice: config.limits.deviceMaxChannels });
  const events = createDeviceEvents(pino({ level: 'silent' }));
  events.on('catalogChanged', () => {}); // as with the cascade attached: every catalog is diffed
  const side = await startDeviceSide({ sip: config.sip, devices, events, clock: systemClock, log: pino({ level: 'silent' }), utcOffsetMinutes: 480, userAgent: 'bench', limits: config.limits });
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  const localPort = sock.address().port;
  const pending = new Map<number, { sent: number; done: (status: number) => void }>();
  sock.on('message', (m) => {
    const text = m.toString('latin1', 0, 400);
    const status = Number(/^SIP\/2\.0 (\d{3})/.exec(text)?.[1]);
    const cseq = Number(/CSeq: (\d+)/.exec(text)?.[1]);
    if (status >= 200) pending.get(cseq)?.done(status);
  });
  const send = (method: string, cseq: number, body: string): Promise<{ status: number; ms: number }> =>
    new Promise((resolve) => {
      const sent = performance.now();
      const timer = setTimeout(() => pending.get(cseq)?.done(0), 10_000);
      pending.set(cseq, { sent, done: (status) => (clearTimeout(timer), pending.delete(cseq), resolve({ status, ms: performance.now() - sent })) });
      sock.send(request(method, side.sipPort, localPort, cseq, body), side.sipPort, '127.0.0.1');
    });
  if ((await send('REGISTER', 1, '')).status !== 200) throw new Error('REGISTER failed');
  const bodies = Array.from({ length: MESSAGES }, (_, n) => catalogBody(n));
  const loop = monitorEventLoopDelay({ resolution: 5 });
  const rss0 = process.memoryUsage().rss;
  const cpu0 = process.cpuUsage();
  loop.enable();
  const blocks = monitorMainThreadCpu();
  const results: { status: number; ms: number }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: WINDOW }, async () => {
      while (next < MESSAGES) {
        const n = next++;
        results[n] = await send('MESSAGE', 10 + n, bodies[n] as string);
      }
    }),
  );
  loop.disable();
  blocks.stop();
  const cpu = process.cpuUsage(cpu0);
  const rss1 = process.memoryUsage().rss;
  const count = (s: number): number => results.filter((r) => r.status === s).length;
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const ok = results.filter((r) => r.status === 200).map((r) => r.ms);
  const tenth = Math.max(1, Math.floor(ok.length / 10));
  console.log(`${label}: ${MESSAGES} messages x ${ITEMS} items (${(Buffer.byteLength(bodies[0] as string) / 1024).toFixed(1)} KiB), ${WINDOW} in flight`);
  console.log(`  answers: 200=${count(200)} 503=${count(503)} 403=${count(403)} none=${count(0)}; stored channels ${(await devices.getDevice(DEV))?.channelCount}`);
  console.log(`  process CPU per message (sender included, all threads): ${((cpu.user + cpu.system) / 1000 / MESSAGES).toFixed(1)} ms`);
  console.log(`  event loop: longest block ${blocks.maxMs.toFixed(1)} ms of main-thread CPU (target < 50 ms; ${blocks.ticks} ticks); wall delay max ${(loop.max / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms`);
  console.log(`  answer latency of 200s, median: first tenth ${median(ok.slice(0, tenth)).toFixed(1)} ms, last tenth ${median(ok.slice(-tenth)).toFixed(1)} ms`);
  console.log(`  RSS ${(rss0 / 2 ** 20).toFixed(0)} -> ${(rss1 / 2 ** 20).toFixed(0)} MiB`);
  sock.close();
  await side.close();
  return {
    cpuMsPerMessage: (cpu.user + cpu.system) / 1000 / MESSAGES,
    loopMaxMs: loop.max / 1e6,
    blockCpuMaxMs: blocks.maxMs,
    firstMs: median(ok.slice(0, tenth)),
    lastMs: median(ok.slice(-tenth)),
  };
}

function parseCost(): number {
  const body = Buffer.from(catalogBody(0));
  for (let i = 0; i < 5; i++) parseManscdpCommand(body);
  const n = 20;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) parseManscdpCommand(body);
  const c = process.cpuUsage(c0);
  console.log(
    `parse of one ${(body.length / 1024).toFixed(1)} KiB catalog body (${ITEMS} items): ${((c.user + c.system) / 1000 / n).toFixed(1)} ms CPU, ${((performance.now() - t0) / n).toFixed(1)} ms wall`,
  );
  return (c.user + c.system) / 1000 / n;
}

const parseMs = parseCost();
const lifted = await run('bounds lifted (rate, burst, cap)', {
  VMS_LIMITS_DEVICE_MESSAGE_RATE: '1000000000',
  VMS_LIMITS_DEVICE_MESSAGE_BURST: '1000000000',
  VMS_LIMITS_DEVICE_MAX_CHANNELS: '1000000',
});
const defaults = await run('default bounds', {});
const loopMax = Math.max(lifted.loopMaxMs, defaults.loopMaxMs);
const blockMax = Math.max(lifted.blockCpuMaxMs, defaults.blockCpuMaxMs);
printSummary({
  bench: 'device-flood',
  what: `${MESSAGES} unsolicited 64 KB catalogs from one device`,
  figures:
    `${lifted.cpuMsPerMessage.toFixed(1)} ms CPU per message up to ${MESSAGES * ITEMS} channels (answer p50 ${lifted.firstMs.toFixed(0)} → ${lifted.lastMs.toFixed(0)} ms), ` +
    `parse ${parseMs.toFixed(1)} ms CPU, longest event-loop block ${blockMax.toFixed(1)} ms CPU (wall ${loopMax.toFixed(0)} ms)`,
  target: 'event loop blocked < 50 ms (main-thread CPU) per input',
  met: blockMax < 50,
});
