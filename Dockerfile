# Placeholder until the shipping issue: builds the static binary with the project's own install
# script and copies it into an empty image. Not yet built or tested here (no Docker engine).
FROM debian:12 AS build
WORKDIR /src
COPY . .
RUN bash scripts/install-deps.sh --build-only && bash scripts/build.sh

FROM scratch
COPY --from=build /src/build/iogate /iogate
USER 65534:65534
ENTRYPOINT ["/iogate"]
