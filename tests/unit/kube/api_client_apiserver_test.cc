// The client's transport and retries against the test API server over real TLS, with the faults a
// cluster produces: 429 from priority-and-fairness, 500s, dropped connections, slow answers, token
// rotation, an untrusted server certificate, client-certificate authentication.
#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "kube/operations.h"
#include "service_account_dir.h"
#include "test_cluster.h"

namespace iogate {
namespace {

using nlohmann::json;
using testing::TestCluster;

json node() { return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}}; }

apiserver::Fault fault(apiserver::FaultKind kind, int count) {
  apiserver::Fault f;
  f.method = "GET";
  f.path_regex = "/api/v1/nodes/n1";
  f.kind = kind;
  f.count = count;
  return f;
}

std::vector<std::string> faults_seen(const TestCluster& c) {
  std::vector<std::string> out;
  for (const auto& r : c.server->requests()) out.push_back(r.fault.empty() ? std::to_string(r.status) : r.fault);
  return out;
}

TEST_CASE("retry: 429 with a plain-text body and Retry-After, then success") {
  TestCluster c;
  c.seed(node());
  auto f = fault(apiserver::FaultKind::kTooManyRequests, 1);
  f.retry_after_s = 1;
  c.server->add_fault(f);
  ApiClient api(c.config, testing::fast_retry());
  auto started = std::chrono::steady_clock::now();
  REQUIRE(get_node(api, "n1").ok());
  CHECK(faults_seen(c) == std::vector<std::string>{"429", "200"});
  CHECK(api.stats().retries == 1);
  // Retry-After (1 s) was honoured instead of the 20-50 ms backoff: a lower bound only.
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(990));
}

TEST_CASE("retry: 500s then success") {
  TestCluster c;
  c.seed(node());
  c.server->add_fault(fault(apiserver::FaultKind::kInternalError, 3));
  ApiClient api(c.config, testing::fast_retry());
  REQUIRE(get_node(api, "n1").ok());
  CHECK(faults_seen(c) == std::vector<std::string>{"500", "500", "500", "200"});
  CHECK(api.stats().retries == 3);
}

TEST_CASE("retry: a dropped connection, then success") {
  TestCluster c;
  c.seed(node());
  ApiClient api(c.config, testing::fast_retry());
  REQUIRE(get_node(api, "n1").ok());  // a kept-alive connection exists now
  c.server->add_fault(fault(apiserver::FaultKind::kDrop, 2));
  c.server->clear_requests();
  REQUIRE(get_node(api, "n1").ok());
  CHECK(faults_seen(c) == std::vector<std::string>{"drop", "drop", "200"});
}

TEST_CASE("retry: persistent 500s end with the last Status after max_attempts") {
  TestCluster c;
  c.seed(node());
  c.server->add_fault(fault(apiserver::FaultKind::kInternalError, -1));
  RetryPolicy p = testing::fast_retry();
  p.max_attempts = 3;
  ApiClient api(c.config, p);
  auto r = get_node(api, "n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().http_status == 500);
  CHECK(r.error().summary().find("GET /api/v1/nodes/n1: 500 InternalError") == 0);
  CHECK(r.error().summary().find("gave up after 3 attempts") != std::string::npos);
  CHECK(c.server->requests().size() == 3);
}

TEST_CASE("deadline: a slow server; the attempt is cut at the deadline and the error names it") {
  TestCluster c;
  c.seed(node());
  auto f = fault(apiserver::FaultKind::kDelay, -1);
  f.delay_ms = 1500;
  c.server->add_fault(f);
  ApiClient api(c.config, testing::fast_retry());  // request_timeout 3 s: the deadline is shorter
  api.set_deadline(std::chrono::steady_clock::now() + std::chrono::milliseconds(300));
  auto r = get_node(api, "n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "DeadlineExceeded");
  CHECK(r.error().summary().find("deadline reached") != std::string::npos);
  CHECK(api.stats().requests == 1);
}

TEST_CASE("token rotation: the server rejects the old token, the ..data swap is read after one 401") {
  TestCluster c;
  c.seed(node());
  testing::TempTree dir;
  testing::ServiceAccountDir sa(dir);
  sa.publish(testing::kClusterToken, c.config.ca_pem, "default");
  KubeEnvironment env;
  env.service_host = "127.0.0.1";
  env.service_port = std::to_string(c.server->port());
  env.service_account_dir = dir.root.string();
  auto config = load_in_cluster_config(env);
  REQUIRE(config.ok());
  ApiClient api(*config, testing::fast_retry());
  REQUIRE(get_node(api, "n1").ok());

  c.server->set_token("rotated-token");
  sa.publish("rotated-token", c.config.ca_pem, "default");
  c.server->clear_requests();
  REQUIRE(get_node(api, "n1").ok());
  CHECK(faults_seen(c) == std::vector<std::string>{"401", "200"});
  CHECK(api.stats().token_reloads == 1);
  CHECK(api.stats().retries == 0);
}

TEST_CASE("TLS: a server certificate from another CA fails at once, with a clear message") {
  TestCluster c;
  c.seed(node());
  KubeConfig wrong = c.config;
  wrong.ca_pem = testing::pki_file(testing::make_pki("other-ca"), "ca.crt");
  ApiClient api(wrong, testing::fast_retry());
  REQUIRE(api.ready().ok());
  auto r = get_node(api, "n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "TLSVerification");
  CHECK(r.error().summary().find("not verified against the configured CA") != std::string::npos);
  CHECK(api.stats().requests == 1);  // no retry storm
  CHECK(c.server->requests().empty());
}

TEST_CASE("TLS: the host name is checked (localhost is in the certificate, the CA is enough otherwise)") {
  TestCluster c;
  c.seed(node());
  KubeConfig by_name = c.config;
  by_name.server = "https://localhost:" + std::to_string(c.server->port());
  ApiClient api(by_name, testing::fast_retry());
  CHECK(get_node(api, "n1").ok());
}

TEST_CASE("TLS: system CAs are not trusted in place of the configured one") {
  TestCluster c;
  KubeConfig config = c.config;
  // A CA bundle that parses but is not the server's: the test CA of another PKI plus, if the
  // machine has them, the system's roots. Neither vouches for the test server.
  config.ca_pem = testing::pki_file(testing::make_pki("other-ca"), "ca.crt");
  if (auto system = read_text_file("/etc/ssl/certs/ca-certificates.crt"); system.ok()) config.ca_pem += *system;
  ApiClient api(config, testing::fast_retry());
  auto r = get_node(api, "n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "TLSVerification");
}

TEST_CASE("kubeconfig with a client certificate authenticates over mutual TLS") {
  TestCluster c;
  c.seed(node());
  testing::TempTree dir;
  const std::string& pki = testing::cert_dir();
  dir.write("pki/ca.crt", testing::pki_file(pki, "ca.crt"));
  dir.write("pki/client.crt", testing::pki_file(pki, "client.crt"));
  dir.write("pki/client.key", testing::pki_file(pki, "client.key"));
  std::string path = dir.write("kubeconfig",
                               "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                               "clusters:\n- name: test\n  cluster:\n    server: " +
                                   c.server->url() +
                                   "\n    certificate-authority: pki/ca.crt\n"
                                   "contexts:\n- name: test\n  context: {cluster: test, user: admin}\n"
                                   "users:\n- name: admin\n  user:\n"
                                   "    client-certificate: pki/client.crt\n    client-key: pki/client.key\n");
  auto config = load_kubeconfig(path);
  REQUIRE(config.ok());
  ApiClient api(*config, testing::fast_retry());
  REQUIRE(api.ready().ok());
  REQUIRE(get_node(api, "n1").ok());
  REQUIRE(patch_node_labels(api, "n1", {{"iogate.io/tier", "fast"}}).ok());
  auto log = c.server->requests();
  REQUIRE(log.size() == 2);
  CHECK(log[0].auth == "x509 CN=iogate-test");

  // The wrong key for the certificate is refused when the client is made.
  KubeConfig mismatched = *config;
  mismatched.client_key_pem = testing::pki_file(pki, "server.key");
  ApiClient bad(mismatched);
  REQUIRE_FALSE(bad.ready().ok());
  CHECK(bad.ready().error().message.find("does not match") != std::string::npos);
}

TEST_CASE("client setup: bad server URLs and PEMs are refused when the client is made") {
  KubeConfig base;
  base.ca_pem = testing::pki_file(testing::cert_dir(), "ca.crt");
  base.token = "t";
  struct Case {
    std::string server, expected;
  } cases[] = {
      {"http://127.0.0.1:6443", "not https://"},
      {"https://", "no host"},
      {"https://127.0.0.1:99999", "bad port"},
      {"https://[::1", "unclosed ["},
  };
  for (const Case& c : cases) {
    CAPTURE(c.server);
    KubeConfig config = base;
    config.server = c.server;
    ApiClient api(config);
    REQUIRE_FALSE(api.ready().ok());
    CHECK(api.ready().error().message.find(c.expected) != std::string::npos);
  }
  for (const char* ok : {"https://10.96.0.1", "https://[fd00::1]:443", "https://rancher.example/k8s/clusters/c-1/"}) {
    KubeConfig config = base;
    config.server = ok;
    CHECK(ApiClient(config).ready().ok());
  }
  KubeConfig bad_key = base;
  bad_key.server = "https://127.0.0.1:6443";
  bad_key.client_cert_pem = testing::pki_file(testing::cert_dir(), "client.crt");
  bad_key.client_key_pem = "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n";
  ApiClient api(bad_key);
  REQUIRE_FALSE(api.ready().ok());
  CHECK(api.ready().error().message.find("client key") != std::string::npos);
}

TEST_CASE("logs: each request at debug, retries at warn, never the token") {
  TestCluster c;
  c.seed(node());
  c.server->add_fault(fault(apiserver::FaultKind::kInternalError, 1));
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  logger->set_level(spdlog::level::debug);
  spdlog::set_default_logger(logger);
  {
    ApiClient api(c.config, testing::fast_retry());
    CHECK(get_node(api, "n1").ok());
    c.server->set_token("another");
    CHECK_FALSE(get_node(api, "n1").ok());
  }
  spdlog::set_default_logger(previous);
  std::string text = out.str();
  CHECK(text.find("kube: GET /api/v1/nodes/n1 200") != std::string::npos);
  CHECK(text.find("500 InternalError") != std::string::npos);
  CHECK(text.find("retry 1 of") != std::string::npos);
  CHECK(text.find("kube: GET /api/v1/nodes/n1 401") != std::string::npos);
  CHECK(text.find(testing::kClusterToken) == std::string::npos);
  CHECK(text.find("Bearer") == std::string::npos);
}

}  // namespace
}  // namespace iogate
