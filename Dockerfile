# syntax=docker/dockerfile:1
# The errand worker image: production dependencies only, the workflow bundle prebuilt, running as a
# non-root user. test/deploy/production-image.test.ts repeats these steps without Docker (same install
# command, same start command) and runs delegations with the result.

ARG NODE_VERSION=22

# ---- build: compile TypeScript and prebuild the workflow bundle (`npm run build`) ----------------------
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Install scripts are not needed: native parts (esbuild, swc, the Temporal core bridge) ship as
# platform packages, and skipping scripts keeps third-party code out of the build.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/bundle-workflows.ts ./scripts/bundle-workflows.ts
RUN npm run build

# ---- runtime ------------------------------------------------------------------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# git: git-synced source stores; ca-certificates: TLS to Temporal Cloud, S3 and model vendors;
# tini: PID 1 that forwards SIGTERM, so the worker drains instead of being killed after stopTimeout;
# bubblewrap: the optional sandbox of model-run commands (ERRAND_SANDBOX=bwrap, where the platform allows
# user namespaces; the worker checks at start).
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini bubblewrap \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The shared volume (ADR 0003) is mounted here; the directory exists so a local `docker run` works too.
RUN mkdir -p /mnt/errand && chown node:node /mnt/errand
# The image's `node` user (uid 1000); the EFS access point writes as the same uid.
USER node
ENV ERRAND_DATA_DIR=/mnt/errand/state \
    ERRAND_WORKING_DIR=/mnt/errand/work \
    ERRAND_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/worker/main.js"]
