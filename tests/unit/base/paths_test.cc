#include "base/paths.h"

#include <doctest/doctest.h>

using namespace iogate;

TEST_CASE("strip_trailing_slashes keeps the root") {
  CHECK(strip_trailing_slashes("/data/") == "/data");
  CHECK(strip_trailing_slashes("/data///") == "/data");
  CHECK(strip_trailing_slashes("/data") == "/data");
  CHECK(strip_trailing_slashes("/") == "/");
  CHECK(strip_trailing_slashes("///") == "/");
  CHECK(strip_trailing_slashes("") == "");
}

TEST_CASE("the host's /proc and /sys under --root") {
  CHECK(proc_under("/") == "/proc");
  CHECK(sys_under("/") == "/sys");
  CHECK(proc_under("/host") == "/host/proc");
  CHECK(proc_under("/host/") == "/host/proc");
  CHECK(sys_under("/host") == "/host/sys");
  CHECK(under_root("/host", "/proc/1/mountinfo") == "/host/proc/1/mountinfo");
}
