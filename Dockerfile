# syntax=docker/dockerfile:1
# The iogate image: one static, stripped /iogate and nothing else, run as a numeric non-root user.
# scripts/build-image.sh builds the same image without a container engine (an OCI layout), and
# tests/integration/test_image.sh checks that this file and that script agree.
#
#   docker build -t iogate:0.1.0 --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) .

FROM debian:12 AS build
WORKDIR /src
# The install script alone first: its layer (the toolchain, the libraries' static archives and
# third_party/) is then cached across source changes.
COPY scripts/install-deps.sh scripts/
RUN bash scripts/install-deps.sh --build-only && rm -rf /var/lib/apt/lists/*
COPY . .
# The last commit's time (.git is not in the build context); only the file's mtime uses it here.
ARG SOURCE_DATE_EPOCH=0
RUN bash scripts/build-image.sh --rootfs /rootfs

FROM scratch
# Keep VERSION equal to `iogate --version` (the test checks the default); REVISION and CREATED
# come from the build command.
ARG VERSION=0.1.0
ARG REVISION=""
ARG CREATED=""
LABEL org.opencontainers.image.title="iogate" \
      org.opencontainers.image.description="Storage benchmark and Kubernetes agent: probes the storage behind a path and gates GPU workloads on a storage policy" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=build /rootfs/ /
# Numeric, so that no /etc/passwd is needed; 65532 is the "nonroot" user of distroless images.
USER 65532:65532
ENTRYPOINT ["/iogate"]
