#!/usr/bin/env bash
# Starts the platform. No arguments: one signaling instance, zero configuration, embedded stores.
#   npm start               single instance (SIP 5060 UDP+TCP, HTTP 18080 unless configured)
#   npm start -- cluster    local cluster demo: Redis, MariaDB and three instances on 127.0.0.1
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "cluster" ]; then
  shift
  bash scripts/setup.sh
  exec npx tsx scripts/cluster-demo.ts "$@"
fi
bash scripts/setup.sh --npm-only
exec npx tsx services/signaling/src/main.ts "$@"
