# Narad container image: one static binary on distroless, running as nonroot.
#
#   docker build -t narad:0.1.0 .
#   docker run -p 7942:7942 -v narad-data:/var/lib/narad narad:0.1.0
#
# Ports: 7942 client HTTP API, 7943 cluster (Raft), 7944 node-to-node gRPC
# (always the cluster port + 1).

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
ARG VERSION=0.1.0
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/narad ./cmd/narad

# The data directory, prepared here because distroless has no shell to mkdir
# at run time; it is copied with the nonroot owner below.
RUN mkdir -p /out/data && chmod 0750 /out/data

# ---- run --------------------------------------------------------------------
FROM gcr.io/distroless/static-debian12:nonroot

COPY --from=build /out/narad /usr/local/bin/narad
COPY --from=build --chown=65532:65532 /out/data /var/lib/narad

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
