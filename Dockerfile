# syntax=docker/dockerfile:1
# The signaling service image. Build: docker build -t gb28181-cluster:0.1.0 .
# Two stages: `build` installs every dependency and type-checks what ships; `runtime` holds the
# sources of the shipped packages and their production dependencies only (npm ci --omit=dev). The
# service runs its TypeScript through tsx, which is a production dependency of @vms/signaling for
# that reason (no compile step: the same files run in tests, in `npm start` and here).
# Checked without a Docker engine by helm/test/dockerfile.test.ts.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund --loglevel=error \
 && for p in shared/* services/signaling services/sip-edge; do npx tsc -p "$p/tsconfig.json" || exit 1; done \
 && find shared services -name node_modules -prune -exec rm -rf {} +

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# npm ci checks the lockfile against every workspace's manifest: the workspaces that do not ship
# (tests, device simulator, chart) are present as manifests only.
COPY --from=build /src/package.json /src/package-lock.json ./
COPY --from=build /src/services/device-sim/package.json services/device-sim/
COPY --from=build /src/test/package.json test/
COPY --from=build /src/test/harness/package.json test/harness/
COPY --from=build /src/test/fixtures/package.json test/fixtures/
COPY --from=build /src/helm/package.json helm/
COPY --from=build /src/shared shared
COPY --from=build /src/services/signaling services/signaling
# The SIP edge (issue 14) ships in the same image: `npx tsx services/sip-edge/src/main.ts`.
COPY --from=build /src/services/sip-edge services/sip-edge
COPY --from=build /src/deploy/sql deploy/sql
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error && npm cache clean --force
# Without MYSQL_URL the instance keeps its state in the embedded SQLite store in VMS_DATA_DIR: a
# directory the unprivileged user owns (it cannot write /app), a volume so the state outlives the container.
ENV VMS_DATA_DIR=/data
RUN mkdir -p /data && chown node:node /data
VOLUME /data
# The node image's unprivileged user (uid 1000, as the chart's securityContext expects).
USER node
# SIP (UDP and TCP) and the HTTP control API.
EXPOSE 5060/udp 5060/tcp 18080/tcp
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.SERVER_PORT || 18080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 and handles SIGTERM itself (src/main.ts): it leaves the node table, drains, closes.
ENTRYPOINT ["node", "--import", "tsx", "services/signaling/src/main.ts"]
