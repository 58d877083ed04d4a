// test/bench/edge.ts's shard: the real device side of a signaling instance (SIP stack, handlers, memory
// device store; startDeviceSide as services/signaling builds it, without HTTP or cluster parts), with
// devices already bound as a REGISTER that passed digest would bind them (SPEC SEC-1): the first half to
// a direct device flow, the second half to the edge's flow and the device flow the edge names (`vms-f`,
// the bench edge's secret), so the same keepalives can be sent direct and through the edge.
// argv: devices, direct device port, edge port, device port behind the edge. Prints `READY <sip port>`.
import { pino } from 'pino';
import { FlowCodec } from '@vms/sip-edge';
import { loadConfig } from '../../../services/signaling/src/config/load.ts';
import { systemClock } from '../../../services/signaling/src/core/clock.ts';
import { createMemoryDeviceRepository } from '../../../services/signaling/src/devices/device-repository.memory.ts';
import { createDeviceEvents } from '../../../services/signaling/src/events/device-events.ts';
import { startDeviceSide } from '../../../services/signaling/src/sip/device-side.ts';
import { deviceIdOf } from './procs.ts';

/** The edge child's flow secret (edge-child.ts). */
export const BENCH_FLOW_SECRET = Buffer.alloc(32, 5);

const [devicesText = '1000', directPortText = '0', edgePortText = '0', behindPortText = '0'] = process.argv.slice(2);
const devicesN = Number(devicesText);
const log = pino({ level: 'warn' });
const config = loadConfig([], { VMS_GB28181_SIP_HOST: '127.0.0.1', VMS_GB28181_SIP_PORT: '0', VMS_GB28181_SIP_PASSWORD: '', VMS_LIMITS_EDGE_ADDRESSES: '127.0.0.1' });
const devices = createMemoryDeviceRepository();
const side = await startDeviceSide({ sip: config.sip, devices, events: createDeviceEvents(log), clock: systemClock, log, utcOffsetMinutes: 480, userAgent: 'vms-signaling/0.1.0', limits: config.limits });
const codec = new FlowCodec(BENCH_FLOW_SECRET);
const now = Date.now();
const local = { localAddress: '127.0.0.1', localPort: side.sipPort };
for (let i = 0; i < devicesN; i++) {
  const deviceId = deviceIdOf(i);
  const behind = i >= devicesN / 2;
  const port = Number(behind ? edgePortText : directPortText);
  await devices.registerDevice({ deviceId, transport: 'UDP', remoteIp: '127.0.0.1', remotePort: port, expiresSec: 3600, at: now });
  side.flows.register({
    deviceId,
    flow: { transport: 'udp', remoteAddress: '127.0.0.1', remotePort: port, ...local },
    charset: 'GB2312',
    gbVersion: '2016',
    registeredAt: now,
    expiresAt: now + 3600_000,
    edgeFlow: behind ? codec.encode({ transport: 'udp', address: '127.0.0.1', port: Number(behindPortText) }) : null,
    path: null,
  });
}
process.stdout.write(`READY ${side.sipPort}\n`);
process.on('SIGTERM', () => process.exit(0));
