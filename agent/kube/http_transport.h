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

// A 2xx answer's body read as the server sends it (a watch), on a connection of its own.
// Destroying it ends the exchange at once (the connection is shut down, not drained).
class BodyStream {
 public:
  virtual ~BodyStream() = default;

  enum class Read {
    kData,    // `bytes` holds the next bytes of the body
    kIdle,    // nothing arrived within the wait; the exchange goes on
    kEnded,   // the server finished the body
    kFailed,  // the connection failed (`error`); nothing more will come
  };
  struct Chunk {
    Read read = Read::kIdle;
    std::string bytes;
    TransportError error;
  };
  virtual Chunk next(std::chrono::milliseconds wait) = 0;
};

// What opening a stream gives: the answer's status and, for a 2xx, the body's stream; any other
// answer is read whole into `response` (an error Status to interpret like any other).
struct OpenedStream {
  HttpResponse response;
  std::unique_ptr<BodyStream> body;  // set for a 2xx
};
using StreamResult = std::variant<OpenedStream, TransportError>;

class Transport {
 public:
  virtual ~Transport() = default;
  // `timeout` bounds each wait of this exchange: connecting, each step of the TLS handshake, each
  // write and each read.
  virtual TransportResult send(const HttpRequest& request, std::chrono::milliseconds timeout) = 0;
  // A GET whose 2xx body is read as it arrives, on a new connection (the kept-alive one stays free
  // for send()). `timeout` bounds connecting and the wait for the answer's head; then the body may
  // take as long as the server keeps it open. A transport that cannot stream says so (kConnect):
  // its callers fall back to plain reads.
  virtual StreamResult open_stream(const HttpRequest& request, std::chrono::milliseconds timeout);
};

// TLS to config.server, verified against config.ca_pem only (not the system's CAs), host name or
// IP checked; client certificate from memory when the config has one. Keeps the connection alive
// between requests. Errors: an unparseable server URL, CA, certificate or key, or a key that does
// not match its certificate.
Result<std::unique_ptr<Transport>> make_https_transport(const KubeConfig& config);

}  // namespace iogate
