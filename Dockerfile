# syntax=docker/dockerfile:1
# The service and its web manager in one image: Node 24, no build step for the server (Node runs the TypeScript
# sources directly), the manager built by Vite in a stage of its own, production dependencies only, a non-root user.
# Build: docker build -t svc-agents .   Run: docker run -p 7070:7070 -v svc-data:/data svc-agents

ARG NODE_IMAGE=node:24-bookworm-slim

# All dependencies, for building the manager. Install scripts are skipped: the one that matters locally (the `node`
# devDependency fetching Node 24) is not needed where the image already is Node 24.
FROM ${NODE_IMAGE} AS build
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY web ./web
RUN npm run build:web

# Production dependencies only.
FROM ${NODE_IMAGE} AS dependencies
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    SVC_HTTP_HOST=0.0.0.0 \
    SVC_HTTP_PORT=7070 \
    SVC_DATASTORE_SQLITE_PATH=/data/svc.db \
    SVC_AUDIT_DEAD_LETTER_PATH=/data/audit-dead-letter.jsonl
WORKDIR /app
COPY --from=dependencies /build/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY cli ./cli
COPY --from=build /build/web/dist ./web/dist
# The official image's `node` user (uid 1000); /data holds the embedded store when PostgreSQL is not used.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 7070
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.SVC_HTTP_PORT || 7070) + '/q/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--v8-pool-size=1", "src/main.ts"]
