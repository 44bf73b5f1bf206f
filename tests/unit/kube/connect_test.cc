#include <doctest/doctest.h>

#include <stdlib.h>

#include <optional>
#include <string>

#include "kube/connect.h"
#include "temp_tree.h"

using namespace iogate;
using testing::TempTree;

namespace {

// A kubeconfig that loads, but whose CA ("x") no TLS client can be made from: connect_api reads it
// without a request, and fails only where it sets the client up.
std::string write_kubeconfig(const TempTree& dir) {
  return dir.write("config", R"(apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", certificate-authority-data: "eA=="}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: dev, context: {cluster: c, user: u, namespace: team-a}}]
current-context: dev
)");
}

// Sets (or, with nullopt, unsets) an environment variable for the scope.
struct EnvOverride {
  std::string name;
  std::optional<std::string> saved;
  EnvOverride(std::string n, std::optional<std::string> value) : name(std::move(n)) {
    if (const char* v = getenv(name.c_str())) saved = v;
    if (value) {
      setenv(name.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  ~EnvOverride() {
    if (saved) {
      setenv(name.c_str(), saved->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
};

}  // namespace

TEST_CASE("connect_api: --no-api reads nothing, not even a --kubeconfig that is not there") {
  ApiConnectOptions o;
  o.kubeconfig = "/nonexistent/kubeconfig";
  o.no_api = true;
  auto c = connect_api(o);
  REQUIRE(c.ok());
  CHECK(c->client == nullptr);
  CHECK(c->skip == ApiSkip::kNoApiFlag);
  CHECK(c->skipped == "--no-api");
}

TEST_CASE("connect_api: a cluster found is set up as a client, and ready() is checked") {
  TempTree dir;
  ApiConnectOptions o;
  o.kubeconfig = write_kubeconfig(dir);
  auto c = connect_api(o);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().kind == ErrorKind::kUsage);
  CHECK(c.error().message.rfind("kube CA: ", 0) == 0);
}

TEST_CASE("connect_api: a reason to decline skips the cluster found, after its errors") {
  TempTree dir;
  ApiConnectOptions o;
  o.kubeconfig = write_kubeconfig(dir);
  o.decline = "the node name is unknown";
  auto c = connect_api(o);
  REQUIRE(c.ok());
  CHECK(c->client == nullptr);
  CHECK(c->skip == ApiSkip::kDeclined);
  CHECK(c->skipped == "the node name is unknown");
  CHECK(c->namespace_name == "team-a");

  o.context = "prod";  // not in the file: a usage error, declined or not
  auto bad = connect_api(o);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().kind == ErrorKind::kUsage);
  CHECK(bad.error().message.find("--context \"prod\"") != std::string::npos);
}

TEST_CASE("connect_api: no cluster is no client, or a usage error where one is required") {
  TempTree dir;
  EnvOverride host("KUBERNETES_SERVICE_HOST", std::nullopt);
  EnvOverride kubeconfig("KUBECONFIG", dir.path("none"));
  EnvOverride home("HOME", dir.path("home"));
  ApiConnectOptions o;
  auto c = connect_api(o);
  REQUIRE(c.ok());
  CHECK(c->client == nullptr);
  CHECK(c->skip == ApiSkip::kNotInCluster);
  CHECK(c->skipped == not_in_cluster_reason(KubeEnvironment::from_process()));
  CHECK(c->namespace_name.empty());

  o.required = true;
  auto required = connect_api(o);
  REQUIRE_FALSE(required.ok());
  CHECK(required.error().kind == ErrorKind::kUsage);
  CHECK(required.error().message == "--kubeconfig: no cluster to talk to: " + c->skipped);
}
