import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlowCodec } from '../src/flow-token.ts';

const codec = new FlowCodec(Buffer.alloc(32, 7));

describe('flow token', () => {
  for (const ref of [
    { transport: 'udp', address: '192.0.2.10', port: 5060 },
    { transport: 'udp', address: '2001:db8::1', port: 40000 },
    { transport: 'tcp', address: '192.0.2.10', port: 51234, connectionId: 17, edge: 'edge-1' },
  ] as const) {
    it(`round-trips ${ref.transport} ${ref.address}`, () => {
      const token = codec.encode(ref);
      assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}$/, 'a valid URI and Via parameter value');
      assert.deepEqual(codec.decode(token), ref);
    });
  }

  it('another edge with the same secret decodes it (several edges behind one address)', () => {
    const token = codec.encode({ transport: 'udp', address: '192.0.2.10', port: 5060 });
    assert.deepEqual(new FlowCodec(Buffer.alloc(32, 7)).decode(token), { transport: 'udp', address: '192.0.2.10', port: 5060 });
  });

  it('answers again from its bounded cache, and a forged token is never cached', () => {
    const c = new FlowCodec(Buffer.alloc(32, 7));
    const ref = { transport: 'udp', address: '192.0.2.10', port: 5060 } as const;
    const token = c.encode(ref);
    assert.equal(c.encode(ref), token);
    assert.deepEqual(c.decode(token), ref);
    assert.deepEqual(c.decode(token), ref);
    const forged = `${token.slice(0, -2)}AA`;
    assert.equal(c.decode(forged), null);
    assert.equal(c.decode(forged), null);
  });

  it('refuses forged, altered, foreign and oversized tokens', () => {
    const token = codec.encode({ transport: 'udp', address: '192.0.2.10', port: 5060 });
    const [payload, mac] = token.split('.') as [string, string];
    const forged = Buffer.from('u|198.51.100.1|53|', 'latin1').toString('base64url');
    assert.equal(codec.decode(`${forged}.${mac}`), null, 'another payload under a captured MAC');
    assert.equal(codec.decode(`${payload}.${mac.slice(0, -1)}A`), null);
    assert.equal(codec.decode(payload), null);
    assert.equal(new FlowCodec(Buffer.alloc(32, 8)).decode(token), null, 'another secret');
    assert.equal(codec.decode(`${'A'.repeat(300)}.${mac}`), null);
    assert.equal(codec.decode(''), null);
  });
});
