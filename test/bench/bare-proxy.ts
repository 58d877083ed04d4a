// Baseline for the forward bench: the least a Node.js forwarder can do per request. A bare node:http
// server that passes each request to one origin through an undici Pool's dispatcher (no framework, no
// routing decision, no auth), adding the same forward headers the signaling instances add, and writes
// back status, Content-Type and body. The forward bench runs it as a child process beside node-b and
// compares their CPU per forwarded request in the same run: what node-b costs above this floor is the
// platform's own routing work.
// Child process: `node --import tsx test/bench/bare-proxy.ts <listen-port> <origin-url> <secret>`;
// sends 'listening' over IPC once bound.
import { FORWARD_HEADERS } from '@vms/cluster';
import { createServer } from 'node:http';
import { Pool } from 'undici';

const [port, origin, secret] = process.argv.slice(2);
if (port === undefined || origin === undefined || secret === undefined) throw new Error('usage: bare-proxy.ts <port> <origin-url> <secret>');
const pool = new Pool(origin, { connections: 64, pipelining: 1 });
let seq = 0;

const server = createServer((req, res) => {
  let status = 502;
  let contentType: string | null = null;
  const chunks: Buffer[] = [];
  const auth = req.headers['blade-auth'];
  pool.dispatch(
    {
      method: req.method as 'GET',
      path: req.url ?? '/',
      headers: ['blade-auth', typeof auth === 'string' ? auth : '', FORWARD_HEADERS.marker, 'bare-proxy', FORWARD_HEADERS.secret, secret, FORWARD_HEADERS.forwardId, `bare-${++seq}`],
    },
    {
      onRequestStart() {},
      onResponseStart(_c, statusCode, headers) {
        status = statusCode;
        const ct = headers['content-type'];
        contentType = typeof ct === 'string' ? ct : null;
      },
      onResponseData(_c, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        res.writeHead(status, { 'content-type': contentType ?? 'application/octet-stream', 'content-length': body.length });
        res.end(body);
      },
      onResponseError() {
        res.writeHead(502);
        res.end();
      },
    },
  );
});
server.listen(Number(port), '127.0.0.1', () => process.send?.('listening'));
process.on('disconnect', () => process.exit(0));
