# Narad container image: one static binary on distroless, running as nonroot.
#
#   docker build -t narad:0.1.0 .
#   docker run -p 7942:7942 -v narad-data:/var/lib/narad narad:0.1.0
#
# Ports: 7942 client HTTP API, 7943 cluster (Raft), 7944 node-to-node gRPC
# (always the cluster port + 1).
#
# Build arguments: VERSION (the version narad reports, and the image's
# version label) and REVISION (the source commit: the commit narad version
# reports, since .git is not copied in, and the revision label):
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) -t narad:0.1.0 .
#
# Base images: pin each by digest (FROM image:tag@sha256:...), so a rebuild
# of the same source gets the same base and a moved tag cannot change what
# ships. The two below are NOT pinned yet: this file was last edited where
# no container registry could be reached, and a digest that cannot be read
# from the registry cannot be verified. Pin them with
#   docker buildx imagetools inspect golang:1.26 --format '{{.Manifest.Digest}}'
#   docker buildx imagetools inspect gcr.io/distroless/static-debian12:nonroot --format '{{.Manifest.Digest}}'
# and remove their entries from knownUnpinned in test/deploy/dockerfile_test.go
# (which fails on any other unpinned FROM).

ARG VERSION=0.1.0
ARG REVISION=unknown

# ---- build ------------------------------------------------------------------
# The build stage runs on the builder's own platform and cross-compiles (pure
# Go, CGO off), so `docker buildx build --platform linux/arm64,linux/amd64`
# needs no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src

# Dependencies first, in their own layer: re-downloaded only when go.mod or
# go.sum change, not on every source edit.
COPY go.mod go.sum ./
RUN go mod download && go mod verify

COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION
ARG REVISION
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.revision=${REVISION}" \
      -o /out/narad ./cmd/narad

# The data directory, prepared here because distroless has no shell to mkdir
# at run time; it is copied with the nonroot owner below.
RUN mkdir -p /out/data && chmod 0750 /out/data

# ---- run --------------------------------------------------------------------
FROM gcr.io/distroless/static-debian12:nonroot

ARG VERSION
ARG REVISION
# OCI image annotations (github.com/opencontainers/image-spec,
# annotations.md): what registries, scanners and `docker inspect` show.
LABEL org.opencontainers.image.title="narad" \
      org.opencontainers.image.description="Narad, a queue-first message broker: one static binary serving the HTTP API, Raft and node RPC" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="https://github.com/narad-io/narad" \
      org.opencontainers.image.url="https://github.com/narad-io/narad" \
      org.opencontainers.image.documentation="https://github.com/narad-io/narad#readme" \
      org.opencontainers.image.vendor="Narad" \
      org.opencontainers.image.base.name="gcr.io/distroless/static-debian12:nonroot"

COPY --from=build /out/narad /usr/local/bin/narad
COPY --from=build --chown=65532:65532 /out/data /var/lib/narad

# No NARAD_NODE_ID, on purpose: the node's id is the one its data directory
# recorded at first start (the file node-id), so a container recreated on
# the same volume, under a new host name, keeps its identity. Without a
# configured id a first start takes the host name; set NARAD_NODE_ID (the
# Helm chart sets the pod name, which a StatefulSet keeps stable) to choose.
ENV NARAD_DATA_DIR=/var/lib/narad \
    NARAD_HTTP_ADDR=:7942 \
    NARAD_CLUSTER_ADDR=:7943 \
    NARAD_LOG_FORMAT=json

# Declared after the COPY above so the directory keeps its owner.
VOLUME ["/var/lib/narad"]
EXPOSE 7942 7943 7944

# 65532 is distroless's "nonroot"; numeric so Kubernetes can verify
# runAsNonRoot without reading /etc/passwd.
USER 65532:65532

# No HEALTHCHECK: distroless has no shell, curl or wget to run one, and the
# binary has no self-probe command. Orchestrators probe over HTTP instead:
# GET /healthz (alive) and GET /readyz (ready to serve) on port 7942.
# The image runs the server; for the CLI, `kubectl exec POD -- narad topic ls`
# or `docker run --entrypoint narad IMAGE --help`.
ENTRYPOINT ["/usr/local/bin/narad", "serve"]
