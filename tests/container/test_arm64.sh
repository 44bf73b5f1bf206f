#!/usr/bin/env bash
# The arm64 image (GH200, GB200 nodes): scripts/build-image.sh --arch arm64 around the binary
# build.arm64 cross-built (its fixture; ARM64_BUILD_DIR), tagged IOGATE_TEST_IMAGE-arm64. Shows:
#   - Os linux, Architecture arm64, and otherwise the config of the amd64 image container.build
#     made (entrypoint, no Cmd, user, every label): the Dockerfile's final stage is the one place;
#   - one layer holding exactly iogate, 0/0 0755, an aarch64 ELF, static, stripped;
#   - the Docker Engine runs it (docker run --platform linux/arm64, through qemu-user registered in
#     binfmt_misc) as the chart's pods run it: read-only root, no capabilities, no-new-privileges,
#     user 65532; its version is the host build's, and `detect` answers;
#   - the manual's commands join both images into one tag on a real registry (Debian's
#     docker-registry on loopback): the list names linux/amd64 and linux/arm64, and a pull of the tag
#     for each platform gives exactly that image.
source "$(dirname "$0")/lib.sh"
need_image
: "${ARM64_BUILD_DIR:?ARM64_BUILD_DIR must name the build folder of build.arm64 (ctest sets it)}"
[[ -x "$ARM64_BUILD_DIR/iogate" ]] || fail "no $ARM64_BUILD_DIR/iogate: ctest runs build.arm64 first (the fixture)"
need_tool file tar
ARM_IMAGE="$IMAGE-arm64"
on_exit "docker rmi -f $ARM_IMAGE"

t0=$(date +%s.%N)
BUILD_DIR="$ARM64_BUILD_DIR" bash "$ROOT/scripts/build-image.sh" --arch arm64 --tag "$ARM_IMAGE" >"$SCRATCH/id" 2>"$SCRATCH/build.log" ||
  { tail -40 "$SCRATCH/build.log" >&2; fail "scripts/build-image.sh --arch arm64 failed (log above)"; }
t1=$(date +%s.%N)
[[ "$(cat "$SCRATCH/id")" =~ ^sha256:[0-9a-f]{64}$ ]] || fail "build-image.sh --arch arm64 printed more or other than the image ID: $(cat "$SCRATCH/id")"
pass "docker build --platform linux/arm64: $(cat "$SCRATCH/id") in $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s"

# --- the config: the amd64 image's, but for the architecture ---
docker image inspect "$ARM_IMAGE" >"$SCRATCH/arm64.json"
docker image inspect "$IMAGE" >"$SCRATCH/amd64.json"
assert_jq "$SCRATCH/arm64.json" '.[0].Os == "linux" and .[0].Architecture == "arm64"' "docker image inspect: linux/arm64"
jq -e --slurpfile a "$SCRATCH/amd64.json" '.[0].Config as $c | $a[0][0].Config as $d |
  $c.Entrypoint == $d.Entrypoint and $c.Cmd == $d.Cmd and $c.User == $d.User and $c.Labels == $d.Labels and
  $c.Entrypoint == ["/iogate"] and $c.User == "65532:65532" and ($c.Labels | length) >= 5' "$SCRATCH/arm64.json" >/dev/null ||
  fail "the arm64 image's config differs from $IMAGE's: $(jq -c '.[0].Config | {Entrypoint, Cmd, User, Labels}' "$SCRATCH/arm64.json") vs $(jq -c '.[0].Config | {Entrypoint, Cmd, User, Labels}' "$SCRATCH/amd64.json")"
pass "entrypoint, user and all $(jq '.[0].Config.Labels | length' "$SCRATCH/arm64.json") labels equal to $IMAGE's ($(jq -r '.[0].Architecture' "$SCRATCH/amd64.json"))"

# --- the one layer ---
image_only_iogate "$ARM_IMAGE"  # $SCRATCH/saved/iogate, its size in $lsize
desc=$(file "$SCRATCH/saved/iogate")
[[ "$desc" == *"ARM aarch64"* && "$desc" == *"statically linked"* && "$desc" == *", stripped"* ]] ||
  fail "the image's iogate is not a static, stripped aarch64 ELF: $desc"
pass "docker save: one layer, exactly iogate -rwxr-xr-x 0/0, $lsize bytes: ARM aarch64, static, stripped"

# --- run it, as the chart's pods run it ---
grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null ||
  fail "qemu-aarch64 is not registered in binfmt_misc, so the engine cannot run arm64 images: bash scripts/install-deps.sh (mounts binfmt_misc, update-binfmts --enable qemu-aarch64)"
grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
  fail "qemu-aarch64 is registered without the fix-binary flag (F): a container cannot reach the interpreter: $(cat /proc/sys/fs/binfmt_misc/qemu-aarch64)"
run=(docker run --rm --platform linux/arm64 --label "iogate.test=$TEST_ID" --read-only --cap-drop ALL
  --security-opt no-new-privileges --user 65532:65532)
out=$("${run[@]}" "$ARM_IMAGE" --version 2>&1) || fail "docker run --platform linux/arm64 $ARM_IMAGE --version: $out"
[[ "$(head -1 <<<"$out")" == "$("$IOGATE" --version | head -1)" ]] ||
  fail "the arm64 image's iogate says \"$(head -1 <<<"$out")\", the host build \"$("$IOGATE" --version | head -1)\""
"${run[@]}" "$ARM_IMAGE" detect /proc/self --output-format json >"$SCRATCH/detect.json" 2>"$SCRATCH/detect.err" || true
jq -e '.schema == "iogate.detect/v1"' "$SCRATCH/detect.json" >/dev/null ||
  fail "detect in the arm64 container: $(cat "$SCRATCH/detect.err" "$SCRATCH/detect.json")"
pass "docker run --platform linux/arm64 (qemu-user via binfmt_misc), read-only, no capabilities, user 65532: $(head -1 <<<"$out"); detect answers"

# --- one tag for both: the manual's commands, against a real registry on loopback ---
# Debian's docker-registry (the Distribution registry); the engine and `docker manifest` reach a
# registry on 127.0.0.0/8 over plain HTTP.
need_tool docker-registry
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir "$SCRATCH/registry"
cat >"$SCRATCH/registry.yml" <<YAML
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $SCRATCH/registry}}
http: {addr: 127.0.0.1:$port}
YAML
docker-registry serve "$SCRATCH/registry.yml" >"$SCRATCH/registry.log" 2>&1 &
registry_pid=$!
on_exit "kill $registry_pid"
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/v2/" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/v2/" >/dev/null || fail "docker-registry did not answer on 127.0.0.1:$port: $(cat "$SCRATCH/registry.log")"
REPO="127.0.0.1:$port/iogate"
on_exit "docker rmi -f $REPO:test $REPO:test-amd64 $REPO:test-arm64"
for pair in "$IMAGE amd64" "$ARM_IMAGE arm64"; do
  read -r image arch <<<"$pair"
  docker tag "$image" "$REPO:test-$arch"
  docker push -q "$REPO:test-$arch" >>"$SCRATCH/push.log" 2>&1 || fail "docker push $REPO:test-$arch: $(cat "$SCRATCH/push.log")"
done
export DOCKER_CONFIG="$SCRATCH/docker-config" # the CLI keeps manifest lists there until pushed
docker manifest create --insecure "$REPO:test" "$REPO:test-amd64" "$REPO:test-arm64" >"$SCRATCH/manifest.log" 2>&1 &&
  docker manifest push --insecure --purge "$REPO:test" >>"$SCRATCH/manifest.log" 2>&1 ||
  fail "docker manifest create/push: $(cat "$SCRATCH/manifest.log")"
docker manifest inspect --insecure "$REPO:test" >"$SCRATCH/list.json" 2>&1 || fail "docker manifest inspect: $(cat "$SCRATCH/list.json")"
assert_jq "$SCRATCH/list.json" '.mediaType == "application/vnd.docker.distribution.manifest.list.v2+json" and
  ([.manifests[].platform | "\(.os)/\(.architecture)"] | sort) == ["linux/amd64", "linux/arm64"]' \
  "docker manifest create + push: one tag, a list of linux/amd64 and linux/arm64"
unset DOCKER_CONFIG
for pair in "$IMAGE amd64" "$ARM_IMAGE arm64"; do
  read -r image arch <<<"$pair"
  docker pull -q --platform "linux/$arch" "$REPO:test" >/dev/null 2>"$SCRATCH/pull.err" || fail "docker pull --platform linux/$arch $REPO:test: $(cat "$SCRATCH/pull.err")"
  [[ "$(docker image inspect -f '{{.Id}}' "$REPO:test")" == "$(docker image inspect -f '{{.Id}}' "$image")" ]] ||
    fail "docker pull --platform linux/$arch of the list gave $(docker image inspect -f '{{.Id}} {{.Architecture}}' "$REPO:test"), not $image"
done
pass "docker pull --platform linux/amd64 and linux/arm64 of the one tag: exactly $IMAGE and $ARM_IMAGE (image IDs)"
