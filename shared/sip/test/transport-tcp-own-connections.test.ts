// SipTransport.openTcp / send({ connectionOnly }): connections a caller pools itself (the SIP edge's links to
// shards) — each open is a new connection, never one reused from connect(); the caller hears when it closes;
// a send pinned to a gone connection fails instead of dialling one behind the pool's back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSipMessage } from '../src/message/parse.ts';
import type { SipRequest } from '../src/message/types.ts';
import type { Flow } from '../src/transport/flow.ts';
import { SipTransport } from '../src/transport/transport.ts';
import { rawRequest } from './support/stack-fixtures.ts';

const waitUntil = async (check: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
};

describe('TCP connections a caller pools itself', () => {
  it('two opens are two connections; messages on one arrive on it; its close is told once; a send to it afterwards does not dial', async () => {
    const server = await SipTransport.listen({ host: '127.0.0.1', port: 0, transports: ['tcp'], tcpIdleTimeoutMs: 400 });
    const edge = await SipTransport.listen({ host: '127.0.0.1', port: 0, transports: ['tcp'] });
    const arrived: Flow[] = [];
    server.onMessage = (_m, flow) => arrived.push(flow);
    try {
      const closed: string[] = [];
      const a = await edge.openTcp('127.0.0.1', server.port, (r) => closed.push(`a:${r}`));
      const b = await edge.openTcp('127.0.0.1', server.port, (r) => closed.push(`b:${r}`));
      assert.notEqual(a.connectionId, b.connectionId);
      assert.notEqual(a.localPort, b.localPort);
      await waitUntil(() => server.stats().tcpOpen === 2, 'two connections at the server');
      const req = parseSipMessage(Buffer.from(rawRequest({ port: server.port, transport: 'TCP', viaPort: edge.port }))) as SipRequest;
      await edge.send(req, b, undefined, { connectionOnly: true });
      await waitUntil(() => arrived.length === 1, 'the message arrived');
      assert.equal(arrived[0]?.remotePort, b.localPort, 'on the connection it was pinned to');
      // the server closes both idle connections: each watcher told once
      await waitUntil(() => closed.length === 2, 'both closes heard');
      assert.deepEqual(closed.sort(), ['a:closed', 'b:closed']);
      await assert.rejects(edge.send(req, b, undefined, { connectionOnly: true }), /TCP connection closed/);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(server.stats().tcpOpen, 0, 'nothing dialled');
    } finally {
      await edge.close();
      await server.close();
    }
  });
});
