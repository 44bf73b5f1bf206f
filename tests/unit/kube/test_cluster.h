// The test API server (tests/apiserver) in-process, over real TLS, with a KubeConfig pointing at
// it, for the Kubernetes client's end-to-end tests. One throwaway PKI per test binary, made by
// tests/apiserver/make_certs.sh (APISERVER_MAKE_CERTS names it under ctest).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/text_file.h"
#include "kube/api_client.h"
#include "source_tree.h"
#include "test_apiserver.h"

namespace iogate::testing {

inline std::string make_pki(const std::string& name) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("APISERVER_MAKE_CERTS");
  std::string script = env ? env : source_path("tests/apiserver/make_certs.sh").string();
  fs::path dir = fs::temp_directory_path() / ("iogate-kube-test-" + std::to_string(getpid())) / name;
  if (!fs::exists(dir / "ca.crt")) {
    REQUIRE(std::system(("bash '" + script + "' '" + dir.string() + "'").c_str()) == 0);
  }
  return dir.string();
}

inline const std::string& cert_dir() {
  static const std::string dir = [] {
    std::string d = make_pki("pki");
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(
          std::filesystem::temp_directory_path() / ("iogate-kube-test-" + std::to_string(getpid())), ec);
    });
    return d;
  }();
  return dir;
}

inline std::string pki_file(const std::string& dir, const std::string& name) {
  auto text = read_text_file(dir + "/" + name);
  REQUIRE(text.ok());
  return *text;
}

inline constexpr const char* kClusterToken = "kube-client-test-token";

// Short backoff so retried tests take milliseconds, not seconds.
inline RetryPolicy fast_retry() {
  RetryPolicy p;
  p.initial_backoff = std::chrono::milliseconds(20);
  p.max_backoff = std::chrono::milliseconds(50);
  p.request_timeout = std::chrono::milliseconds(3000);
  return p;
}

struct TestCluster {
  std::unique_ptr<apiserver::TestApiServer> server;
  KubeConfig config;  // bearer token, the test CA

  TestCluster() {
    auto started = apiserver::TestApiServer::start({cert_dir(), kClusterToken, 0});
    REQUIRE(started.ok());
    server = std::move(started.value());
    config.server = server->url();
    config.ca_pem = pki_file(cert_dir(), "ca.crt");
    config.token = kClusterToken;
    config.description = "test cluster";
  }

  void seed(const nlohmann::json& object) {
    auto r = server->seed(object);
    REQUIRE(r.ok());
  }
  nlohmann::json stored(const std::string& resource, const std::string& ns, const std::string& name) const {
    auto o = server->object(resource, ns, name);
    REQUIRE(o.has_value());
    return *o;
  }
  // "METHOD path status" of every request the server saw, for checking exact exchanges.
  std::vector<std::string> exchanges() const {
    std::vector<std::string> out;
    for (const auto& r : server->requests()) out.push_back(r.method + " " + r.path + " " + std::to_string(r.status));
    return out;
  }
};

// The real HTTPS transport with a hook that sees each request first and may answer it itself or
// act (as a concurrent writer would) before it goes out.
class HookedTransport : public Transport {
 public:
  using Hook = std::function<std::optional<TransportResult>(const HttpRequest&)>;
  HookedTransport(std::unique_ptr<Transport> inner, Hook hook) : inner_(std::move(inner)), hook_(std::move(hook)) {}
  TransportResult send(const HttpRequest& request, std::chrono::milliseconds timeout) override {
    if (auto answered = hook_(request)) return *answered;
    return inner_->send(request, timeout);
  }

 private:
  std::unique_ptr<Transport> inner_;
  Hook hook_;
};

inline std::unique_ptr<ApiClient> hooked_client(const KubeConfig& config, HookedTransport::Hook hook,
                                                RetryPolicy retry = fast_retry()) {
  auto transport = make_https_transport(config);
  REQUIRE(transport.ok());
  return std::make_unique<ApiClient>(
      config, retry, std::make_unique<HookedTransport>(std::move(*transport), std::move(hook)), ClientClock::real(), 1);
}

}  // namespace iogate::testing
