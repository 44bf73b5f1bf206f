# tmpfs accepts O_DIRECT and serves at memory speed: the report must say so.
source "$(dirname "$0")/lib.sh"
[[ -d /dev/shm ]] || skip "no /dev/shm"
[[ $(stat -f -c %T /dev/shm) == tmpfs ]] || skip "/dev/shm is not tmpfs"
dir=$(mktemp -d /dev/shm/iogate-it.XXXXXX)
on_exit "rm -rf '$dir'"
out="$SCRATCH/t.json"
"$IOGATE" probe "$dir" --size 32m --runtime 1s --ramp 200ms --output-format json >"$out"
assert_jq "$out" '.target.page_cache == true' "tmpfs is flagged as a page-cache result"
assert_jq "$out" '.target.fs_type == "tmpfs"' "fs type tmpfs"
assert_jq "$out" '[.warnings[] | test("page-cache")] | any' "a warning says page-cache"
assert_no_test_files "$dir"
