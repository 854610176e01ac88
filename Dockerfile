# syntax=docker/dockerfile:1
# deploy-watchdog container image.
#   build:   compiles TypeScript and the better-sqlite3 native addon with dev dependencies,
#            then prunes to production dependencies.
#   runtime: slim Node LTS, non-root, only production node_modules and the compiled output;
#            config and state in the /data volume.
# The runtime stage's steps (prune to production dependencies, start the compiled entry point as a
# user other than root with the README's minimal config in /data, answer the health check) are
# exercised on the host by test/container/runtime-stage.test.ts.

ARG NODE_IMAGE=node:20.20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# The simulator's package (packages/simulator) is a workspace npm must see to install; only its
# manifest comes in: the simulator and the demo are never part of the image.
COPY packages/simulator/package.json ./packages/simulator/
# Scripts are skipped here: `prepare` compiles the sources, which are not copied yet.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY templates ./templates
# The compiler is a production dependency only so that `npm ci --omit=dev` in a clone can build;
# the image is built by now, so it leaves with the development dependencies.
RUN npm rebuild better-sqlite3 \
 && npm run build \
 && npm prune --omit=dev \
 && rm -rf node_modules/typescript node_modules/.bin/tsc node_modules/.bin/tsserver node_modules/@deploy-watchdog

FROM ${NODE_IMAGE} AS runtime
# glibc maps buffers of 128 kB and up on their own instead of fragmenting its heap (src/cli/memory-settings.ts).
ENV NODE_ENV=production MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
# The default message templates, which the channels render with (README, "Templates").
COPY --from=build --chown=root:root /app/templates ./templates
# /data holds config.yaml and the SQLite state beside it (a relative or default state.path is taken
# from the config's directory): mount a volume there, and the config into it. The command is on
# PATH, so a pasted "To silence" line runs in the container as printed
# (`docker exec <container> deploy-watchdog silence …`); every command finds the config by the variable.
ENV DEPLOY_WATCHDOG_CONFIG=/data/config.yaml
RUN mkdir -p /data && chown node:node /data \
 && ln -s /app/dist/cli/bin.js /usr/local/bin/deploy-watchdog
USER node
VOLUME ["/data"]
EXPOSE 9464
# Asks /healthz (alive; /readyz is readiness, which a restart does not cure) at the port the
# config's server.listen gives, from inside the container. Set server.listen to 0.0.0.0:9464 for
# scrapes from outside it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["deploy-watchdog", "healthcheck"]
# A fixed young generation for a daemon that reads in bursts, and no second compile of undici's
# WebAssembly HTTP parser (src/cli/memory-settings.ts).
ENTRYPOINT ["node", "--max-semi-space-size=4", "--heap-growing-percent=30", "--no-wasm-tier-up", "--no-wasm-dynamic-tiering", "dist/cli/bin.js"]
CMD ["run"]
