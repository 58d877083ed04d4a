// Loaded into every test file's process (run-tests.mjs passes it with --import): once the file's tests and
// its root-level hooks have run, the process must end by itself. If something the file opened (a socket, a
// server, a timer, a child process) still keeps it alive VMS_TEST_FILE_EXIT_GRACE_MS later, the file fails,
// naming what is still open.
//
// This replaces node's --test-force-exit, which ends each file with process.exit() right after its last
// result is written and loses results the parent has not read yet (nodejs/node#64833: the suite's counts
// were lower bounds, a file's last suites silently missing with exit code 0). Here the exit comes seconds
// after the last result, and a file that leaves a handle open fails instead of being hidden.
import { after } from 'node:test';

const graceMs = Number(process.env.VMS_TEST_FILE_EXIT_GRACE_MS ?? 60_000);
// stdio pipes and this timer are the runner's, not the file's
const RUNNER_OWN = new Set(['PipeWrap', 'TTYWrap', 'Timeout']);

after(() => {
  const timer = setTimeout(() => {
    const open = process.getActiveResourcesInfo();
    const left = open.filter((r) => !RUNNER_OWN.has(r));
    process.stderr.write(
      `test-file-exit: ${process.argv[1] ?? 'this test file'} still running ${graceMs} ms after its tests ended; ` +
        `open: ${(left.length > 0 ? left : open).join(', ')}\n`,
    );
    process.exit(1);
  }, graceMs);
  timer.unref(); // only what the file left open keeps the process alive until then
});
