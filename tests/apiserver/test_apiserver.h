// TestApiServer: a Kubernetes API server for tests, over HTTPS on 127.0.0.1, serving the subset
// iogate uses with the real semantics (see README.md). In-process for doctest, or as the
// iogate-test-apiserver executable for process-based tests. The control methods here are the
// same as the /_test/ HTTP endpoints.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api_handler.h"
#include "base/result.h"

namespace iogate::apiserver {

struct TestApiServerOptions {
  std::string cert_dir;  // ca.crt, server.crt, server.key as make_certs.sh writes them
  std::string token;     // the bearer token that authenticates (clients certs of ca.crt do too)
  int port = 0;          // 0: any free port
};

class TestApiServer {
 public:
  // Binds 127.0.0.1 and serves from a background thread until destroyed or stop()ped.
  static Result<std::unique_ptr<TestApiServer>> start(const TestApiServerOptions& options);
  ~TestApiServer();
  TestApiServer(const TestApiServer&) = delete;
  TestApiServer& operator=(const TestApiServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  void stop();

  // Control (see ApiHandler).
  ApiResult<nlohmann::json> seed(nlohmann::json object) { return handler_.seed(std::move(object)); }
  std::optional<nlohmann::json> object(const std::string& resource, const std::string& ns,
                                       const std::string& name) const {
    return handler_.object(resource, ns, name);
  }
  std::vector<nlohmann::json> objects(const std::string& resource, const std::string& ns) const {
    return handler_.objects(resource, ns);
  }
  void add_fault(Fault fault) { handler_.add_fault(std::move(fault)); }
  void clear_faults() { handler_.clear_faults(); }
  void set_token(std::string token) { handler_.set_token(std::move(token)); }
  std::vector<RequestRecord> requests() const { return handler_.requests(); }
  void clear_requests() { handler_.clear_requests(); }

 private:
  struct Http;  // the cpp-httplib server and its thread, kept out of this header
  explicit TestApiServer(std::string token);

  ApiHandler handler_;
  std::unique_ptr<Http> http_;
  int port_ = 0;
};

}  // namespace iogate::apiserver
