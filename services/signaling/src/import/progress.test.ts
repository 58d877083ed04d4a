import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createProgress, formatProgress } from './progress.ts';

describe('progress line', () => {
  it('shows done of total, percent, failures, rate and time left', () => {
    assert.equal(formatProgress('importing devices', 250, 1000, 0, 5000), 'importing devices 250/1000 (25%) · 50/s · eta 15s');
    assert.equal(formatProgress('x', 3, 10, 2, 2000), 'x 3/10 (30%) · 2 failed · 1.5/s · eta 5s');
    assert.equal(formatProgress('x', 100, 7100, 0, 1000), 'x 100/7100 (1%) · 100/s · eta 1m10s');
    assert.equal(formatProgress('x', 0, 0, 0, 0), 'x 0/0 (100%) · 0.0/s');
  });

  it('rewrites one terminal line at most every 100 ms; a log gets a full line at most every 2 s', () => {
    const tty = createProgress({ label: 'p', total: 10, startedAt: 0, tty: true });
    assert.match(tty.tick(1, 0, 1000) ?? '', /^\r\x1b\[Kp 1\/10/);
    assert.equal(tty.tick(2, 0, 1050), null);
    assert.notEqual(tty.tick(3, 0, 1100), null);
    assert.match(tty.finish(10, 0, 2000), /^\r\x1b\[Kp 10\/10 \(100%\).*\n$/);
    const log = createProgress({ label: 'p', total: 10, startedAt: 0, tty: false });
    assert.match(log.tick(1, 0, 1000) ?? '', /^p 1\/10 .*\n$/);
    assert.equal(log.tick(5, 0, 2999), null);
    assert.match(log.tick(6, 0, 3000) ?? '', /^p 6\/10/);
  });
});
