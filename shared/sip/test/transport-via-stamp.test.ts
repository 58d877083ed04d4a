// RFC 3261 §18.2.1 / §18.2.2 and RFC 3581 §4, hand-checked against the RFC examples.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatVia, parseViaHop } from '../src/message/via.ts';
import { canonicalParams, paramBounds, walkCanonicalParams } from '../src/transport/canonical-via.ts';
import { responseDestination, stampReceived } from '../src/transport/via-stamp.ts';

describe('Via received/rport stamping', () => {
  it('RFC 3581 §4 example: rport requested → rport=<src port> and received even when the host matches', () => {
    const hop = parseViaHop('SIP/2.0/UDP 192.0.2.1:5060;rport;branch=z9hG4bKc8ac');
    assert.equal(stampReceived(hop, '192.0.2.1', 9988), true);
    assert.equal(formatVia(hop), 'SIP/2.0/UDP 192.0.2.1:5060;rport=9988;branch=z9hG4bKc8ac;received=192.0.2.1');
  });

  it('§18.2.1: no rport, sent-by differs from the source → received only', () => {
    const hop = parseViaHop('SIP/2.0/UDP 10.0.0.7:5061;branch=z9hG4bKx');
    stampReceived(hop, '203.0.113.9', 40000);
    assert.equal(hop.params.get('received'), '203.0.113.9');
    assert.equal(hop.params.has('rport'), false);
  });

  it('§18.2.1: no rport, sent-by equals the source → untouched', () => {
    const hop = parseViaHop('SIP/2.0/TCP 127.0.0.1:5061;branch=z9hG4bKx');
    assert.equal(stampReceived(hop, '127.0.0.1', 5061), false);
    assert.equal(hop.params.size, 1);
  });

  it('forceRport fills rport for devices that forget to ask', () => {
    const hop = parseViaHop('SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bKx');
    stampReceived(hop, '198.51.100.4', 17000, true);
    assert.deepEqual(responseDestination(hop), { host: '198.51.100.4', port: 17000 });
  });

  it('§18.2.2 destination: received+rport, received+sent-by port, sent-by with default 5060', () => {
    assert.deepEqual(responseDestination(parseViaHop('SIP/2.0/UDP a.example:5070;received=1.2.3.4;rport=6000')), { host: '1.2.3.4', port: 6000 });
    assert.deepEqual(responseDestination(parseViaHop('SIP/2.0/UDP a.example:5070;received=1.2.3.4')), { host: '1.2.3.4', port: 5070 });
    assert.deepEqual(responseDestination(parseViaHop('SIP/2.0/UDP 5.6.7.8;rport')), { host: '5.6.7.8', port: 5060 });
  });

  it('IPv6 sent-by and source are compared without brackets', () => {
    const hop = parseViaHop('SIP/2.0/UDP [2001:db8::1]:5060;branch=z9hG4bKx');
    assert.equal(stampReceived(hop, '2001:db8::1', 5060), false);
    assert.deepEqual(responseDestination(hop), { host: '2001:db8::1', port: 5060 });
  });
});

// rewriteTopVia keeps the stamped hop as the parse of the line it writes (issue 11: the stamped Via was
// parsed again for the transaction key and the response route): that holds only if parsing the written
// hop gives the hop back, for whatever top Via a request may carry and whatever the stamp adds.
describe('parseViaHop(formatVia(stamped hop)) is the stamped hop', () => {
  const VIAS = [
    'SIP/2.0/UDP 192.0.2.1:5060;rport;branch=z9hG4bKc8ac',
    'SIP/2.0/UDP 10.0.0.7:5061;branch=z9hG4bKx',
    'sip / 2.0 / udp 10.0.0.7 : 5061 ; Branch = z9hG4bKx ; RPORT',
    'SIP/2.0/UDP 10.0.0.7:05061;branch=z9hG4bKx',
    'SIP/2.0/TCP host.example.com;branch=z9hG4bK-a.b_c;ttl=1;maddr=239.255.255.1',
    'SIP/2.0/UDP [2001:db8::1]:5060;branch=z9hG4bKx;rport',
    'SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK1;received=10.0.0.1;rport=5061',
    'SIP/2.0/UDP 192.168.1.64;branch="z9hG4bK;quoted,x";x-vendor',
    'SIP/2.0/UDP 192.168.1.64:5060;branch=z9hG4bK1;branch=second;rport',
    'SIP/2.0/UDP 192.168.1.64:5060;received=[2001:db8::9];branch=z9hG4bK1',
    'SIP/2.0/UDP 192.168.1.64:5060\t;\tbranch=z9hG4bK1\t',
  ];
  const SOURCES: ReadonlyArray<readonly [string, number]> = [['192.0.2.1', 9988], ['203.0.113.9', 40000], ['2001:db8::1', 5060], ['[2001:db8::2]', 1]];
  for (const via of VIAS) {
    it(via, () => {
      for (const [address, port] of SOURCES) {
        for (const force of [false, true]) {
          const hop = parseViaHop(via);
          stampReceived(hop, address, port, force);
          assert.deepEqual(parseViaHop(formatVia(hop)), hop, `${address}:${port} force=${force}`);
        }
      }
    });
  }
});

describe('canonical Via parameters: the `;rport;branch=<value>` shortcut = the walk', () => {
  it('gives the walk’s verdict and bounds, in place in a longer text', () => {
    const distinct = (n: number, from: number): string => Array.from({ length: n }, (_, i) => `;p${from + i}`).join('');
    const params = [
      ';rport;branch=z9hG4bK-1-2-0',
      ';rport;branch=z9hG4bK1;rport',
      ';rport;branch=z9hG4bK1;received=1.2.3.4',
      ';rport;branch=z9hG4bK1;branch=x',
      ';rport;branch=z9hG4bK1;x=1',
      ';rport;branch=z9hG4bK1' + distinct(14, 0), // 16 parameters: canonical
      ';rport;branch=z9hG4bK1' + distinct(15, 0), // 17: not
      ';rport;branchx=1',
      ';rport;branch',
      ';rport=5;branch=z9hG4bK1',
      ';branch=z9hG4bK1;rport',
      ';rport;branch=a',
      '',
    ];
    const prefix = 'Via: SIP/2.0/UDP h:1';
    for (const p of params) {
      for (const after of ['', '\r\nFrom: <sip:a@b>;tag=1', ';']) {
        const text = prefix + p + after;
        const [a, b] = [prefix.length, prefix.length + p.length];
        const fast = [canonicalParams(text, a, b), ...paramBounds];
        const walked = [walkCanonicalParams(text, a, b), ...paramBounds];
        assert.deepEqual(fast, walked, JSON.stringify([p, after]));
      }
    }
  });
});
