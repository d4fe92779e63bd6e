# syntax=docker/dockerfile:1
# The gateway's image (docs/deploy.md). Build with Docker or podman, for example
#   podman build --format docker -t registro-gateway .
# (podman keeps HEALTHCHECK only in Docker's format). Behind a private registry or a proxy that
# inspects TLS, pass its npmrc and CA bundle as secrets, never as a layer:
#   --secret id=npmrc,src=$HOME/.npmrc --secret id=npm-ca,src="$(npm config get cafile)"
ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim

# Production dependencies only, exactly as package-lock.json pins them.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# Read only where a secret is mounted; npm ignores them otherwise.
ENV NPM_CONFIG_USERCONFIG=/run/secrets/npmrc \
    NPM_CONFIG_CAFILE=/run/secrets/npm-ca
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npmrc --mount=type=secret,id=npm-ca --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The compiled build, with the compiler and types from the dev dependencies.
FROM deps AS build
RUN --mount=type=secret,id=npmrc --mount=type=secret,id=npm-ca --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY operations operations
COPY bench bench
RUN npx tsc -p tsconfig.build.json

FROM ${NODE_IMAGE}
# RES_OPTIONS (glibc's resolver): a DNS lookup gives up after 1 s, twice, rather than 5 s. A
# lookup under way in libuv's threads holds the process's exit until it ends, and the gateway is
# one process with no parent to cut it short: a stop during a DNS outage takes 2 s, not 10.
# NODE_OPTIONS: V8's heap at half the 512 MiB a container is given (deploy/kubernetes's limit); raise both together.
ENV NODE_ENV=production \
    PORT=4000 \
    OPS_PORT=9464 \
    NODE_OPTIONS="--max-old-space-size=256" \
    RES_OPTIONS="timeout:1 attempts:2"
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist/src dist/src
COPY --from=build /app/dist/operations dist/operations
COPY resources resources
USER node
EXPOSE 4000 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.OPS_PORT}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is the container's process (no npm or shell between), so SIGTERM from
# `podman stop` or the kubelet reaches the gateway, which drains and exits 0. The flags are
# package.json's start:prod (test/image/ keeps them equal).
CMD ["node", "--max-semi-space-size=24", "--heap-growing-percent=100", "dist/src/main.js"]
