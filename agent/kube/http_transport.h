// One HTTPS exchange with the API server, no retries, no interpretation of the answer: the
// seam between the client's retry logic (api_client.cc) and the TLS library (https_transport.cc,
// the client's only user of cpp-httplib; the servers in http/ use it too). Tests substitute a
// scripted Transport.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <variant>

#include "base/result.h"
#include "kube/kube_config.h"

namespace iogate {

struct HttpRequest {
  std::string method;        // GET, PATCH, POST
  std::string path;          // "/api/v1/nodes/n1" (the server's path prefix is the transport's)
  std::string content_type;  // for PATCH and POST
  std::string body;
  std::string bearer_token;  // "" for none; the transport puts it in Authorization, never in a log
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After header, "" when absent
};

// Why an exchange got no HTTP answer, and so whether ApiClient tries again. Transient: the server
// or the path to it may be back on the next try (refused, reset, closed, stalled). Permanent: the
// next try would meet the same refusal, so retrying would only load the server (no retry storm).
enum class TransportFailure {
  kConnect,          // transient: refused, unreachable, name not resolved
  kTimeout,          // transient: no progress within the attempt's timeout while connecting, in the
                     // TLS handshake, sending the request or waiting for the answer (a stalled server)
  kConnectionLost,   // transient: reset or closed by the peer, during the handshake or the exchange
  kTlsHandshake,     // permanent: the peer refused TLS with an alert or a protocol error (client
                     // certificate refused, no shared version or cipher, not TLS at all)
  kTlsVerification,  // permanent: the server's certificate does not chain to the CA or name the host
};

struct TransportError {
  TransportFailure failure = TransportFailure::kConnect;
  std::string message;  // one line, e.g. "certificate verify failed: unable to get local issuer certificate"
};

using TransportResult = std::variant<HttpResponse, TransportError>;

class Transport {
 public:
  virtual ~Transport() = default;
  // `timeout` bounds each wait of this exchange: connecting, each step of the TLS handshake, each
  // write and each read.
  virtual TransportResult send(const HttpRequest& request, std::chrono::milliseconds timeout) = 0;
};

// TLS to config.server, verified against config.ca_pem only (not the system's CAs), host name or
// IP checked; client certificate from memory when the config has one. Keeps the connection alive
// between requests. Errors: an unparseable server URL, CA, certificate or key, or a key that does
// not match its certificate.
Result<std::unique_ptr<Transport>> make_https_transport(const KubeConfig& config);

}  // namespace iogate
