# The book collection service as a container image (docs/container.md).
#
#   docker build -t book-service .        (or: podman build --format docker -t book-service .)
#   docker run -d -p 8080:8080 -v books-data:/app/data book-service
#
# Two stages on the same pinned Node 24 LTS image (Debian 12 "bookworm", slim): `build` compiles
# better-sqlite3's native addon, bundles the service (npm run build) and drops the
# devDependencies; `runtime` holds only package.json, dist/ and the production node_modules
# (with the compiled addon), runs as an unprivileged user under tini, and writes nowhere but
# the volume /app/data. CI builds this file unchanged on a stand-in base image of the same
# Debian release and Node version (.ci/container; docs/container.md, "What CI's base image
# stands in for").
ARG NODE_IMAGE=docker.io/library/node:24.19.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 is compiled here, from source, against the headers of this very Node
# (/usr/local/include/node): no prebuilt binary from GitHub, no headers from nodejs.org, and
# the addon CI tests is the one every build makes. prebuild-install reads
# npm_config_build_from_source itself (npm warns once that it does not know the setting).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
WORKDIR /app
COPY package.json package-lock.json ./
# JOBS=max: node-gyp compiles SQLite and the binding side by side.
RUN npm_config_build_from_source=better-sqlite3 JOBS=max npm ci
# The rest of the context: what the build reads (tsconfig.json, scripts/, web/, src/), all that
# .dockerignore lets in.
COPY . .
# Then only what runs is kept: the production dependencies, and of better-sqlite3's build its
# addon (build/Release/better_sqlite3.node), not its objects, its test extension and the SQLite
# sources (26 MB).
RUN npm run build \
 && npm prune --omit=dev \
 && rm -rf dist/.ui-types dist/.ui.tsbuildinfo \
    node_modules/better-sqlite3/build/Release/obj node_modules/better-sqlite3/build/Release/obj.target \
    node_modules/better-sqlite3/build/Release/.deps node_modules/better-sqlite3/build/Release/sqlite3.a \
    node_modules/better-sqlite3/build/Release/test_extension.node node_modules/better-sqlite3/build/deps \
    node_modules/better-sqlite3/deps node_modules/better-sqlite3/src

FROM ${NODE_IMAGE} AS runtime
# tini as PID 1: passes SIGTERM on to node (which drains and exits within 10 s) and reaps
# orphaned children. --no-install-recommends: tini alone.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
# A user of its own with a fixed id (not the node image's `node`, 1000, which other bases lack):
# volumes and Kubernetes' runAsUser can name 10001 in advance.
RUN groupadd --system --gid 10001 books \
 && useradd --system --uid 10001 --gid 10001 --home-dir /app --no-create-home --shell /usr/sbin/nologin books
WORKDIR /app
# The code belongs to root and is read-only to the service.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The one writable place: the SQLite file and the secret kept beside it (DB_URL's default,
# sqlite:./data/books.db). Made and owned before VOLUME, so a new volume starts owned by 10001.
RUN install -d -o 10001 -g 10001 -m 0700 /app/data
VOLUME /app/data

ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0
USER 10001:10001
EXPOSE 8080
STOPSIGNAL SIGTERM
# Ready = GET /readyz answers 200 (the store answers). Node's own fetch: no curl in the image.
# Kept in the image only with Docker's image format (podman build --format docker).
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]

# The last step: the compiled addon loads and opens a database, as the service's user, on the
# runtime stage's Node (an ES module, as dist/ is), and tini is there.
RUN node --input-type=module -e "import Database from 'better-sqlite3'; const db = new Database(':memory:'); console.log('better-sqlite3 loads: SQLite ' + db.prepare('select sqlite_version() as v').get().v); db.close();" \
 && /usr/bin/tini --version

ENTRYPOINT ["/usr/bin/tini", "--"]
# node itself, not npm start: its prestart would try to build, and npm would stand between
# the signal and node.
CMD ["node", "dist/main.js"]
