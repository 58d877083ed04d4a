// Two instances on one SIP port (issue 11: a REGISTER storm past one event loop's ceiling needs the
// host's other cores). Each is started through scripts/socket-activate.py, as on Node 20, and gets a
// SO_REUSEPORT UDP and TCP socket on the same port: the kernel keeps each device's address:port on one
// of them, so a device's 401 and its answer, then its keepalives, all reach the instance that registered
// it. When that instance dies the kernel hands its devices to the survivor, which answers their next
// keepalive 404 (not registered here), and their REGISTER makes them its own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSipStack, type SipStack } from '@vms/sip';
import { freePort } from '@vms/harness';
import { PASSWORD, REALM, SERVER_ID, startInstance, type DeviceView, type Instance } from './signaling-fixture.ts';

const UDP_DEVICES = 24;
const TCP_DEVICES = 4;
const deviceId = (i: number): string => `3402000000132${String(7000 + i).padStart(7, '0')}`;
const keepaliveBody = (id: string, sn: number): string =>
  `<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>${sn}</SN>\r\n<DeviceID>${id}</DeviceID>\r\n<Status>OK</Status>\r\n</Notify>\r\n`;

interface Device {
  readonly id: string;
  readonly stack: SipStack;
  readonly transport: 'udp' | 'tcp';
}

describe('instances sharing one SIP port (SO_REUSEPORT, sockets handed over in LISTEN_FDS)', () => {
  let port: number;
  let a: Instance;
  let b: Instance;
  const devices: Device[] = [];

  const register = async (d: Device): Promise<number> =>
    (
      await d.stack.request(
        {
          method: 'REGISTER',
          uri: `sip:${SERVER_ID}@${REALM}`,
          headers: { From: `<sip:${d.id}@${REALM}>`, To: `<sip:${d.id}@${REALM}>`, Contact: `<sip:${d.id}@127.0.0.1:${d.stack.port}>`, Expires: '3600' },
          target: { host: '127.0.0.1', port, transport: d.transport },
        },
        { auth: { username: d.id, password: PASSWORD } },
      )
    ).status;
  const keepalive = async (d: Device, sn: number): Promise<number> =>
    (
      await d.stack.request({
        method: 'MESSAGE',
        uri: `sip:${SERVER_ID}@${REALM}`,
        headers: { From: `<sip:${d.id}@${REALM}>`, To: `<sip:${SERVER_ID}@${REALM}>` },
        body: keepaliveBody(d.id, sn),
        contentType: 'Application/MANSCDP+xml',
        target: { host: '127.0.0.1', port, transport: d.transport },
      })
    ).status;
  const onlineAt = async (instance: Instance, id: string): Promise<boolean> => {
    const r = await instance.api<DeviceView>('GET', `/vms/devices/${id}`);
    return r.success && r.data.online;
  };

  before(async () => {
    port = await freePort({ udp: true });
    a = await startInstance({ VMS_GB28181_SIP_INSTANCE_ID: 'shared-port-a' }, { sharedSipPort: port });
    b = await startInstance({ VMS_GB28181_SIP_INSTANCE_ID: 'shared-port-b' }, { sharedSipPort: port });
    for (let i = 0; i < UDP_DEVICES + TCP_DEVICES; i++) {
      const transport = i < UDP_DEVICES ? 'udp' : 'tcp';
      const stack = await createSipStack({ host: '127.0.0.1', port: 0, transports: [transport], userAgent: 'shared-port-device' });
      devices.push({ id: deviceId(i), stack, transport });
    }
  });
  after(async () => {
    await Promise.all(devices.map((d) => d.stack.close()));
    await a?.stop();
    await b?.stop();
  });

  it('both instances hold the port, each with the sockets it was handed', () => {
    assert.equal(a.sipPort, port);
    assert.equal(b.sipPort, port);
    for (const instance of [a, b]) assert.match(instance.proc.output(), /"sipPortShared":"inherited"/);
  });

  it('every device registers through its digest challenge and keeps alive on one instance; the devices are spread over both', async () => {
    const statuses = await Promise.all(devices.map((d) => register(d)));
    assert.deepEqual(statuses, devices.map(() => 200), 'the 401 and the answer to it reached the same instance');
    assert.deepEqual(await Promise.all(devices.map((d) => keepalive(d, 1))), devices.map(() => 200), 'keepalives reach the instance that registered the device');
    const owners: string[] = [];
    for (const d of devices) {
      const [onA, onB] = await Promise.all([onlineAt(a, d.id), onlineAt(b, d.id)]);
      assert.notEqual(onA, onB, `${d.id} (${d.transport}) is online on exactly one instance`);
      owners.push(onA ? 'a' : 'b');
    }
    const onA = owners.filter((o) => o === 'a').length;
    // 28 flows hashed over two sockets: all on one would be 2 in 2^28
    assert.ok(onA > 0 && onA < devices.length, `devices on a: ${onA} of ${devices.length}`);
  });

  it('when one instance dies its devices reach the other: a keepalive there is answered 404, and their REGISTER makes them its own', async () => {
    const onA: Device[] = [];
    for (const d of devices) if (await onlineAt(a, d.id)) onA.push(d);
    assert.ok(onA.length > 0);
    await a.proc.kill(); // SIGKILL: no goodbye
    // UDP: the kernel now hashes a's flows to b's socket. TCP: a's connections died with it and are dialled anew to b.
    for (const d of onA) {
      assert.equal(await keepalive(d, 2), 404, `${d.id} (${d.transport}): not registered on the survivor`);
      assert.equal(await register(d), 200);
      assert.equal(await keepalive(d, 3), 200);
      assert.equal(await onlineAt(b, d.id), true);
    }
  });
});
