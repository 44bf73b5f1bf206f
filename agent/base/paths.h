// Small path helpers: one spelling of a path without its trailing slashes, and of the host's
// kernel trees under --root (the host's / mounted elsewhere, e.g. /host in a pod).
#pragma once

#include <string>
#include <string_view>

namespace iogate {

// "/data/" → "/data"; "/" stays "/".
std::string strip_trailing_slashes(std::string path);

// `path` (absolute) as seen under `root`: "/" → `path` itself, "/host" → "/host" + `path`.
std::string under_root(const std::string& root, std::string_view path);
inline std::string proc_under(const std::string& root) { return under_root(root, "/proc"); }
inline std::string sys_under(const std::string& root) { return under_root(root, "/sys"); }

}  // namespace iogate
