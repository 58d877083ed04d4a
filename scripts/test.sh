#!/usr/bin/env bash
# The whole test suite: set-up if needed, then every package's tests through turbo.
# The last line is the total over all packages: "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Each package's tests have their own time limits (scripts/run-tests.mjs); this one bounds the whole run.
timeout --kill-after=30s "${VMS_TEST_TOTAL_TIMEOUT:-75m}" \
  npx turbo run typecheck lint test --continue --concurrency=2 --output-logs=full "$@" 2>&1 < /dev/null | tee "$log"
turbo_rc=${PIPESTATUS[0]}

# node:test's spec reporter ends each package's run with "ℹ pass N" / "ℹ fail N" (turbo prefixes the line).
passed=$(grep -aoE 'ℹ pass [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')
# a cancelled test (a file over its time limit) is a failure too
failed=$(grep -aoE 'ℹ (fail|cancelled) [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')
# skipped and todo tests are neither passed nor failed, but never hidden. Node 20 does not count the tests
# of a skipped describe at all, so no test may skip itself: a missing redis-server, mariadbd or SIPp is a
# failure (test/harness/binaries.ts), and test/fixtures/self-contained.test.ts fails on any skip.
skipped=$(grep -aoE 'ℹ (skipped|todo) [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')
if [ "$turbo_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # a package failed outside node:test (type errors, a crash before tests ran): count it as a failure
  failed=1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$turbo_rc" -eq 0 ] && [ "$failed" -eq 0 ]
