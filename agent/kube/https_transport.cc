// The one file that includes cpp-httplib: TLS to the API server with the CA, client certificate
// and key taken from memory (a scratch container has no files to point OpenSSL at).
//
// Verification is ours, not the library's defaults: cpp-httplib loads the system's CA paths into
// the SSL_CTX when it is given no CA file, which would let any public CA vouch for "the API
// server". A certificate-verify callback instead checks the chain against a store holding only the
// configured CA, and the host name or IP through OpenSSL's own matcher (X509_VERIFY_PARAM), before
// cpp-httplib's host check runs as well.
//
// cpp-httplib reports a failed handshake as one error (SSLConnection) whatever the cause, and a
// failed read the same whether it timed out, was reset or met a TLS alert. OpenSSL's error queue
// and the clock tell them apart (tls_cause, describe_failure): a TLS-level reason is the peer
// refusing us (permanent), none or an unexpected EOF is the connection failing (transient), and a
// wait as long as the timeout is a stall (transient).
#include <httplib.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

#include <charconv>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/openssl_objects.h"
#include "kube/http_transport.h"

namespace iogate {
namespace {

struct ServerAddress {
  std::string host;  // without brackets for IPv6
  int port = 443;
  std::string path_prefix;  // "" or "/k8s/clusters/c-1" (no trailing slash)
};

Result<ServerAddress> parse_server(const std::string& server) {
  const std::string scheme = "https://";
  if (server.rfind(scheme, 0) != 0) return usage_error(fmt::format("kube server \"{}\": not https://", server));
  std::string rest = server.substr(scheme.size());
  size_t slash = rest.find('/');
  ServerAddress a;
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) {
    a.path_prefix = rest.substr(slash);
    while (!a.path_prefix.empty() && a.path_prefix.back() == '/') a.path_prefix.pop_back();
  }
  std::string port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return usage_error(fmt::format("kube server \"{}\": unclosed [", server));
    a.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return usage_error(fmt::format("kube server \"{}\": bad port", server));
      port_text = authority.substr(close + 2);
    }
  } else {
    size_t colon = authority.rfind(':');
    a.host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (a.host.empty()) return usage_error(fmt::format("kube server \"{}\": no host", server));
  if (!port_text.empty()) {
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), a.port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || a.port <= 0 || a.port > 65535) {
      return usage_error(fmt::format("kube server \"{}\": bad port \"{}\"", server, port_text));
    }
  }
  return a;
}

// What the verify callback needs; lives as long as the transport (and so the SSL_CTX).
struct VerifyState {
  X509StorePtr trusted;  // the configured CA only
  std::string host;
  bool host_is_ip = false;
};

// Replaces OpenSSL's chain verification for this SSL_CTX (SSL_CTX_set_cert_verify_callback):
// verify the peer's chain against our store and host; the error lands in the handshake's
// X509_STORE_CTX, which SSL_get_verify_result then reports.
int verify_against_configured_ca(X509_STORE_CTX* handshake, void* arg) {
  auto* state = static_cast<VerifyState*>(arg);
  X509StoreCtxPtr ours(X509_STORE_CTX_new());
  if (!ours || X509_STORE_CTX_init(ours.get(), state->trusted.get(), X509_STORE_CTX_get0_cert(handshake),
                                   X509_STORE_CTX_get0_untrusted(handshake)) != 1) {
    X509_STORE_CTX_set_error(handshake, X509_V_ERR_OUT_OF_MEM);
    return 0;
  }
  X509_STORE_CTX_set_default(ours.get(), "ssl_server");
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ours.get());
  if (state->host_is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, state->host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, state->host.c_str(), state->host.size());
  }
  int ok = X509_verify_cert(ours.get());
  X509_STORE_CTX_set_error(handshake, ok == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ours.get()));
  return ok == 1 ? 1 : 0;
}

// What OpenSSL's error queue says about a failed exchange; reading it empties it.
enum class TlsCause {
  kNone,        // no TLS-level reason: a socket error or reset, or a wait that timed out
  kPeerClosed,  // the peer closed the connection without a TLS alert
  kRefused,     // a TLS alert from the peer or a protocol error: the next try would meet it too
};
struct TlsReason {
  TlsCause cause = TlsCause::kNone;
  std::string text;  // OpenSSL's reason for kRefused, e.g. "tlsv13 alert certificate required"
};

TlsReason tls_cause() {
  TlsReason r;
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    const bool ssl = ERR_GET_LIB(e) == ERR_LIB_SSL;
    // cpp-httplib calls SSL_shutdown on every failed handshake: its complaint is not the cause.
    if (ssl && ERR_GET_REASON(e) == SSL_R_SHUTDOWN_WHILE_IN_INIT) continue;
    if (r.cause != TlsCause::kNone) continue;  // the first reason is the cause, later ones follow from it
    // OpenSSL 3 reports an EOF without close_notify as an SSL error (1.1 left the queue empty).
    if (ERR_GET_LIB(e) == ERR_LIB_SYS || (ssl && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
      r.cause = TlsCause::kPeerClosed;
      continue;
    }
    r.cause = TlsCause::kRefused;
    const char* reason = ERR_reason_error_string(e);
    r.text = reason ? reason : fmt::format("OpenSSL error {:#x}", e);
  }
  return r;
}

// Classes a failure as http_transport.h's TransportFailure documents; empties this thread's
// OpenSSL error queue. `elapsed` is the whole exchange: a wait that timed out makes it at least
// `timeout`.
TransportError describe_failure(const ServerAddress& address, const httplib::SSLClient& client, httplib::Error error,
                                std::chrono::steady_clock::duration elapsed, std::chrono::milliseconds timeout) {
  std::string where = fmt::format("{}:{}", address.host, address.port);
  const TlsReason tls = tls_cause();
  const bool timed_out = elapsed >= timeout;
  switch (error) {
    case httplib::Error::Connection: return {TransportFailure::kConnect, "cannot connect to " + where};
    case httplib::Error::ConnectionTimeout:
      return {TransportFailure::kTimeout,
              fmt::format("connecting to {} timed out after {} ms", where, timeout.count())};
    case httplib::Error::SSLConnection:
      if (tls.cause == TlsCause::kRefused) {
        return {TransportFailure::kTlsHandshake, fmt::format("TLS handshake with {} failed: {}", where, tls.text)};
      }
      // A server that accepts TCP but does not answer (stopped, overloaded): its kernel
      // completes the connection, the ClientHello waits unread.
      if (timed_out) {
        return {TransportFailure::kTimeout,
                fmt::format("TLS handshake with {} timed out after {} ms", where, timeout.count())};
      }
      return {TransportFailure::kConnectionLost, "connection to " + where + " closed during the TLS handshake"};
    case httplib::Error::SSLLoadingCerts:
      return {TransportFailure::kTlsHandshake,
              "TLS setup failed" + (tls.text.empty() ? std::string() : ": " + tls.text)};
    case httplib::Error::SSLServerVerification: {
      long code = client.get_openssl_verify_result();
      std::string why = code == X509_V_OK ? "certificate does not name the host" : X509_verify_cert_error_string(code);
      return {TransportFailure::kTlsVerification,
              fmt::format("server certificate of {} not verified against the configured CA: {}", where, why)};
    }
    case httplib::Error::Read:
    case httplib::Error::Write:
      // TLS 1.3 finishes the client's handshake before the server judges its certificate: a
      // refusal arrives as an alert on the first read.
      if (tls.cause == TlsCause::kRefused) {
        return {TransportFailure::kTlsHandshake, fmt::format("TLS alert from {}: {}", where, tls.text)};
      }
      // cpp-httplib reports a read or write that timed out as a failed one; the clock tells them apart.
      if (timed_out && error == httplib::Error::Read) {
        return {TransportFailure::kTimeout, fmt::format("no answer from {} within {} ms", where, timeout.count())};
      }
      if (timed_out) {
        return {TransportFailure::kTimeout,
                fmt::format("sending the request to {} timed out after {} ms", where, timeout.count())};
      }
      return {TransportFailure::kConnectionLost, "connection to " + where + " closed before the answer"};
    default:
      return {TransportFailure::kConnectionLost, "request to " + where + " failed: " + httplib::to_string(error)};
  }
}

// Everything a client of this server is made from: a transport's kept-alive client and each
// stream's own.
struct ClientRecipe {
  ServerAddress address;
  std::shared_ptr<VerifyState> verify;  // outlives every client made: their SSL_CTX points at it
  X509Ptr leaf;                         // the client certificate, when the config has one
  EvpPkeyPtr key;
  std::vector<X509Ptr> chain;  // intermediates after the leaf
};

Result<std::unique_ptr<httplib::SSLClient>> make_client(const ClientRecipe& r) {
  std::unique_ptr<httplib::SSLClient> client;
  if (r.leaf) {
    // The constructor takes its own references (SSL_CTX_use_certificate / _PrivateKey).
    client = std::make_unique<httplib::SSLClient>(r.address.host, r.address.port, r.leaf.get(), r.key.get());
    if (!client->is_valid()) {
      ERR_clear_error();
      return usage_error("kube client certificate: the key does not match the certificate");
    }
    for (const X509Ptr& c : r.chain) SSL_CTX_add1_chain_cert(client->ssl_context(), c.get());
  } else {
    client = std::make_unique<httplib::SSLClient>(r.address.host, r.address.port);
    if (!client->is_valid()) return runtime_error("kube: cannot create a TLS context");
  }
  SSL_CTX_set_min_proto_version(client->ssl_context(), TLS1_2_VERSION);
  SSL_CTX_set_cert_verify_callback(client->ssl_context(), verify_against_configured_ca, r.verify.get());
  client->enable_server_certificate_verification(true);
  client->set_keep_alive(true);
  // cpp-httplib writes a request's headers and its body separately. With Nagle's algorithm on, the
  // body waits for the ACK of the headers, which the server's delayed ACK holds back ~40 ms: every
  // PATCH and POST took 50 ms instead of 5, and the window between reading a Node and writing its
  // taints with that resourceVersion was wide enough for any busy writer to win every time (409
  // on all retries). client-go (Go's net) sets TCP_NODELAY too.
  client->set_tcp_nodelay(true);
  client->set_follow_location(false);
  return client;
}

httplib::Headers request_headers(const HttpRequest& request) {
  httplib::Headers headers = {{"Accept", "application/json"}, {"User-Agent", std::string("iogate/") + IOGATE_VERSION}};
  if (!request.bearer_token.empty()) headers.emplace("Authorization", "Bearer " + request.bearer_token);
  return headers;
}

// How long a stream's connection may carry no bytes before it counts as dead: a backstop only,
// since a watch's reader decides for itself how long a silence it accepts (BodyStream::next).
constexpr std::chrono::minutes kStreamReadBackstop{15};

// One GET on a client of its own, run by a thread that hands the body over as it arrives.
class HttpsBodyStream : public BodyStream {
 public:
  // The exchange's state, shared with the reading thread.
  struct Shared {
    std::mutex mu;
    std::condition_variable changed;
    bool head = false;       // the answer's status line and headers are in
    HttpResponse response;   // status, Retry-After; a non-2xx body
    std::string pending;     // a 2xx body's bytes not yet handed over
    bool done = false;       // the exchange is over (ended or failed)
    bool cancelled = false;  // the owner ended it
    std::optional<TransportError> failure;
  };

  HttpsBodyStream(std::shared_ptr<VerifyState> verify, std::unique_ptr<httplib::SSLClient> client,
                  const ServerAddress& address, const HttpRequest& request, std::chrono::milliseconds timeout)
      : verify_(std::move(verify)), client_(std::move(client)), shared_(std::make_shared<Shared>()) {
    client_->set_connection_timeout(timeout);
    client_->set_write_timeout(timeout);
    client_->set_read_timeout(kStreamReadBackstop);
    reader_ = std::thread([s = shared_, c = client_.get(), address, path = address.path_prefix + request.path,
                           headers = request_headers(request), timeout] {
      ERR_clear_error();
      const auto started = std::chrono::steady_clock::now();
      httplib::Result r = c->Get(
          path, headers,
          [&s](const httplib::Response& response) {
            std::lock_guard<std::mutex> lock(s->mu);
            s->head = true;
            s->response.status = response.status;
            s->response.retry_after = response.get_header_value("Retry-After");
            s->changed.notify_all();
            return !s->cancelled;
          },
          [&s](const char* data, size_t size) {
            std::lock_guard<std::mutex> lock(s->mu);
            if (s->cancelled) return false;
            (s->response.status / 100 == 2 ? s->pending : s->response.body).append(data, size);
            s->changed.notify_all();
            return true;
          });
      std::optional<TransportError> failure;
      if (!r) failure = describe_failure(address, *c, r.error(), std::chrono::steady_clock::now() - started, timeout);
      std::lock_guard<std::mutex> lock(s->mu);
      s->done = true;
      s->failure = std::move(failure);
      s->changed.notify_all();
    });
  }

  ~HttpsBodyStream() override {
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      shared_->cancelled = true;
    }
    client_->stop();  // shuts the socket down: a read blocked on it returns at once
    reader_.join();
  }

  // Waits for the answer's head (a 2xx) or the whole answer (any other), up to `timeout`.
  std::optional<TransportError> await_head(std::chrono::milliseconds timeout, HttpResponse& response) {
    std::unique_lock<std::mutex> lock(shared_->mu);
    const bool answered = shared_->changed.wait_for(
        lock, timeout, [&] { return shared_->done || (shared_->head && shared_->response.status / 100 == 2); });
    if (shared_->head && (shared_->response.status / 100 == 2 || shared_->done)) {
      response = shared_->response;
      return std::nullopt;
    }
    if (answered && shared_->failure) return shared_->failure;
    return TransportError{TransportFailure::kTimeout, fmt::format("no answer within {} ms", timeout.count())};
  }

  Chunk next(std::chrono::milliseconds wait) override {
    std::unique_lock<std::mutex> lock(shared_->mu);
    shared_->changed.wait_for(lock, wait, [&] { return !shared_->pending.empty() || shared_->done; });
    Chunk c;
    if (!shared_->pending.empty()) {
      c.read = Read::kData;
      c.bytes.swap(shared_->pending);
    } else if (shared_->done) {
      c.read = shared_->failure ? Read::kFailed : Read::kEnded;
      if (shared_->failure) c.error = *shared_->failure;
    }
    return c;
  }

 private:
  std::shared_ptr<VerifyState> verify_;  // outlives client_
  std::unique_ptr<httplib::SSLClient> client_;
  std::shared_ptr<Shared> shared_;
  std::thread reader_;
};

class HttpsTransport : public Transport {
 public:
  HttpsTransport(ClientRecipe recipe, std::unique_ptr<httplib::SSLClient> client)
      : recipe_(std::move(recipe)), client_(std::move(client)) {}

  TransportResult send(const HttpRequest& request, std::chrono::milliseconds timeout) override {
    client_->set_connection_timeout(timeout);
    client_->set_read_timeout(timeout);
    client_->set_write_timeout(timeout);
    httplib::Headers headers = request_headers(request);
    std::string path = recipe_.address.path_prefix + request.path;

    ERR_clear_error();  // so that a failure below is not blamed on an older reason
    auto started = std::chrono::steady_clock::now();
    httplib::Result result = [&] {
      if (request.method == "GET") return client_->Get(path.c_str(), headers);
      if (request.method == "PATCH")
        return client_->Patch(path.c_str(), headers, request.body, request.content_type.c_str());
      if (request.method == "POST")
        return client_->Post(path.c_str(), headers, request.body, request.content_type.c_str());
      if (request.method == "DELETE") return client_->Delete(path.c_str(), headers);
      return httplib::Result(nullptr, httplib::Error::Unknown);
    }();
    if (result) {
      HttpResponse response;
      response.status = result->status;
      response.body = std::move(result->body);
      response.retry_after = result->get_header_value("Retry-After");
      return response;
    }
    return describe_failure(recipe_.address, *client_, result.error(), std::chrono::steady_clock::now() - started,
                            timeout);
  }

  StreamResult open_stream(const HttpRequest& request, std::chrono::milliseconds timeout) override {
    auto client = make_client(recipe_);
    if (!client.ok()) return TransportError{TransportFailure::kTlsHandshake, client.error().message};
    auto stream =
        std::make_unique<HttpsBodyStream>(recipe_.verify, std::move(*client), recipe_.address, request, timeout);
    OpenedStream opened;
    if (auto failed = stream->await_head(timeout, opened.response)) return *failed;
    if (opened.response.status / 100 == 2) opened.body = std::move(stream);
    return opened;
  }

 private:
  ClientRecipe recipe_;
  std::unique_ptr<httplib::SSLClient> client_;
};

}  // namespace

StreamResult Transport::open_stream(const HttpRequest&, std::chrono::milliseconds) {
  return TransportError{TransportFailure::kConnect, "this transport cannot stream"};
}

Result<std::unique_ptr<Transport>> make_https_transport(const KubeConfig& config) {
  auto address = parse_server(config.server);
  if (!address.ok()) return address.error();

  ClientRecipe recipe;
  recipe.address = std::move(*address);
  recipe.verify = std::make_shared<VerifyState>();
  VerifyState& verify = *recipe.verify;
  verify.trusted.reset(X509_STORE_new());
  auto cas = read_pem_certificates(config.ca_pem);
  if (!cas.ok()) return usage_error("kube CA: " + cas.error().message);
  for (const X509Ptr& ca : *cas) X509_STORE_add_cert(verify.trusted.get(), ca.get());
  verify.host = recipe.address.host;
  in6_addr ip6;
  in_addr ip4;
  verify.host_is_ip =
      inet_pton(AF_INET6, verify.host.c_str(), &ip6) == 1 || inet_pton(AF_INET, verify.host.c_str(), &ip4) == 1;

  if (!config.client_cert_pem.empty()) {
    auto certs = read_pem_certificates(config.client_cert_pem);
    if (!certs.ok()) return usage_error("kube client certificate: " + certs.error().message);
    auto key = read_pem_private_key(config.client_key_pem);
    if (!key.ok()) return usage_error("kube client key: " + key.error().message);
    recipe.leaf = std::move((*certs)[0]);
    for (size_t i = 1; i < certs->size(); ++i) recipe.chain.push_back(std::move((*certs)[i]));
    recipe.key = std::move(*key);
  }
  auto client = make_client(recipe);
  if (!client.ok()) return client.error();
  return std::unique_ptr<Transport>(std::make_unique<HttpsTransport>(std::move(recipe), std::move(*client)));
}

}  // namespace iogate
