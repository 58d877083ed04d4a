// Child of transport-inherited.test.ts, started through scripts/socket-activate.py: binds a SipTransport on
// the sockets handed over in LISTEN_FDS (3 and 4) with the port given, and prints the outcome as one JSON line.
import { SipTransport } from '../../src/transport/transport.ts';

const port = Number(process.argv[2]);
try {
  const t = await SipTransport.listen({ host: '127.0.0.1', port, transports: ['udp', 'tcp'], portSharing: { kind: 'inherited', udpFd: 3, tcpFd: 4 } });
  process.stdout.write(`${JSON.stringify({ port: t.port })}\n`);
  await t.close();
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
}
