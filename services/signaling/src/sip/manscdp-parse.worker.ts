// The worker side of manscdp-parse-pool.ts: decodes one MANSCDP body per message it is sent and answers
// with the decoded command or the parser's refusal. Nothing else runs here, so a pathological body can cost
// this thread's time but never the event loop that answers keepalives.
import { parentPort } from 'node:worker_threads';
import { decodeManscdpCommand, isGbError, parseManscdp } from '@vms/gb28181';
import type { ParseReply, ParseRequest } from './manscdp-parse-pool.ts';

if (parentPort === null) throw new Error('manscdp-parse.worker.ts runs only as a worker thread');
const port = parentPort;

port.on('message', (req: ParseRequest) => {
  let reply: ParseReply;
  try {
    const msg = parseManscdp(new Uint8Array(req.body));
    reply = { id: req.id, ok: true, msg, cmd: decodeManscdpCommand(msg) };
  } catch (err) {
    // the parser's refusals travel as their message; anything else is a defect, reported as such
    reply = { id: req.id, ok: false, refused: isGbError(err), message: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
});
port.postMessage('ready');
