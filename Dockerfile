# mini-agent: the daemon (mini-agent-daemon) and the client (mini-agent-client) in one image.
#
# The base image is a build argument. Users get the usual Node 20 slim image;
# where no registry is reachable (CI here), build on the locally assembled Node
# runtime base instead (sandbox-image: buildNodeBaseImage -> mini-agent/node-base:local):
#   docker build --build-arg BASE_IMAGE=mini-agent/node-base:local -t mini-agent:local .
#
# No `npm ci` runs inside the build: without a registry it cannot. The build
# context must already hold the compiled `dist/` (npm run build) and the
# PRODUCTION `node_modules/` for the same Node major and libc (better-sqlite3 is
# native). From a checkout:
#   npm ci && npm run build            # dist/
#   a staging copy with `npm prune --omit=dev` keeps dev tools out of the image
#   (tests/docker-image/ does exactly that); building from the checkout itself
#   works too, it only copies the dev dependencies as well.
# The base has no shell, so there are no RUN steps: everything is COPY.
ARG BASE_IMAGE=node:20-bookworm-slim
FROM ${BASE_IMAGE}

WORKDIR /opt/mini-agent
COPY package.json package-lock.json ./
COPY node_modules ./node_modules
COPY dist ./dist
COPY fixtures ./fixtures

# The state dir (ledger, socket, logs, isolation reports, credentials) is a
# volume: mount one, and mount the engine socket so the daemon can start sandboxes:
#   docker run -v /var/run/docker.sock:/var/run/docker.sock -v mini-agent-state:/state mini-agent:local
# The engine socket is root-equivalent on the host; the daemon is the one process
# trusted with it, and the sandboxes it starts never see it.
# The daemon talks to the engine socket (root:docker, 0660), so it runs as uid 0
# by default (numeric: the local base has no passwd entry for root). To run it
# unprivileged, pass --user UID:GID-of-the-docker-group and a state dir that user owns.
USER 0:0
ENV MINI_AGENT_STATE_DIR=/state \
    NODE_ENV=production
VOLUME ["/state"]

# The client inside the same container:
#   docker exec CONTAINER node /opt/mini-agent/dist/client/src/cli.js health
ENTRYPOINT ["node", "/opt/mini-agent/dist/daemon/src/cli.js"]
CMD ["--state-dir", "/state"]
