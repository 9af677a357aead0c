# syntax=docker/dockerfile:1
#
# redlockd image: the daemon (entrypoint) and the redlockctl client.
#
#   docker build -t redlockd:0.1.0 .
#
# The image keeps the compiled-in defaults: gRPC on 127.0.0.1:7420 and
# metrics on 127.0.0.1:9420. Addresses are a deployment decision, set in the
# manifests (deploy/app-with-sidecar.yaml), not baked in here.

# ---- build ----------------------------------------------------------------
# Debian 12 (bookworm), like the runtime image below: the binaries link
# against the same glibc they run with. No system protoc is needed: build.rs
# uses the protoc shipped in the protoc-bin-vendored crate.
FROM rust:1-bookworm AS builder
WORKDIR /src

# Only what the build reads (see .dockerignore): the workspace manifest and
# lock file, the build script, the proto files, the compiled-in default
# config, the code, the client library redlockctl is built on (a workspace
# member), and the patched fred (vendor/README.md). The benchmark and the
# fuzz targets are crates of their own: the build does not need them.
# `scripts/docker-context-build` builds from exactly these (CI runs it).
COPY Cargo.toml Cargo.lock build.rs ./
COPY clients/rust ./clients/rust
COPY vendor ./vendor
COPY proto ./proto
COPY config ./config
COPY src ./src

# Cache mounts keep the crate registry and the target directory between
# builds (BuildKit); the binaries are copied out of the cached target/ in the
# same step, since a cache mount is not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/usr/local/cargo/git \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin redlockd --bin redlockctl \
    && install -D -m 0755 target/release/redlockd target/release/redlockctl -t /out/

# ---- runtime --------------------------------------------------------------
# distroless/cc: glibc, libgcc_s (all the binaries link, see `ldd`),
# CA certificates (system roots for rediss:// masters), no shell, no package
# manager. The :nonroot variant's user is 65532.
FROM gcr.io/distroless/cc-debian12:nonroot

LABEL org.opencontainers.image.title="redlockd" \
      org.opencontainers.image.description="Distributed-lock daemon: Redlock over independent Redis masters with fencing tokens, over gRPC" \
      org.opencontainers.image.licenses="Apache-2.0"

COPY --from=builder /out/redlockd /out/redlockctl /usr/local/bin/

# Numeric, not "nonroot": the kubelet can only enforce runAsNonRoot for an
# image whose user it can tell is not 0 without reading /etc/passwd.
USER 65532:65532

# 7420: gRPC (redlockd.v1.Lock, grpc.health.v1, reflection).
# 9420: Prometheus metrics, GET /metrics.
EXPOSE 7420 9420

# `redlockd` with no subcommand serves. Configuration: --config FILE and
# REDLOCKD__SECTION__KEY environment variables (see docs/configuration.md).
# It handles SIGTERM itself: health goes NOT_SERVING, sessions release, exit
# within server.shutdown_grace.
ENTRYPOINT ["/usr/local/bin/redlockd"]
