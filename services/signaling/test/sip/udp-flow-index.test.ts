import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Flow } from '@vms/sip';
import { UdpFlowIndex, type FlowBound } from '../../src/sip/udp-flow-index.ts';

const udp = (remoteAddress: string, remotePort: number): Flow => ({ transport: 'udp', remoteAddress, remotePort, localAddress: '10.0.0.5', localPort: 5060 });
const session = (deviceId: string, flow: Flow): FlowBound => ({ deviceId, flow });

describe('UdpFlowIndex', () => {
  it('finds the one session of a flow, by address then port (a fresh Flow object of the same flow)', () => {
    const index = new UdpFlowIndex<FlowBound>();
    const a = session('A', udp('192.168.1.10', 5060));
    const b = session('B', udp('192.168.1.11', 5060));
    index.add(a);
    index.add(b);
    assert.equal(index.sole(udp('192.168.1.10', 5060)), a);
    assert.equal(index.sole(udp('192.168.1.11', 5060)), b);
    assert.equal(index.sole(udp('192.168.1.10', 5061)), undefined, 'another port of the address');
    assert.equal(index.sole(udp('192.168.1.12', 5060)), undefined, 'another address');
  });

  it('devices behind one NAT: several ports of one address, each its own', () => {
    const index = new UdpFlowIndex<FlowBound>();
    const sessions = [5060, 5062, 40000].map((port, i) => session(`D${i}`, udp('203.0.113.7', port)));
    for (const s of sessions) index.add(s);
    for (const s of sessions) assert.equal(index.sole({ ...s.flow }), s);
    assert.equal(index.sole(udp('203.0.113.7', 5064)), undefined);
    index.remove(sessions[1] as FlowBound);
    assert.equal(index.sole(udp('203.0.113.7', 5062)), undefined);
    assert.equal(index.sole(udp('203.0.113.7', 40000)), sessions[2]);
    index.remove(sessions[0] as FlowBound);
    index.remove(sessions[2] as FlowBound);
    assert.equal(index.addresses, 0, 'nothing left behind');
  });

  it('several sessions on one flow (an edge, a rig): none is the sole one until one is left', () => {
    const index = new UdpFlowIndex<FlowBound>();
    const f = udp('10.9.9.8', 5070);
    const [x, y, z] = ['X', 'Y', 'Z'].map((id) => session(id, f)) as [FlowBound, FlowBound, FlowBound];
    index.add(x);
    assert.equal(index.sole(f), x);
    index.add(y);
    index.add(z);
    assert.equal(index.sole(f), undefined);
    index.remove(y);
    assert.equal(index.sole(f), undefined);
    index.remove(x);
    assert.equal(index.sole(f), z);
    index.remove(z);
    assert.equal(index.sole(f), undefined);
    assert.equal(index.addresses, 0);
  });

  it('removing a session that is not there changes nothing; TCP flows are not indexed', () => {
    const index = new UdpFlowIndex<FlowBound>();
    const a = session('A', udp('192.168.1.10', 5060));
    index.add(a);
    index.remove(session('A', udp('192.168.1.10', 5060))); // another object of the same flow
    assert.equal(index.sole(a.flow), a);
    const tcp = session('T', { ...udp('192.168.1.20', 5060), transport: 'tcp', connectionId: 4 });
    index.add(tcp);
    assert.equal(index.sole(udp('192.168.1.20', 5060)), undefined);
    assert.equal(index.addresses, 1);
  });
});
