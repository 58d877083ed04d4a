// A version source module whose import ends the thread importing it (exit code 4): a kept-warm build
// thread's warm-up imports the source's module, so every thread started with it dies during its warm-up
// (a thread that cannot start), for the replacement backoff test (table-worker.ts). Loaded only by build
// threads from a VersionSourceSpec: never import it from a test (it would end the test's process).
process.exit(4);
