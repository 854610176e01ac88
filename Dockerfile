# syntax=docker/dockerfile:1
# deploy-watchdog container image.
#   build:   compiles TypeScript and the better-sqlite3 native addon with dev dependencies,
#            then prunes to production dependencies.
#   runtime: slim Node LTS, non-root, only production node_modules and the compiled output.
# The runtime stage's steps (prune to production dependencies, start the compiled entry point,
# answer /healthz) are exercised on the host by test/container/runtime-stage.test.ts.

ARG NODE_IMAGE=node:20.20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Scripts are skipped here: `prepare` compiles the sources, which are not copied yet.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm rebuild better-sqlite3 \
 && npm run build \
 && npm prune --omit=dev

FROM ${NODE_IMAGE} AS runtime
# glibc maps buffers of 128 kB and up on their own instead of fragmenting its heap (src/cli/memory-settings.ts).
ENV NODE_ENV=production MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
# /data holds the SQLite state (mount a volume); /config holds config.yaml (mount read-only).
# The command is on PATH, so a pasted "To silence" line runs in the container as printed
# (`docker exec <container> deploy-watchdog silence …`); the commands find the config by the variable.
ENV DEPLOY_WATCHDOG_CONFIG=/config/config.yaml
RUN mkdir -p /data /config && chown node:node /data \
 && ln -s /app/dist/cli/bin.js /usr/local/bin/deploy-watchdog
USER node
VOLUME ["/data"]
EXPOSE 9464
# The config must set server.listen to 0.0.0.0:9464 for scrapes from outside the container;
# the health check itself runs inside it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# A fixed young generation for a daemon that reads in bursts (src/cli/memory-settings.ts).
ENTRYPOINT ["node", "--max-semi-space-size=4", "dist/cli/bin.js"]
CMD ["run", "--config", "/config/config.yaml"]
