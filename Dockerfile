# syntax=docker/dockerfile:1
# Multi-stage build: compile TypeScript and the native SQLite binding in a full image,
# ship only the compiled bot and production dependencies on a slim Node LTS image.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 builds from source when no prebuilt binary can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    DATABASE_PATH=/data/bridge.db
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY manifest.yml ./
# The database lives on a volume owned by the unprivileged `node` user.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 3000
# The ops routes are on OPS_PORT when it is set, else on PORT; OPS_HOST (when set) must
# include 127.0.0.1 for this check: 0.0.0.0, :: or 127.0.0.1 itself.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.OPS_PORT||process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM lets answers in progress finish for a short grace period, then exits 0.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
