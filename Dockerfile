# The platform server as a container image (issue 24 §4, docs/deploy/README.md).
#
#   scripts/build-server-image.sh              # npm pack, then docker build of this file
#   docker run -d --name platform --network host -v platform-state:/var/lib/platform \
#     -e PLATFORM_BEHIND_PROXY=10.0.0.5/32 platform-server:local
#
# It starts from a locally built base (scripts/build-base-images.sh server: Debian trixie with
# Node.js 20, python3, bubblewrap and tini) because registry images cannot be pulled here; BASE
# names another one. The build installs the packed tarball, never the checkout: its context
# (made by scripts/build-server-image.sh) holds platform-<version>.tgz, npm's own package and an
# npm cache with exactly the dependencies, so the install runs offline. The compiler comes from
# Debian's mirror, hence `docker build --network host`.
ARG BASE=platform-server-base:local

FROM ${BASE} AS install
# A compiler and Node's headers for the native addons that have no prebuilt binary here
# (hnswlib-node never ships one; better-sqlite3's comes from GitHub releases, and node-gyp's
# headers from nodejs.org, neither of which this network reaches).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends g++ make libnode-dev \
 && rm -rf /var/lib/apt/lists/*
COPY npm-*.tgz /tmp/
RUN mkdir /opt/npm && tar -xzf /tmp/npm-*.tgz -C /opt/npm --strip-components=1
COPY npm-cache /tmp/npm-cache
COPY platform-*.tgz /tmp/
RUN npm_config_nodedir=/usr node /opt/npm/bin/npm-cli.js install -g --prefix /usr/local --offline --cache /tmp/npm-cache --no-audit --no-fund /tmp/platform-*.tgz \
 && /usr/local/bin/platform --version

# The server stage has no npm and no compiler: only the installed package is copied over.
FROM ${BASE}
COPY --from=install /usr/local/lib/node_modules/platform /usr/local/lib/node_modules/platform
RUN ln -s ../lib/node_modules/platform/bin/run.js /usr/local/bin/platform \
 && useradd --uid 10001 --user-group --no-create-home --home-dir /var/lib/platform --shell /usr/sbin/nologin platform \
 && install -d -m 0700 -o platform -g platform /var/lib/platform

# State (the SQLite store, keys, builds, buckets, caches) lives on the volume; the server refuses a
# listener other than loopback unless TLS (PLATFORM_TLS_CERT and PLATFORM_TLS_KEY, files mounted
# read-only) or PLATFORM_BEHIND_PROXY (the reverse proxy's CIDR) is given.
ENV PLATFORM_HOME=/var/lib/platform \
    PLATFORM_LISTEN=0.0.0.0:7070 \
    PLATFORM_NO_KEYCHAIN=1
VOLUME ["/var/lib/platform"]
USER platform
WORKDIR /var/lib/platform
EXPOSE 7070

# Liveness of this server from inside its container: /healthz on the listener's port over
# loopback (or the listener's own address when it is not a wildcard). With TLS the certificate
# names the public host, not 127.0.0.1, so it is not verified here: the check is about this
# process answering, and it sends no credential.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "-e", "const l=process.env.PLATFORM_LISTEN||'127.0.0.1:7070';const i=l.lastIndexOf(':');let h=l.slice(0,i).replace(/^\\[|\\]$/g,'');if(!h||h==='0.0.0.0'||h==='::')h='127.0.0.1';const tls=Boolean(process.env.PLATFORM_TLS_CERT);require(tls?'node:https':'node:http').get({host:h,port:Number(l.slice(i+1)),path:'/healthz',rejectUnauthorized:false,timeout:4000},(r)=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1)).on('timeout',()=>process.exit(1))"]

# tini is PID 1: it forwards SIGTERM to the server (which drains, then stops its workloads) and
# reaps the processes workloads leave behind.
ENTRYPOINT ["tini", "--", "platform"]
CMD ["server", "start"]
