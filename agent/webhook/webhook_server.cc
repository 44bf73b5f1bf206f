#include "webhook/webhook_server.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <malloc.h>
#include <signal.h>
#include <strings.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/trim.h"
#include "http/bounded_stream.h"
#include "http/pooled_server.h"
#include "webhook/json_footprint.h"

namespace iogate {
namespace {

constexpr const char* kText = "text/plain; charset=utf-8";
// After a review this large, what it freed goes back to the kernel (malloc_trim): the heap it
// leaves full of holes would otherwise be held beside the next reviews' buffers (64 reviews of a
// long string after 64 of many short ones: 90 MiB without, 58 MiB with).
constexpr size_t kTrimAfter = 1 << 20;

// TLS 1.2 suites: ECDHE with AEAD only (Mozilla's "intermediate"; all of them are in Go's
// defaults, so the API server finds one). TLS 1.3 suites are OpenSSL's defaults, all AEAD.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// SSL_CTX_set_cert_cb: runs in every handshake after the ClientHello and before the cipher is
// chosen, so the SSL_CTX itself holds no certificate and each connection gets the pair current at
// its start. SSL_use_cert_and_key takes references of its own: a reload may drop the pair while
// this connection still uses it.
int install_current_pair(SSL* ssl, void* arg) {
  std::shared_ptr<const ServingCertificate> pair = static_cast<CertificateReloader*>(arg)->current();
  if (!pair) return 0;
  if (SSL_use_cert_and_key(ssl, pair->leaf.get(), pair->key.get(), pair->chain.get(), 1) != 1) {
    ERR_clear_error();
    return 0;  // the handshake ends with an internal_error alert
  }
  return 1;
}

// "application/json", any case, with or without parameters ("; charset=utf-8").
bool is_json(const std::string& content_type) {
  std::string media(trim_space(std::string_view(content_type).substr(0, content_type.find(';'))));
  return strcasecmp(media.c_str(), "application/json") == 0;
}

}  // namespace

Result<std::unique_ptr<WebhookServer>> WebhookServer::start(const std::string& listen,
                                                            std::shared_ptr<CertificateReloader> certificates,
                                                            WebhookHandlers handlers, WebhookServerOptions options) {
  if (auto address = parse_listen_address(listen); !address.ok()) return address.error();
  if (!certificates || !certificates->snapshot()) return runtime_error("webhook: no serving certificate loaded");
  if (!handlers.mutate || !handlers.validate) {
    return runtime_error("webhook: a handler for /mutate or /validate is missing");
  }

  // OpenSSL writes to the socket with write(2), not send(MSG_NOSIGNAL): a client that hangs up
  // mid-answer must not end the process.
  ::signal(SIGPIPE, SIG_IGN);
  // One malloc arena for all threads. glibc gives threads arenas of their own (up to 8 per core)
  // and keeps what is freed in each for that arena's threads: a review parsed on one worker and the
  // next on another held the memory of both, and the budgets below bounded what was in use, not
  // what was held (64 reviews of 3 MiB at once: 728 MiB with arenas, 64 MiB with one). Admission
  // requests are few; the lock they share costs nothing measurable.
  mallopt(M_ARENA_MAX, 1);

  std::unique_ptr<WebhookServer> s(new WebhookServer());
  s->certificates_ = std::move(certificates);
  CertificateReloader* reloader = s->certificates_.get();
  // Each of the two budgets a request may wait for gets half the read timeout.
  const auto budget_wait = std::chrono::duration_cast<std::chrono::milliseconds>(options.read_timeout) / 2;
  HttpServing serving{options.read_timeout, options.keep_alive_timeout, options.max_workers, options.max_waiting};
  serving.requests.max_body_bytes = options.max_body_bytes;
  serving.requests.body_bytes_in_flight = options.body_bytes_in_flight;
  serving.requests.body_wait = budget_wait;
  s->reviews_ = std::make_unique<ByteBudget>(options.review_bytes_in_flight);
  ByteBudget& reviews = *s->reviews_;
  auto pooled = std::make_unique<PooledSslServer>(serving, [reloader](SSL_CTX& ctx) {
    SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION) != 1) return false;
    if (SSL_CTX_set_cipher_list(&ctx, kTls12Ciphers) != 1) return false;
    SSL_CTX_set_cert_cb(&ctx, install_current_pair, reloader);
    return true;
  });
  PooledSslServer& server = *pooled;
  if (!server.is_valid()) {
    ERR_clear_error();
    return runtime_error("webhook: cannot set up the TLS context");
  }

  // Only what a webhook is asked, and nothing read that is not needed to answer.
  size_t max_body = options.max_body_bytes;
  server.set_pre_routing_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    if (req.method != "GET" && req.method != "HEAD" && req.method != "POST") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD, POST");
      res.set_content("method not allowed\n", kText);
      close_after_answer(res);  // any body it sent is not read
      return httplib::Server::HandlerResponse::Handled;
    }
    // cpp-httplib reads "-5" as 2^64 - 5 and "1e20" as 1 (strtoull), then waits for that body.
    if (int status = request_framing_status(req, max_body)) {
      res.status = status;
      if (status == 400) res.set_content("malformed Content-Length or Transfer-Encoding\n", kText);
      if (status == 501) res.set_content("only the chunked Transfer-Encoding is understood\n", kText);
      close_after_answer(res);  // 413 included: its body is not read
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method == "POST" && !req.has_header("Content-Length")) {
      res.status = 411;
      res.set_content("a POST needs a Content-Length\n", kText);
      // Chunked: its body is not read. Neither header: there is no body (RFC 9112).
      if (req.has_header("Transfer-Encoding")) close_after_answer(res);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method == "POST" && !is_json(req.get_header_value("Content-Type"))) {
      res.status = 415;
      res.set_content("Content-Type must be application/json\n", kText);
      close_after_answer(res);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // By the time a route reads a body, it is known to be JSON of a length within max_body, and its
  // room in the budget of body bytes is taken at its first byte (http/bounded_stream.h).
  auto route = [&](const char* pattern, std::function<HttpAnswer(const std::string&)> handler) {
    server.Post(pattern, [handler = std::move(handler), max_body, &reviews, budget_wait](
                             const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
      if (!handler) {  // read and dropped, then 404
        if (read([](const char*, size_t) { return true; })) res.status = 404;
        return;
      }
      std::string body;
      bool read_ok = read([&](const char* data, size_t n) {
        if (body.empty()) body.reserve(body_allowance(req, max_body));
        body.append(data, n);
        return true;
      });
      if (!read_ok) {  // cut short; cpp-httplib has set 400
        if (res.status < 400) res.status = 400;
        return;
      }
      size_t cost = json_footprint(body);
      if (cost > reviews.capacity()) {
        res.status = 413;
        res.set_content(fmt::format("this JSON would take {} MiB parsed, more than the {} MiB reviews may take\n",
                                    cost >> 20, reviews.capacity() >> 20),
                        kText);
        return;
      }
      ByteBudget::Lease room = reviews.acquire(cost, budget_wait);
      if (!room.held()) {
        res.status = 503;
        res.set_header("Retry-After", std::to_string(kBusyRetryAfterSeconds));
        res.set_content("busy: other reviews take the memory this one needs; retry\n", kText);
        return;
      }
      HttpAnswer a = handler(body);
      room.reset();
      if (cost >= kTrimAfter) malloc_trim(0);
      res.status = a.status;
      res.set_content(a.body, a.content_type.c_str());
    });
  };
  route("/mutate", std::move(handlers.mutate));
  route("/validate", std::move(handlers.validate));
  route(".*", nullptr);
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", kText); });
  if (handlers.node_cache_state) {
    server.Get("/debug/node-cache",
               [state = std::move(handlers.node_cache_state)](const httplib::Request&, httplib::Response& res) {
                 res.set_content(state(), "application/json");
               });
  }

  // The overload whose answer says whether it wrote a body; the plain one is ambiguous with a lambda.
  using ErrorHandler = httplib::Server::HandlerWithResponse;
  server.set_error_handler(ErrorHandler([max_body](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 404) {
      res.set_content("not found; iogate webhook: POST /mutate, POST /validate, GET /healthz, GET /debug/node-cache\n",
                      kText);
    } else if (res.status == 413) {
      res.set_content(fmt::format("request body over {} bytes\n", max_body), kText);
    } else {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
  // Without this cpp-httplib puts the exception's text in a response header.
  server.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("webhook: {} {} failed: {}", req.method, req.path, what);
    res.status = 500;
    res.set_content("internal error\n", kText);
  });
  server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    spdlog::debug("webhook: {} {} {} from {}", req.method, req.path, res.status, req.remote_addr);
  });

  auto listener = HttpListener::start(listen, std::move(pooled));
  if (!listener.ok()) return listener.error();
  s->listener_ = std::move(*listener);
  return s;
}

}  // namespace iogate
