// Loaded into every test file's process (run-tests.mjs passes it with --import): once the file's tests and
// its root-level hooks have run, the process must end by itself. If something the file opened (a socket, a
// server, a timer, a child process) still keeps it alive VMS_TEST_FILE_EXIT_GRACE_MS later, the file fails,
// naming what is still open.
//
// This replaces node's --test-force-exit, which ends each file with process.exit() right after its last
// result is written and loses results the parent has not read yet (nodejs/node#64833: the suite's counts
// were lower bounds, a file's last suites silently missing with exit code 0). Here the exit comes seconds
// after the last result, and a file that leaves a handle open fails instead of being hidden.
import { createHook } from 'node:async_hooks';
import { after } from 'node:test';

const graceMs = Number(process.env.VMS_TEST_FILE_EXIT_GRACE_MS ?? 60_000);
// stdio pipes and this timer are the runner's, not the file's
const RUNNER_OWN = new Set(['PipeWrap', 'TTYWrap', 'Timeout']);

// Timers alive now, so that a file which does not exit can name the ref'd ones (their delay and callback):
// a type name ("Timeout") alone does not say whose. A Map set/delete per timer, no stack captured.
const liveTimers = new Map();
createHook({
  init(id, type, _trigger, resource) {
    if (type === 'Timeout') liveTimers.set(id, resource);
  },
  destroy(id) {
    liveTimers.delete(id);
  },
}).enable();
/** Timeouts still pending and ref'd (they keep the process alive), described by delay and callback. */
function refTimers() {
  const out = [];
  for (const t of liveTimers.values()) {
    if (t._destroyed || t._idleTimeout === -1) continue;
    if (typeof t.hasRef === 'function' && !t.hasRef()) continue;
    const fn = t._onTimeout;
    const src = typeof fn === 'function' ? String(fn).replace(/\s+/g, ' ').slice(0, 160) : String(fn);
    out.push(`Timeout(${t._idleTimeout} ms${t._repeat ? ', repeating' : ''}: ${src})`);
  }
  return out;
}

after(() => {
  const timer = setTimeout(() => {
    const open = process.getActiveResourcesInfo();
    const left = open.filter((r) => !RUNNER_OWN.has(r));
    process.stderr.write(
      `test-file-exit: ${process.argv[1] ?? 'this test file'} still running ${graceMs} ms after its tests ended; ` +
        `open: ${(left.length > 0 ? left : open).join(', ')}` +
        `${refTimers().map((t) => `\n  ${t}`).join('')}\n`,
    );
    process.exit(1);
  }, graceMs);
  timer.unref(); // only what the file left open keeps the process alive until then
});
