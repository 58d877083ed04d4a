// The UDP socket's destination lookup: IP literals are sent without a DNS round (synchronously),
// host names still resolve through dns.lookup.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { UdpSocket } from '../src/transport/udp.ts';

describe('udp socket lookup', () => {
  it('sends to an IP literal and to a host name', async () => {
    const peer = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', () => resolve()));
    const port = peer.address().port;
    const udp = await UdpSocket.bind('127.0.0.1', 0, () => {}, (err) => assert.fail(err));
    try {
      const first = once(peer, 'message');
      assert.equal(udp.sendNoWait(Buffer.from('literal'), port, '127.0.0.1'), true);
      assert.equal(String((await first)[0]), 'literal');
      const second = once(peer, 'message');
      await udp.send(Buffer.from('name'), port, 'localhost');
      assert.equal(String((await second)[0]), 'name');
    } finally {
      peer.close();
      await udp.close();
    }
  });
});
