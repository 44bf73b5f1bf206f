// An HTTP request and response as the API logic sees them: no sockets, no TLS, so the Kubernetes
// semantics are testable without a server. The HTTP front (test_apiserver.cc) fills ApiRequest
// from the wire, including what TLS proved about the client, and writes ApiResponse back.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace iogate::apiserver {

struct ApiRequest {
  std::string method;  // "GET", "PATCH", ...
  std::string path;    // decoded, no query
  std::multimap<std::string, std::string> query;
  std::string content_type;
  std::string accept;
  std::string user_agent;
  std::optional<std::string> bearer_token;  // from "Authorization: Bearer ..."; never logged
  bool authorization_present = false;       // an Authorization header of any scheme
  std::string client_cert_user;             // CN of a client certificate the CA verified; else empty
  std::string body;
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  bool drop_connection = false;  // close the socket without answering
};

// One entry of the request log. `auth` is redacted: "Bearer <redacted>", "x509 CN=<user>" or "none".
struct RequestRecord {
  std::string method;
  std::string path;
  std::string query;  // "limit=500&dryRun=All", in the order received
  std::string content_type;
  std::string accept;
  std::string user_agent;
  std::string auth;
  std::string body;
  int status = 0;     // 0 when the connection was dropped
  std::string fault;  // the fault injected ("429", "drop", "write", ...), empty if none; a write
                      // fault that wrote nothing says why: "write: nodes \"x\" not found"
};

nlohmann::json to_json(const RequestRecord& r);

}  // namespace iogate::apiserver
