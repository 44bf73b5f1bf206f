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

// A scripted plugin: answers in turn, counting its runs.
struct ScriptedPlugin {
  std::vector<Result<ExecCredential>> answers;
  int runs = 0;
  TokenSource::ExecRunner runner() {
    return [this](const ExecPlugin&, const ExecCluster&) -> Result<ExecCredential> {
      REQUIRE(runs < static_cast<int>(answers.size()));
      return answers[runs++];
    };
  }
};

ExecCredential credential(std::string token, std::optional<std::chrono::seconds> valid_for = std::nullopt) {
  ExecCredential c;
  c.token = std::move(token);
  if (valid_for) c.expiry = std::chrono::system_clock::now() + *valid_for;
  return c;
}

TEST_CASE("token source: an exec plugin's token is cached until it expires, or until a 401") {
  ScriptedPlugin plugin;
  plugin.answers = {credential("tok-1", std::chrono::seconds(600)), credential("tok-2"), credential("tok-3")};
  TokenSource s(ExecPlugin{}, ExecCluster{}, plugin.runner());
  CHECK(s.can_refresh());
  Clock::time_point t0{};
  CHECK(*s.token(t0) == "tok-1");
  CHECK(*s.token(t0 + std::chrono::seconds(500)) == "tok-1");  // cached: one run
  CHECK(plugin.runs == 1);
  CHECK(*s.token(t0 + std::chrono::seconds(601)) == "tok-2");  // expired: run again
  CHECK(*s.token(t0 + std::chrono::hours(24)) == "tok-2");     // no expiry: kept until a 401
  CHECK(plugin.runs == 2);
  CHECK(s.invalidate());
  CHECK(*s.token(t0 + std::chrono::hours(24)) == "tok-3");
  CHECK(plugin.runs == 3);
  CHECK(s.generation() == 3);
}

TEST_CASE("token source: a failing plugin fails the request, and the next one runs it again") {
  ScriptedPlugin plugin;
  plugin.answers = {Result<ExecCredential>(runtime_error("users[u] exec plugin \"aws\": exit status 255: expired SSO")),
                    credential("tok")};
  TokenSource s(ExecPlugin{}, ExecCluster{}, plugin.runner());
  auto failed = s.token(Clock::time_point{});
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message.find("expired SSO") != std::string::npos);
  CHECK(*s.token(Clock::time_point{}) == "tok");
  CHECK(plugin.runs == 2);
}

TEST_CASE("token source: a plugin's client certificate is exposed with a new generation") {
  ScriptedPlugin plugin;
  ExecCredential c;
  c.client_cert_pem = "CERT";
  c.client_key_pem = "KEY";
  plugin.answers = {c};
  TokenSource s(ExecPlugin{}, ExecCluster{}, plugin.runner());
  CHECK(s.generation() == 0);
  CHECK(s.token(Clock::time_point{})->empty());
  CHECK(s.client_cert_pem() == "CERT");
  CHECK(s.client_key_pem() == "KEY");
  CHECK(s.generation() == 1);
}

}  // namespace
}  // namespace iogate
