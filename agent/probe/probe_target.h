// The files a probe does I/O on: chosen, created or reused, opened, and mapped to blocks.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "probe/io_layout.h"
#include "probe/probe.h"
#include "probe/probe_result.h"
#include "probe/test_file.h"

namespace iogate {

struct OpenTarget {
  ProbeTarget info;
  std::optional<TestFile> test_file;   // removed when this goes away, unless kept
  std::vector<UniqueFd> existing_fds;  // read-only files iogate did not create
  IoLayout layout;
  bool direct = true;  // as opened: false after a fallback
  std::vector<std::string> warnings;
};

// `seed` seeds the test file's contents. `stop` interrupts the fill.
Result<OpenTarget> open_probe_target(const ProbeRequest& request, uint64_t seed, const std::atomic<bool>& stop);

}  // namespace iogate
