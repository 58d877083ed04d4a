// Chaos: the device trust boundary (issue #10, SPEC SEC-1). One instance with a device password and a
// simulated device registered through a UDP tap; the attacker is a socket on another port of the same
// host, knowing everything on the wire (ids, the captured Authorization) but not the password.
//   - hijack: a keepalive MESSAGE with the device's From from another address is refused (403 or 401) and
//     the device's controls still go to the device, from the address it registered from;
//   - digest replay: the captured REGISTER Authorization replayed from another port, and with Expires: 0,
//     is refused with 401 stale=true and the device stays online where it was.
import { after, describe } from 'node:test';
import { createSimulatedDevice, type SimulatedDevice } from '@vms/device-sim';
import { waitFor } from '@vms/harness';
import type { SipResponse } from '@vms/sip';
import { PASSWORD, SERVER_ID, startInstance, waitOnline, type DeviceView, type Instance } from '../integration/signaling-fixture.ts';
import { deviceMessage, keepaliveBody, replayedRegister, udpPeer, type UdpPeer } from './raw-sip.ts';
import { chaosBefore, chaosScenario, type ScenarioRun } from './scenario.ts';
import { startUdpTap, type UdpTap } from './relays.ts';

/** A SIP request of the attacker or an API control request must be answered within this, ms. */
const BOUND_MS = 3000;
/** Spoofed keepalives / replays sent per scenario. */
const ATTEMPTS = 20;
/** Status codes that refuse a spoofed MESSAGE (issue #10: 403 or 401). */
const HIJACK_REFUSALS = [401, 403];
const HIJACKED_ID = '34020000001320000101';
const REPLAYED_ID = '34020000001320000102';
const CHANNELS = 2;
const SCENARIO_TIMEOUT_MS = 60_000;

let instance: Instance;
let attacker: UdpPeer;
const closers: (() => Promise<unknown>)[] = [];

chaosBefore(async () => {
  instance = await startInstance({ VMS_GB28181_SIP_KEEPALIVE_INTERVAL: '2' });
  attacker = await udpPeer(instance.sipPort);
});

after(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await attacker?.close();
  await instance?.stop();
});

interface Victim {
  readonly device: SimulatedDevice;
  readonly tap: UdpTap;
  /** Source port the platform saw the REGISTER from (the tap's). */
  readonly registeredFrom: number | null;
}

/** A simulated device registered through its own tap, catalog synced: each scenario attacks a fresh one. */
async function victim(deviceId: string): Promise<Victim> {
  const tap = await startUdpTap(instance.sipPort);
  closers.push(() => tap.close());
  const device = createSimulatedDevice({
    server: { host: '127.0.0.1', port: tap.port, id: SERVER_ID },
    deviceId,
    password: PASSWORD,
    channels: CHANNELS,
    keepaliveIntervalS: 1,
  });
  closers.push(() => device.close());
  await device.start();
  await waitFor(() => device.registered, { timeoutMs: 10_000, description: `${deviceId} registered` });
  const sync = await instance.api('POST', `/vms/device/catalog/sync?deviceId=${deviceId}`);
  if (!sync.success) throw new Error(`catalog sync: ${JSON.stringify(sync)}`);
  await waitFor(async () => (await rows(deviceId)).size >= 1 + CHANNELS, { timeoutMs: 15_000, description: 'channels stored' });
  return { device, tap, registeredFrom: (await waitOnline(instance, deviceId)).remotePort };
}

/** The device's id and its channel ids, as the API lists them. */
async function rows(deviceId: string): Promise<Set<string>> {
  const out = new Set<string>();
  const view = await instance.api('GET', `/vms/devices/${deviceId}`);
  if (view.success) out.add(deviceId);
  const channels = await instance.api<{ records: { channelId: string }[] }>('GET', `/vms/channels?deviceId=${deviceId}&size=1000`);
  for (const c of channels.success ? channels.data.records : []) out.add(c.channelId);
  return out;
}

/** The device must still be online, at the address it registered from, and obey a PTZ command. */
async function deviceStillInControl(run: ScenarioRun, v: Victim): Promise<void> {
  const view = await instance.api<DeviceView>('GET', `/vms/devices/${v.device.deviceId}`);
  run.check(view.success && view.data.online, 'device offline after the attack');
  run.check(view.data.remotePort === v.registeredFrom, `device address moved from port ${v.registeredFrom} to ${view.data.remotePort}`);
  const before = v.device.controls.length;
  const t0 = performance.now();
  const ptz = await instance.api('POST', `/vms/ptz/control?channelId=${v.device.channelIds[0]}&command=left&speed=128`);
  const ms = performance.now() - t0;
  if (ptz.success && ms <= BOUND_MS) run.within++;
  else run.late++;
  run.check(ptz.success, `PTZ after the attack answered ${ptz.code} ${ptz.msg}`);
  await waitFor(() => v.device.controls.length > before, { timeoutMs: BOUND_MS, description: 'PTZ reached the real device' }).catch(() => {
    run.check(false, 'PTZ command did not reach the real device');
  });
}

/** Sends ATTEMPTS requests from the attacker and tallies the answers. */
async function attack(run: ScenarioRun, build: (i: number) => Buffer, judge: (r: SipResponse) => string | null): Promise<string> {
  const answers = new Map<string, number>();
  for (let i = 0; i < ATTEMPTS; i++) {
    const t0 = performance.now();
    const r = await attacker.request(build(i), BOUND_MS + 1000);
    const ms = performance.now() - t0;
    const key = r === null ? 'no answer' : String(r.status);
    answers.set(key, (answers.get(key) ?? 0) + 1);
    if (r !== null && ms <= BOUND_MS) run.within++;
    else run.late++;
    if (r === null) run.check(false, 'attempt not answered');
    else {
      const wrong = judge(r);
      if (wrong !== null) run.check(false, wrong);
    }
  }
  return [...answers].map(([k, n]) => `${k}×${n}`).join(' ');
}

describe('chaos: device trust boundary', () => {
  chaosScenario('device hijack (keepalive from another address)', { boundMs: BOUND_MS, timeoutMs: SCENARIO_TIMEOUT_MS }, async (run) => {
    const v = await victim(HIJACKED_ID);
    run.track([{ name: 'sig', pid: () => instance.proc.pid }]);
    const before = await rows(HIJACKED_ID);
    const answers = await attack(
      run,
      (i) => deviceMessage({ deviceId: HIJACKED_ID, serverId: SERVER_ID, sentBy: `127.0.0.1:${attacker.port}`, transport: 'UDP', cseq: 100 + i, body: keepaliveBody(HIJACKED_ID, 900 + i) }),
      (r) => (HIJACK_REFUSALS.includes(r.status) ? null : `spoofed keepalive answered ${r.status} (want ${HIJACK_REFUSALS.join(' or ')})`),
    );
    run.note(`spoofed keepalives: ${answers}`);
    await deviceStillInControl(run, v);
    const after = await rows(HIJACKED_ID);
    run.rowsLost = [...before].filter((id) => !after.has(id)).length;
    run.check(run.rowsLost === 0, `${run.rowsLost} rows lost`);
  });

  chaosScenario('digest replay (captured REGISTER from another port, Expires: 0)', { boundMs: BOUND_MS, timeoutMs: SCENARIO_TIMEOUT_MS }, async (run) => {
    const v = await victim(REPLAYED_ID);
    run.track([{ name: 'sig', pid: () => instance.proc.pid }]);
    const before = await rows(REPLAYED_ID);
    const captured = [...v.tap.fromDevice].reverse().find((d) => /^REGISTER /.test(d.toString('latin1')) && /^Authorization\s*:/im.test(d.toString('latin1')));
    run.check(captured !== undefined, 'no REGISTER with Authorization captured');
    if (captured === undefined) return;
    const staleRefusal = (r: SipResponse): string | null => {
      const www = r.headers.get('WWW-Authenticate') ?? '';
      return r.status === 401 && /stale\s*=\s*"?true/i.test(www) ? null : `replay answered ${r.status}${r.status === 401 ? ' without stale=true' : ''} (want 401 stale=true)`;
    };
    const sentBy = `127.0.0.1:${attacker.port}`;
    const same = await attack(run, () => replayedRegister(captured, { sentBy }), staleRefusal);
    const unregister = await attack(run, () => replayedRegister(captured, { sentBy, expires: 0 }), staleRefusal);
    run.note(`replays: ${same}; with Expires 0: ${unregister}`);
    await deviceStillInControl(run, v);
    const after = await rows(REPLAYED_ID);
    run.rowsLost = [...before].filter((id) => !after.has(id)).length;
    run.check(run.rowsLost === 0, `${run.rowsLost} rows lost`);
  });
});
