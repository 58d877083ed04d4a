// The SIP sockets a launcher opened and handed over (port sharing, issue 11): the transport listens on
// them as they are, and refuses sockets bound elsewhere than the configured port, which Via and Contact
// name and devices are configured with.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const HERE = dirname(fileURLToPath(import.meta.url));
const LAUNCHER = join(HERE, '..', '..', '..', 'scripts', 'socket-activate.py');
const CHILD = join(HERE, 'support', 'listen-inherited.ts');

async function freeTcpPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function listenOnHandedOver(sharedPort: number, configuredPort: number): { port?: number; error?: string } {
  const out = execFileSync('python3', [LAUNCHER, '127.0.0.1', String(sharedPort), '--', process.execPath, '--import', 'tsx', CHILD, String(configuredPort)], { encoding: 'utf8', timeout: 20_000 });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { port?: number; error?: string };
}

describe('a SipTransport on sockets handed over (LISTEN_FDS)', () => {
  it('listens on them, on the port they are bound to', async () => {
    const port = await freeTcpPort();
    assert.deepEqual(listenOnHandedOver(port, port), { port });
  });

  it('refuses them when they are bound to another port than the configured one', async () => {
    const port = await freeTcpPort();
    const r = listenOnHandedOver(port, port === 65535 ? port - 1 : port + 1);
    assert.match(r.error ?? '', new RegExp(`bound to port ${port}, not the configured`));
  });
});
