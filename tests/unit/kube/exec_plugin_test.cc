// Exec credential plugins: the ExecCredential parser, and real plugin scripts run as client-go
// runs them (args, env, KUBERNETES_EXEC_INFO, stderr, exit status, timeout, not found).
#include <doctest/doctest.h>

#include <filesystem>

#include "base/clock.h"
#include "kube/exec_plugin.h"
#include "temp_tree.h"

namespace iogate {
namespace {

using testing::TempTree;

const std::string kV1 = "client.authentication.k8s.io/v1";

// A shell script at dir/name, executable.
std::string script(const TempTree& dir, const std::string& name, const std::string& body) {
  std::string path = dir.write(name, "#!/bin/sh\n" + body);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

ExecPlugin plugin(const std::string& command) {
  ExecPlugin p;
  p.api_version = kV1;
  p.command = command;
  p.user = "users[dev] (kubeconfig /k)";
  return p;
}

TEST_CASE("ExecCredential: a token with its expiry, or a certificate and key") {
  auto t = parse_exec_credential(R"({"kind":"ExecCredential","apiVersion":")" + kV1 +
                                     R"(","status":{"token":"tok","expirationTimestamp":"2030-01-02T03:04:05Z"}})",
                                 kV1);
  REQUIRE(t.ok());
  CHECK(t->token == "tok");
  REQUIRE(t->expiry);
  CHECK(rfc3339_seconds(*t->expiry) == "2030-01-02T03:04:05Z");

  auto c = parse_exec_credential(R"({"kind":"ExecCredential","apiVersion":")" + kV1 +
                                     R"(","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}})",
                                 kV1);
  REQUIRE(c.ok());
  CHECK(c->token.empty());
  CHECK(c->client_cert_pem == "CERT");
  CHECK(c->client_key_pem == "KEY");
  CHECK_FALSE(c->expiry);
}

TEST_CASE("ExecCredential: what is wrong, never the output") {
  const std::string head = R"({"kind":"ExecCredential","apiVersion":")" + kV1 + R"(",)";
  struct Case {
    std::string output;
    std::string expected;
  } cases[] = {
      {"token: sekret-garbage", "not a JSON object"},
      {R"({"kind":"Secret","apiVersion":")" + kV1 + R"(","status":{"token":"sekret"}})", "kind is not ExecCredential"},
      {R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"sekret"}})",
       "apiVersion client.authentication.k8s.io/v1beta1 is not the kubeconfig's client.authentication.k8s.io/v1"},
      {head + R"("spec":{}})", "no status"},
      {head + R"("status":{}})", "neither a token nor clientCertificateData and clientKeyData"},
      {head + R"("status":{"token":7}})", "status.token is not a string"},
      {head + R"("status":{"clientCertificateData":"sekret"}})", "clientCertificateData without status.clientKeyData"},
      {head + R"("status":{"token":"sekret","expirationTimestamp":"tomorrow"}})",
       "status.expirationTimestamp is not RFC 3339"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.expected);
    auto r = parse_exec_credential(c.output, kV1);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(c.expected) != std::string::npos);
    CHECK(r.error().message.find("sekret") == std::string::npos);
  }
}

TEST_CASE("exec plugin: a real script gets its args, env and KUBERNETES_EXEC_INFO") {
  TempTree dir;
  // Echoes what it was given back as the token, so the test sees the plugin's view.
  std::string path = script(dir, "plugin",
                            "case \"$KUBERNETES_EXEC_INFO\" in\n"
                            "  *'\"server\":\"https://10.0.0.1:6443\"'*'\"interactive\":false'*) info=ok ;;\n"
                            "  *) info=bad ;;\n"
                            "esac\n"
                            "read stdin_line || stdin=closed\n"
                            "printf '{\"kind\":\"ExecCredential\",\"apiVersion\":\"%s\",\"status\":{\"token\":\"%s-%s-"
                            "%s-%s\"}}' client.authentication.k8s.io/v1 \"$1\" \"$PLUGIN_PROFILE\" \"$info\" "
                            "\"$stdin\"\n");
  ExecPlugin p = plugin(path);
  p.args = {"arg1"};
  p.env = {{"PLUGIN_PROFILE", "ml"}};
  p.provide_cluster_info = true;
  auto r = run_exec_plugin(p, ExecCluster{"https://10.0.0.1:6443", "CA PEM"});
  REQUIRE(r.ok());
  CHECK(r->token == "arg1-ml-ok-closed");

  std::string info = exec_info_json(p, ExecCluster{"https://10.0.0.1:6443", "CA PEM"});
  CHECK(info.find(R"("certificate-authority-data":"Q0EgUEVN")") != std::string::npos);  // base64("CA PEM")
  p.provide_cluster_info = false;
  CHECK(exec_info_json(p, {}) ==
        R"({"apiVersion":")" + kV1 + R"(","kind":"ExecCredential","spec":{"interactive":false}})");
}

TEST_CASE("exec plugin: failures are one line naming the user and command, with stderr's first line") {
  TempTree dir;
  ExecCluster cluster{"https://10.0.0.1:6443", ""};
  struct Case {
    std::string body;
    std::string expected;
  } cases[] = {
      {"echo 'error: no credentials for profile ml' >&2\necho 'second line' >&2\nexit 4\n",
       "exit status 4: error: no credentials for profile ml"},
      {"echo 'sekret-token-in-garbage'\n", "output is not an ExecCredential: not a JSON object"},
      {"echo 'warning: slow' >&2\necho '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/"
       "v1\"}'\n",
       "output is not an ExecCredential: no status: warning: slow"},
      {"kill -TERM $$\n", "killed by signal 15"},
  };
  int i = 0;
  for (const Case& c : cases) {
    CAPTURE(c.expected);
    std::string path = script(dir, "plugin" + std::to_string(i++), c.body);
    auto r = run_exec_plugin(plugin(path), cluster);
    REQUIRE_FALSE(r.ok());
    const std::string& m = r.error().message;
    CHECK(m.find("users[dev] (kubeconfig /k) exec plugin \"" + path + "\": ") == 0);
    CHECK(m.find(c.expected) != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
    CHECK(m.find("sekret") == std::string::npos);
    CHECK(m.find("second line") == std::string::npos);
  }
}

TEST_CASE("exec plugin: one that hangs is killed at its timeout") {
  TempTree dir;
  std::string path = script(dir, "slow", "echo 'waiting for a browser login' >&2\nexec sleep 60\n");
  ExecPlugin p = plugin(path);
  p.timeout = std::chrono::milliseconds(300);
  auto r = run_exec_plugin(p, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("killed after 300ms without finishing: waiting for a browser login") !=
        std::string::npos);
}

TEST_CASE("exec plugin: one that leaves a process holding its output is read once it exits") {
  TempTree dir;
  // A daemon started by the plugin keeps stdout and stderr open well past the plugin's exit.
  std::string path = script(dir, "daemonizing",
                            "sleep 20 &\n"
                            "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
                            "\"status\":{\"token\":\"tok\"}}'\n");
  ExecPlugin p = plugin(path);
  p.timeout = std::chrono::seconds(10);
  auto r = run_exec_plugin(p, {});
  REQUIRE(r.ok());  // not "killed after 10s"
  CHECK(r->token == "tok");
}

TEST_CASE("exec plugin: a command not found shows the installHint") {
  ExecPlugin p = plugin("gke-gcloud-auth-plugin-not-installed-here");
  p.install_hint = "Install gke-gcloud-auth-plugin for use with kubectl by following\nhttps://cloud.google.com/...";
  auto r = run_exec_plugin(p, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "users[dev] (kubeconfig /k) exec plugin \"gke-gcloud-auth-plugin-not-installed-here\": not found: Install "
        "gke-gcloud-auth-plugin for use with kubectl by following");
}

}  // namespace
}  // namespace iogate
