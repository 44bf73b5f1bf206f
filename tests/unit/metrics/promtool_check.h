// `promtool check metrics` (Debian's prometheus) on an exposition: promtool parses the text as
// Prometheus does and lints it as client_golang's promlint does (units, _total, histogram
// suffixes, reserved labels, HELP); lint problems are printed, so silence is the pass. Without
// promtool the check fails, naming the fix.
#pragma once

#include <doctest/doctest.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "temp_tree.h"

namespace iogate::testing {

inline std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

inline void check_promtool_accepts(const std::string& exposition) {
  std::string promtool = find_on_path("promtool");
  REQUIRE_MESSAGE(!promtool.empty(), "promtool is not on PATH: run scripts/install-deps.sh (Debian's prometheus)");
  TempTree tree;
  std::string input = tree.write("metrics.txt", exposition);
  std::string command = promtool + " check metrics < " + input + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) output.append(buf, n);
  int status = pclose(pipe);
  INFO("promtool said: ", output);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(output.empty());
}

}  // namespace iogate::testing
