# The iogate image: one static, stripped /iogate and nothing else, run as a numeric non-root user.
#
#   docker build -t iogate:0.1.0 --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg CREATED=$(date -u -d @$(git log -1 --format=%ct) +%Y-%m-%dT%H:%M:%SZ) .
#
# or scripts/build-image.sh, which passes those arguments and, on an engine with no registry,
# first makes debian:12 from Debian's packages (scripts/base-image.sh). No `# syntax=` line: it
# would make BuildKit pull a frontend image, and the file needs nothing beyond the classic syntax.
#
# The arm64 image (GH200, GB200 nodes) is this file's final stage over a binary cross-built on the
# host: scripts/build-image.sh --arch arm64 (docs/manual.md, "Deploying").

FROM debian:12 AS build
WORKDIR /src
# The install script alone first: its layer (the toolchain, the libraries' static archives and
# third_party/) is then cached across source changes.
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh --build-only && rm -rf /var/lib/apt/lists/*
# Only what the binary is built from: a change to the tests, chart or docs rebuilds nothing.
COPY CMakeLists.txt ./
COPY cmake/static_link.sh cmake/
COPY scripts/build.sh scripts/image-rootfs.sh scripts/
COPY agent agent
# No build argument reaches this step: one would re-run the compile for every commit. The binary's
# mtime is 0, so the layer depends on the binary alone.
RUN IOGATE_TESTS=OFF bash scripts/image-rootfs.sh /rootfs

FROM scratch
# This stage is also the arm64 image's, its COPY taking a cross-built root from the context instead
# (scripts/build-image.sh --arch arm64): keep that line as it is, and first. Under --platform
# linux/arm64 the classic builder commits the metadata-only steps (ARG, LABEL) of a scratch stage
# as the host's architecture and then refuses to COPY onto them; after the COPY they keep arm64.
COPY --from=build /rootfs/ /
# Keep VERSION equal to `iogate --version` (tests/container/test_build.sh checks the label against
# the binary); REVISION and CREATED come from the build command.
ARG VERSION=0.1.0
ARG REVISION=""
ARG CREATED=""
LABEL org.opencontainers.image.title="iogate" \
      org.opencontainers.image.description="Storage benchmark and Kubernetes agent: probes the storage behind a path and gates GPU workloads on a storage policy" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
# Numeric, so that no /etc/passwd is needed; 65532 is the "nonroot" user of distroless images.
USER 65532:65532
ENTRYPOINT ["/iogate"]
