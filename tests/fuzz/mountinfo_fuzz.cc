// libFuzzer target for the /proc/self/mountinfo parser (agent/device/mountinfo.cc).
//
// The input is fed to parse_mountinfo() as-is; then every returned entry and find_mount_for_path()
// on paths derived from it are checked against the contract in mountinfo.h. A broken invariant
// aborts with __builtin_trap(), which libFuzzer reports as a crash and saves the input.
//
// The parser normalises absolute mount points ("//a/" → "/a": this fuzzer found that "//" once
// answered for "/"), so every absolute entry must come out canonical, as the kernel writes them
// (d_path(): no "//", no trailing '/' except "/" itself), and find_mount_for_path()'s contract
// (longest mount_point that is a prefix of the path on a component boundary) is checked strictly
// on all of them. Relative mount points (fuzzed garbage) only run under ASan/UBSan.
//
// Built and run by tests/fuzz/run_fuzz.sh (ctest: fuzz.mountinfo), with clang++ and
// -fsanitize=fuzzer,address,undefined.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "device/mountinfo.h"

namespace {

using iogate::MountEntry;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool canonical(std::string_view p) {
  if (p.empty() || p.front() != '/') return false;
  if (p.size() > 1 && p.back() == '/') return false;
  return p.find("//") == std::string_view::npos;
}

// mount_point holds path per mountinfo.h: mount_point is a prefix of path, on a path-component
// boundary ("/data" holds "/data" and "/data/x", not "/database").
bool holds_literally(std::string_view mount_point, std::string_view path) {
  if (mount_point.empty() || path.substr(0, mount_point.size()) != mount_point) return false;
  return path.size() == mount_point.size() || mount_point.back() == '/' || path[mount_point.size()] == '/';
}

// The answer, if any, is one of the entries (not a copy or a dangling pointer) with an absolute
// mount point; relative queries never match.
const MountEntry* lookup(const std::vector<MountEntry>& entries, const std::string& query) {
  const MountEntry* m = iogate::find_mount_for_path(entries, query);
  if (query.empty() || query.front() != '/') check(m == nullptr);
  if (m == nullptr) return nullptr;
  check(m >= entries.data() && m < entries.data() + entries.size());
  check(!m->mount_point.empty() && m->mount_point.front() == '/');
  return m;
}

// Strict check on a list of canonical mount points. `self`, where given, is an entry that holds
// the query, so the answer must exist and be at least as long as it (the longest wins); where
// several are as long (over-mounts), the last of them in the list.
void check_lookup(const std::vector<MountEntry>& entries, const std::string& query, const MountEntry* self) {
  const MountEntry* m = lookup(entries, query);
  if (self != nullptr) check(m != nullptr);
  if (m == nullptr) {
    for (const MountEntry& e : entries) check(!holds_literally(e.mount_point, query) || query.front() != '/');
    return;
  }
  check(holds_literally(m->mount_point, query));
  if (self != nullptr) check(m->mount_point.size() >= self->mount_point.size());
  for (const MountEntry* e = m + 1; e < entries.data() + entries.size(); ++e) {
    // No later entry holds the query with a mount point as long or longer.
    check(!(holds_literally(e->mount_point, query) && e->mount_point.size() >= m->mount_point.size()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<MountEntry> entries = iogate::parse_mountinfo(text);

  // At most one entry per line of input.
  size_t lines = 1;
  for (char c : text) lines += (c == '\n');
  check(entries.size() <= lines);

  std::vector<MountEntry> canon;
  lookup(entries, "/");
  for (const MountEntry& e : entries) {
    check(!e.mount_point.empty());
    check(!e.root.empty());
    check(!e.fs_type.empty());
    for (const std::string& opt : e.optional_fields) check(!opt.empty() && opt != "-");
    (void)e.read_only();
    lookup(entries, e.mount_point);
    lookup(entries, e.mount_point + "/x");
    lookup(entries, e.root);
    if (e.mount_point.front() == '/') check(canonical(e.mount_point));
    if (canonical(e.mount_point)) canon.push_back(e);
  }

  check_lookup(canon, "/", nullptr);
  for (const MountEntry& e : canon) {
    check_lookup(canon, e.mount_point, &e);
    check_lookup(canon, e.mount_point + "/x", &e);
    check_lookup(canon, e.mount_point + "/x/y/", &e);
    check_lookup(canon, e.mount_point + "x", nullptr);  // a sibling: "/data" does not hold "/datax"
    check_lookup(canon, e.root, nullptr);
  }
  return 0;
}
