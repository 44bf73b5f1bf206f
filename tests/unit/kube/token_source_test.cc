#include <doctest/doctest.h>

#include "kube/token_source.h"
#include "service_account_dir.h"

namespace iogate {
namespace {

using testing::ServiceAccountDir;
using testing::TempTree;
using Clock = std::chrono::steady_clock;

TEST_CASE("token source: a static token") {
  TokenSource s("static", "");
  CHECK(*s.token(Clock::now()) == "static");
  CHECK_FALSE(s.can_refresh());
  CHECK_FALSE(s.invalidate());
  CHECK(*s.token(Clock::now()) == "static");
}

TEST_CASE("token source: the kubelet's ..data swap is seen after a minute or after invalidate()") {
  TempTree dir;
  ServiceAccountDir sa(dir);
  sa.publish("token-1\n", "ca", "ns");
  TokenSource s("", dir.path("token"));
  Clock::time_point t0{};  // a fake clock: only differences matter
  CHECK(*s.token(t0) == "token-1");

  sa.publish("token-2\n", "ca", "ns");
  CHECK(*s.token(t0 + std::chrono::seconds(59)) == "token-1");  // cached
  CHECK(*s.token(t0 + std::chrono::seconds(60)) == "token-2");  // a minute old: re-opened by path

  sa.publish("token-3", "ca", "ns");
  CHECK(*s.token(t0 + std::chrono::seconds(61)) == "token-2");
  CHECK(s.invalidate());  // after a 401
  CHECK(*s.token(t0 + std::chrono::seconds(62)) == "token-3");
}

TEST_CASE("token source: an unreadable or empty file keeps the previous token") {
  TempTree dir;
  dir.write("token", "good");
  TokenSource s("", dir.path("token"));
  Clock::time_point t0{};
  CHECK(*s.token(t0) == "good");
  dir.write("token", "\n");
  s.invalidate();
  CHECK(*s.token(t0) == "good");
  std::filesystem::remove(dir.path("token"));
  CHECK(*s.token(t0 + std::chrono::minutes(5)) == "good");
  dir.write("token", "better");
  CHECK(*s.token(t0 + std::chrono::minutes(5)) == "better");  // a failed read does not count as a load
}

TEST_CASE("token source: the file wins over a static token once readable") {
  TempTree dir;
  TokenSource s("fallback", dir.path("token"));
  CHECK(*s.token(Clock::time_point{}) == "fallback");
  dir.write("token", "from-file");
  CHECK(*s.token(Clock::time_point{}) == "from-file");
}

}  // namespace
}  // namespace iogate
