#include "device/mountinfo.h"

#include <charconv>

#include "base/paths.h"
#include "base/split_list.h"
#include "device/kernel_file.h"

namespace iogate {

namespace {

// Fields split on single spaces, keeping empty ones: consecutive spaces mean an empty field.
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (;;) {
    size_t sp = line.find(' ', start);
    if (sp == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, sp - start));
    start = sp + 1;
  }
}

bool is_octal(char c) { return c >= '0' && c <= '7'; }

// The kernel's mangle() writes a byte as a backslash and three octal digits; a literal
// backslash is itself written as \134, so every "\ooo" is an escape.
std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && is_octal(s[i + 1]) && is_octal(s[i + 2]) && is_octal(s[i + 3])) {
      int v = (s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0');
      if (v <= 0xff) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

template <typename T>
bool parse_number(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool parse_dev(std::string_view s, uint32_t* major, uint32_t* minor) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  return parse_number(s.substr(0, colon), major) && parse_number(s.substr(colon + 1), minor);
}

bool has_option(std::string_view options, std::string_view name) {
  for (std::string_view opt : split_list(options)) {
    if (opt == name) return true;
  }
  return false;
}

std::string normal_mount_point(std::string p) {
  if (p.empty() || p.front() != '/') return p;
  std::string out;
  for (char c : p) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  return strip_trailing_slashes(std::move(out));
}

bool parse_line(std::string_view line, MountEntry* e) {
  std::vector<std::string_view> f = split_fields(line);
  // Six fixed fields, the separator, then fs type, source and super options.
  if (f.size() < 10) return false;
  size_t sep = 6;
  while (sep < f.size() && f[sep] != "-") ++sep;
  if (sep == f.size() || f.size() - sep - 1 < 3) return false;
  if (!parse_number(f[0], &e->mount_id) || !parse_number(f[1], &e->parent_id)) return false;
  if (!parse_dev(f[2], &e->major, &e->minor)) return false;
  if (f[3].empty() || f[4].empty() || f[sep + 1].empty()) return false;
  e->root = unescape(f[3]);
  // The kernel writes canonical mount points; normalising ("//a/" → "/a") keeps the prefix
  // match honest for anything else (found by the fuzzer).
  e->mount_point = normal_mount_point(unescape(f[4]));
  e->mount_options = std::string(f[5]);
  e->optional_fields.clear();
  for (size_t i = 6; i < sep; ++i) {
    if (!f[i].empty()) e->optional_fields.emplace_back(f[i]);
  }
  e->fs_type = unescape(f[sep + 1]);
  e->source = unescape(f[sep + 2]);
  e->super_options = std::string(f[sep + 3]);
  return true;
}

// True when mount_point holds path: equal, or a prefix followed by a '/'.
bool holds(std::string_view mount_point, std::string_view path) {
  if (mount_point.size() > 1 && mount_point.back() == '/') mount_point.remove_suffix(1);
  if (path.substr(0, mount_point.size()) != mount_point) return false;
  if (path.size() == mount_point.size()) return true;
  return mount_point.back() == '/' || path[mount_point.size()] == '/';
}

}  // namespace

bool MountEntry::read_only() const { return has_option(mount_options, "ro") || has_option(super_options, "ro"); }

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  std::vector<MountEntry> mounts;
  for (std::string_view line : split_kernel_lines(text)) {
    MountEntry e;
    if (parse_line(line, &e)) mounts.push_back(std::move(e));
  }
  return mounts;
}

Result<std::vector<MountEntry>> read_mountinfo(const std::string& proc_root) {
  auto text = read_kernel_file(proc_root + "/self/mountinfo");
  if (!text.ok()) return text.error();
  return parse_mountinfo(*text);
}

const MountEntry* find_mount_for_path(const std::vector<MountEntry>& mounts, std::string_view canonical_path) {
  if (canonical_path.empty() || canonical_path.front() != '/') return nullptr;
  while (canonical_path.size() > 1 && canonical_path.back() == '/') canonical_path.remove_suffix(1);
  const MountEntry* best = nullptr;
  size_t best_len = 0;
  for (const MountEntry& m : mounts) {
    if (m.mount_point.empty() || m.mount_point.front() != '/' || !holds(m.mount_point, canonical_path)) continue;
    // >= so that a later entry at the same mount point replaces an earlier one.
    if (!best || m.mount_point.size() >= best_len) {
      best = &m;
      best_len = m.mount_point.size();
    }
  }
  return best;
}

}  // namespace iogate
