# syntax=docker/dockerfile:1
#
# The merchant-verify gateway (`mvr serve`). The image holds code only: the records, the public
# key set and the API key file are mounted at run time, and no signing key is ever in it.
#
#   docker build -t merchant-verify .
#   docker run --rm --init --read-only --tmpfs /tmp -p 8787:8787 \
#     -v /srv/mvr/records:/data/records:ro \
#     -v /srv/mvr/public:/data/public:ro \
#     -v /srv/mvr/api-keys:/data/api-keys:ro \
#     merchant-verify
#
# Mount the folder that holds api-keys.json, not the file itself: `mvr apikey` replaces the file
# by rename, and a single-file bind mount would keep showing the old one.

# Node 24 is the current LTS line; any supported line (20.19+, 22, 24, 26) builds and runs it.
ARG NODE_VERSION=24

# --- build: the TypeScript compiled to JavaScript, then the development dependencies dropped ---
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY packages/shared/package.json packages/shared/tsconfig.json ./packages/shared/
COPY packages/verifier/package.json packages/verifier/tsconfig.json ./packages/verifier/
# --ignore-scripts: no install script runs (the build below is the only one the image needs).
RUN npm ci --ignore-scripts
COPY packages/shared/src ./packages/shared/src
COPY packages/verifier/src ./packages/verifier/src
COPY core ./core
COPY storage ./storage
COPY service ./service
COPY access ./access
COPY keyring ./keyring
COPY builder ./builder
COPY cli ./cli
COPY gateway ./gateway
COPY mcp ./mcp
COPY presentation ./presentation
COPY clients ./clients
COPY mirror ./mirror
COPY web ./web
RUN npm run build && npm prune --omit=dev --ignore-scripts && npm cache clean --force

# --- runtime: JavaScript and runtime dependencies only; no TypeScript, no loader ---
FROM node:${NODE_VERSION}-slim
WORKDIR /app

# HOME and the npm cache point at /tmp so that nothing writes to the image, though npm is not run.
ENV NODE_ENV=production \
    HOME=/tmp \
    NPM_CONFIG_CACHE=/tmp/.npm \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    HOST=0.0.0.0 \
    PORT=8787 \
    MVR_RECORDS_DIR=/data/records \
    MVR_PUBLIC_DIR=/data/public \
    MVR_API_KEYS_FILE=/data/api-keys/api-keys.json

# Code and dependencies belong to root and are only readable by the `node` user that runs them.
# node_modules/@merchant-verify/verifier is a link to packages/verifier (an npm workspace). The
# shared package needs nothing here: the service runs its compiled copy (dist/shared, through its
# package.json's `#shared`), and the verifier's dist/index.js holds what it runs of it.
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/verifier/package.json ./packages/verifier/
COPY --from=build /app/packages/verifier/dist ./packages/verifier/dist
COPY package.json ./
COPY bin ./bin

# Mount points (see the ENV above); empty, so an unmounted store shows as "degraded" in /healthz.
RUN mkdir -p /data/records /data/public /data/api-keys

USER node
EXPOSE 8787
STOPSIGNAL SIGTERM

# /healthz is liveness: 200 while the process serves (status "degraded" when the records are away).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8787)+'/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# Node itself, not npm or a shell: `docker stop` (SIGTERM) reaches the gateway process directly.
ENTRYPOINT ["node", "bin/mvr.js"]
CMD ["serve"]
