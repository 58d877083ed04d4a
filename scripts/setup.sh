#!/usr/bin/env bash
# Brings a fresh machine (only Node and npm) to the point where the platform and its tests run:
# npm dependencies, and the Debian packages the integration tests and the local cluster use.
# Idempotent and quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# --npm-only: only the npm dependencies (npm start); --bench: also valgrind and kamailio, for npm run bench
npm_only=0
bench=0
[ "${1:-}" = "--npm-only" ] && npm_only=1
[ "${1:-}" = "--bench" ] && bench=1

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
{ command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; } || need_apt+=(mariadb-server)
command -v sipp >/dev/null 2>&1 || need_apt+=(sip-tester)
# the web console's browser test (test/integration/console-browser.test.ts) drives Debian's chromium
{ command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; } || need_apt+=(chromium)
[ "$bench" -eq 0 ] || command -v valgrind >/dev/null 2>&1 || need_apt+=(valgrind)
# the anchor of test/bench/fleet.ts (Kamailio 5.6 beside the platform)
[ "$bench" -eq 0 ] || [ -x /usr/sbin/kamailio ] || need_apt+=(kamailio)
# python3 also runs scripts/socket-activate.py (instances sharing one SIP port on Node 20).
# better-sqlite3 (the embedded store of `npm start`) compiles its native module when no prebuilt binary
# can be downloaded: node-gyp needs python3, make and a C++ compiler.
need_build=()
command -v python3 >/dev/null 2>&1 || need_build+=(python3)
command -v make >/dev/null 2>&1 || need_build+=(make)
command -v g++ >/dev/null 2>&1 || need_build+=(g++)
need_apt+=("${need_build[@]}")
if [ "$npm_only" -eq 1 ] && [ "${#need_build[@]}" -gt 0 ]; then
  echo "setup: ${need_build[*]} missing: better-sqlite3 can only use a downloaded prebuilt binary (npm run setup installs them)" >&2
fi

if [ "$npm_only" -eq 0 ] && [ "${#need_apt[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  # policy-rc.d keeps the packages' own services from starting: tests start their own throwaway servers.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

stamp=node_modules/.setup-stamp
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  echo "setup: installing npm dependencies"
  if [ -f package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
  else
    npm install --no-audit --no-fund --loglevel=error
  fi
  touch "$stamp"
fi
