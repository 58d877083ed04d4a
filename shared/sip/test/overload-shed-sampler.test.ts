// The sampling loop of the REGISTER shedder (overload/shed-sampler.ts) with its signals injected: it
// sheds only in windows with REGISTERs and a queue over the mark, shrinks the receive buffer at the cap
// and restores it once shedding stops, and logs entering and leaving shedding once each, not per window.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createShedSampler } from '../src/overload/shed-sampler.ts';
import { DEFAULT_SHED_POLICY, FAR_BEHIND } from '../src/overload/register-shedding.ts';
import type { SipLogger } from '../src/transport/logger.ts';

function recordingLogger(lines: string[]): SipLogger {
  const log: SipLogger = {
    debug: () => {},
    info: (_o, msg) => lines.push(`info ${msg}`),
    warn: (_o, msg) => lines.push(`warn ${msg}`),
    error: (_o, msg) => lines.push(`error ${msg}`),
    child: () => log,
  };
  return log;
}

async function until(what: string, ok: () => boolean, ms = 3000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('shed sampler', () => {
  it('sheds while REGISTERs arrive over a full queue, shrinks the buffer at the cap, logs each transition once', async () => {
    const lines: string[] = [];
    const buffers: number[] = [];
    let queue = FAR_BEHIND * DEFAULT_SHED_POLICY.highQueueBytes + 1;
    const sampler = createShedSampler({
      log: recordingLogger(lines),
      sipPort: 5060,
      readReceiveQueue: () => queue,
      utilization: () => 1,
      setReceiveBuffer: (bytes) => buffers.push(bytes),
      receiveBufferBytes: 4 * 1024 * 1024,
    });
    try {
      await new Promise((r) => setTimeout(r, 250));
      assert.equal(sampler.shedder.fraction, 0, 'a full queue without REGISTERs is not a registration storm');
      assert.deepEqual(lines, []);
      sampler.arrived();
      await until('shedding', () => sampler.shedder.fraction > 0);
      assert.equal(sampler.shedder.fraction, DEFAULT_SHED_POLICY.maxFraction);
      assert.deepEqual(buffers, [DEFAULT_SHED_POLICY.sheddingReceiveBufferBytes]);
      // no more REGISTERs: the share falls 10 points a window, shedding for ~9 more windows, logged once
      queue = 0;
      await until('admitting again', () => sampler.shedder.fraction === 0, 5000);
      assert.deepEqual(buffers, [DEFAULT_SHED_POLICY.sheddingReceiveBufferBytes, 4 * 1024 * 1024]);
      assert.deepEqual(lines, ['warn overloaded: shedding new registrations with 503', 'info load back under the mark: registrations admitted again']);
      assert.ok(sampler.queueReads > 0);
    } finally {
      sampler.close();
    }
  });
});
