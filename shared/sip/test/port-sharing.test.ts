// Several instances behind one SIP port (transport/port-sharing.ts, issue 11): which Node sets
// SO_REUSEPORT itself, the sockets a launcher hands over (systemd's LISTEN_FDS protocol), and the shedder
// reading its own socket's receive queue where every instance has one on the port.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listenFdsFromEnv, nodeSetsReusePort } from '../src/transport/port-sharing.ts';
import { udpReceiveQueueBytes } from '../src/overload/register-shedding.ts';
import { ownUdpSocketInode } from '../src/overload/receive-queue.ts';

const PID = 4242;

describe('port sharing', () => {
  it('nodeSetsReusePort: 22.12+ on the 22 line and 23.1+, not Node 20 (whose dgram ignores the option silently)', () => {
    for (const v of ['22.12.0', '22.20.1', '23.1.0', '24.0.0', '26.3.1']) assert.equal(nodeSetsReusePort(v), true, v);
    for (const v of ['20.20.2', '21.7.3', '22.11.0', '23.0.0']) assert.equal(nodeSetsReusePort(v), false, v);
  });

  it('listenFdsFromEnv: the descriptors by name from 3, in LISTEN_FDNAMES order', () => {
    assert.deepEqual(listenFdsFromEnv({ LISTEN_FDS: '2', LISTEN_PID: String(PID), LISTEN_FDNAMES: 'sip-udp:sip-tcp' }, PID), { udpFd: 3, tcpFd: 4 });
    assert.deepEqual(listenFdsFromEnv({ LISTEN_FDS: '3', LISTEN_PID: String(PID), LISTEN_FDNAMES: 'metrics:sip-tcp:sip-udp' }, PID), { udpFd: 5, tcpFd: 4 });
  });

  it('listenFdsFromEnv: nothing handed over, or handed to another process (a parent that did not clear them): null', () => {
    assert.equal(listenFdsFromEnv({}, PID), null);
    assert.equal(listenFdsFromEnv({ LISTEN_FDS: '', LISTEN_PID: String(PID) }, PID), null);
    assert.equal(listenFdsFromEnv({ LISTEN_FDS: '2', LISTEN_PID: '1', LISTEN_FDNAMES: 'sip-udp:sip-tcp' }, PID), null);
  });

  it('listenFdsFromEnv: a bad count or names missing is a problem naming what to set', () => {
    const problem = (env: Record<string, string>): string => {
      const r = listenFdsFromEnv({ LISTEN_PID: String(PID), ...env }, PID);
      assert.ok(r !== null && 'problem' in r, JSON.stringify(r));
      return r.problem;
    };
    assert.match(problem({ LISTEN_FDS: 'two', LISTEN_FDNAMES: 'sip-udp:sip-tcp' }), /LISTEN_FDS must be a count/);
    assert.match(problem({ LISTEN_FDS: '2' }), /LISTEN_FDNAMES must name each of the 2/);
    assert.match(problem({ LISTEN_FDS: '1', LISTEN_FDNAMES: 'sip-udp' }), /must name each of the 1 descriptors.*sip-tcp|must name a sip-udp and a sip-tcp/);
    assert.match(problem({ LISTEN_FDS: '2', LISTEN_FDNAMES: 'sip-udp:http' }), /must name a sip-udp and a sip-tcp descriptor/);
  });
});

// /proc/net/udp of a host where two instances share port 5060 (0x13C4) and a third socket is elsewhere
const PROC_NET_UDP = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops',
  ' 1: 0100007F:13C4 00000000:0000 07 00000000:00100000 00:00000000 00000000     0        0 111 2 0000000000000000 0',
  ' 2: 0100007F:13C4 00000000:0000 07 00000000:00000400 00:00000000 00000000     0        0 222 2 0000000000000000 0',
  ' 3: 0100007F:2710 0100007F:13C4 01 00000000:00009000 00:00000000 00000000     0        0 333 2 0000000000000000 0',
].join('\n');

describe('the receive queue of one instance on a shared port', () => {
  it('udpReceiveQueueBytes: summed over the port without an inode, that socket only with one', () => {
    assert.equal(udpReceiveQueueBytes(PROC_NET_UDP, 5060), 0x100000 + 0x400);
    assert.equal(udpReceiveQueueBytes(PROC_NET_UDP, 5060, '222'), 0x400, 'the other instance is behind, this one is not');
    assert.equal(udpReceiveQueueBytes(PROC_NET_UDP, 5060, '333'), null, 'a socket whose remote port is 5060 is not on the port');
  });

  it('ownUdpSocketInode: the socket on the port among this process\'s descriptors; null when none is', () => {
    const read = (file: string): string => (file === '/proc/net/udp' ? PROC_NET_UDP : '');
    assert.equal(ownUdpSocketInode(5060, read, () => new Set(['9', '222'])), '222');
    assert.equal(ownUdpSocketInode(5060, read, () => new Set(['333'])), null);
    assert.equal(ownUdpSocketInode(5060, () => { throw new Error('ENOENT'); }, () => new Set(['222'])), null, 'off Linux');
  });
});

describe('ownUdpSocketInode on this machine', () => {
  it('finds the socket this process bound (/proc: Linux, where the platform runs)', async () => {
    const { createSocket } = await import('node:dgram');
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    try {
      assert.match(ownUdpSocketInode(socket.address().port) ?? '', /^\d+$/);
    } finally {
      socket.close();
    }
  });
});
