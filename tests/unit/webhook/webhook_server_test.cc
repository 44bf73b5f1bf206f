// The webhook's HTTPS server end to end on 127.0.0.1: cpp-httplib's client for HTTP, OpenSSL's
// own for what the handshake shows (protocol version, the peer certificate), and certificates
// rotated under the running server.
#include <doctest/doctest.h>
#include <httplib.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/unique_fd.h"
#include "http/bounded_stream.h"
#include "http/loopback_sockets.h"
#include "webhook/json_footprint.h"
#include "webhook/tls_files.h"
#include "webhook/webhook_server.h"

using namespace iogate;
using namespace iogate::testing;
using namespace std::chrono_literals;

namespace {

struct SslCtxFree {
  void operator()(SSL_CTX* p) const { SSL_CTX_free(p); }
};
struct SslFree {
  void operator()(SSL* p) const { SSL_free(p); }
};
struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};

// One TLS connection made with OpenSSL directly, verifying the server against `ca_file` and
// 127.0.0.1, so a test sees what a client of the webhook sees.
struct TlsConnection {
  UniqueFd fd;
  std::unique_ptr<SSL_CTX, SslCtxFree> ctx;
  std::unique_ptr<SSL, SslFree> ssl;
  bool ok = false;
  unsigned long error = 0;  // the first OpenSSL error when not ok
  std::string serial, subject, protocol;
  int chain_length = 0;  // certificates the server sent, the leaf included

  TlsConnection(int port, const std::string& ca_file, int max_version = 0) {
    ctx.reset(SSL_CTX_new(TLS_client_method()));
    REQUIRE(SSL_CTX_load_verify_locations(ctx.get(), ca_file.c_str(), nullptr) == 1);
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (max_version) {
      // OpenSSL 3 offers nothing below TLS 1.2 at its default security level: lower it, so a
      // refusal comes from the server and not from this client.
      SSL_CTX_set_security_level(ctx.get(), 0);
      SSL_CTX_set_cipher_list(ctx.get(), "DEFAULT:@SECLEVEL=0");
      SSL_CTX_set_min_proto_version(ctx.get(), 0);
      SSL_CTX_set_max_proto_version(ctx.get(), max_version);
    }
    fd = UniqueFd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    REQUIRE(connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    timeval tv{5, 0};
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssl.reset(SSL_new(ctx.get()));
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), "127.0.0.1");
    SSL_set_fd(ssl.get(), fd.get());
    ERR_clear_error();
    ok = SSL_connect(ssl.get()) == 1;
    if (!ok) {
      error = ERR_get_error();
      ERR_clear_error();
      return;
    }
    protocol = SSL_get_version(ssl.get());
    chain_length = sk_X509_num(SSL_get_peer_cert_chain(ssl.get()));
    std::unique_ptr<X509, X509Free> peer(SSL_get1_peer_certificate(ssl.get()));
    REQUIRE(peer);
    BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(peer.get()), nullptr);
    char* hex = BN_bn2hex(bn);
    serial = hex;
    OPENSSL_free(hex);
    BN_free(bn);
    char name[256];
    X509_NAME_oneline(X509_get_subject_name(peer.get()), name, sizeof name);
    subject = name;
  }

  // `request` as it is written, on this connection; the answer's status line, once the whole
  // answer (headers and Content-Length bytes of body) is read.
  std::string exchange(const std::string& request) {
    REQUIRE(SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())) > 0);
    std::string answer;
    size_t header_end = std::string::npos, length = 0;
    char buf[4096];
    while (header_end == std::string::npos || answer.size() < header_end + 4 + length) {
      int n = SSL_read(ssl.get(), buf, sizeof buf);
      REQUIRE(n > 0);
      answer.append(buf, static_cast<size_t>(n));
      if (header_end == std::string::npos && (header_end = answer.find("\r\n\r\n")) != std::string::npos) {
        size_t at = answer.find("Content-Length: ");
        if (at < header_end) length = std::stoul(answer.substr(at + 16));
      }
    }
    CHECK(answer.size() == header_end + 4 + length);  // nothing more than the one answer
    return answer.substr(0, answer.find("\r\n"));
  }
  std::string healthz() { return exchange("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); }
  // Whether the server has ended the connection (close_notify or EOF) rather than waiting for more.
  bool closed_by_server() {
    char c;
    int n = SSL_read(ssl.get(), &c, 1);
    if (n > 0) return false;
    int e = SSL_get_error(ssl.get(), n);
    return e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno != EAGAIN && errno != EWOULDBLOCK);
  }
};

std::unique_ptr<httplib::SSLClient> client(const WebhookServer& server, const std::string& ca_file) {
  auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", server.port());
  c->set_ca_cert_path(ca_file.c_str());
  c->enable_server_certificate_verification(true);
  c->set_connection_timeout(5s);
  c->set_read_timeout(5s);
  return c;
}

WebhookHandlers echo_handlers() {
  WebhookHandlers h;
  h.mutate = [](const std::string& body) { return HttpAnswer{200, "application/json", body}; };
  h.validate = [](const std::string& body) {
    return HttpAnswer{200, "application/json", "{\"validated\":" + body + "}"};
  };
  return h;
}

std::unique_ptr<WebhookServer> start(std::shared_ptr<CertificateReloader> certs, WebhookServerOptions options = {}) {
  auto s = WebhookServer::start("127.0.0.1:0", std::move(certs), echo_handlers(), options);
  REQUIRE_MESSAGE(s.ok(), s.error().message);
  REQUIRE((*s)->port() > 0);
  CHECK((*s)->address() == "127.0.0.1:" + std::to_string((*s)->port()));
  return std::move(*s);
}

std::shared_ptr<CertificateReloader> loaded(const std::string& cert, const std::string& key,
                                            std::chrono::milliseconds interval = 10s) {
  auto r = std::make_shared<CertificateReloader>(TlsFiles{cert, key}, interval);
  Status s = r->load();
  REQUIRE_MESSAGE(s.ok(), s.error().message);
  return r;
}

}  // namespace

TEST_CASE("webhook server: GET /debug/node-cache answers its handler's JSON, 404 without one") {
  std::string a = pki("a");
  WebhookHandlers h = echo_handlers();
  h.node_cache_state = [] { return std::string(R"({"store":{"nodes":5000}})"); };
  auto s = WebhookServer::start("127.0.0.1:0", loaded(a + "/server.crt", a + "/server.key"), h);
  REQUIRE_MESSAGE(s.ok(), s.error().message);
  auto res = client(**s, a + "/ca.crt")->Get("/debug/node-cache");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->get_header_value("Content-Type") == "application/json");
  CHECK(res->body == R"({"store":{"nodes":5000}})");

  auto plain = start(loaded(a + "/server.crt", a + "/server.key"));
  res = client(*plain, a + "/ca.crt")->Get("/debug/node-cache");
  REQUIRE(res);
  CHECK(res->status == 404);
}

TEST_CASE("webhook server: HTTPS verified against the CA; /healthz, /mutate, /validate") {
  std::string a = pki("a");
  auto server = start(loaded(a + "/server.crt", a + "/server.key"));
  auto c = client(*server, a + "/ca.crt");

  auto res = c->Get("/healthz");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->body == "ok");

  std::string review = R"({"kind":"AdmissionReview","request":{"uid":"1"}})";
  res = c->Post("/mutate", review, "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->body == review);
  CHECK(res->get_header_value("Content-Type") == "application/json");

  res = c->Post("/validate?timeout=10s", review, "application/json; charset=utf-8");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->body == "{\"validated\":" + review + "}");

  res = c->Get("/mutate");
  REQUIRE(res);
  CHECK(res->status == 404);
  res = c->Get("/");
  REQUIRE(res);
  CHECK(res->status == 404);
}

TEST_CASE("webhook server: JSON only, bounded bodies; what is not a webhook call") {
  std::string a = pki("a");
  WebhookServerOptions options;
  options.max_body_bytes = 64 * 1024;
  auto server = start(loaded(a + "/server.crt", a + "/server.key"), options);
  auto c = client(*server, a + "/ca.crt");

  auto res = c->Post("/mutate", "{}", "text/plain");
  REQUIRE(res);
  CHECK(res->status == 415);
  CHECK(res->body == "Content-Type must be application/json\n");
  res = c->Post("/validate", "{}", "application/jsonx");
  REQUIRE(res);
  CHECK(res->status == 415);

  std::string big = "\"" + std::string(64 * 1024, 'x') + "\"";
  res = c->Post("/mutate", big, "application/json");
  REQUIRE(res);
  CHECK(res->status == 413);
  CHECK(res->body.find("over 65536 bytes") != std::string::npos);

  std::string fits = "\"" + std::string(64 * 1024 - 2, 'x') + "\"";
  res = c->Post("/mutate", fits, "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->body == fits);

  SUBCASE("the default limit is the decisions' own, kMaxAdmissionBody") {
    auto server3 = start(loaded(a + "/server.crt", a + "/server.key"));
    auto c3 = client(*server3, a + "/ca.crt");
    res = c3->Post("/mutate", std::string(kMaxAdmissionBody + 1, ' '), "application/json");
    REQUIRE(res);
    CHECK(res->status == 413);
    CHECK(res->body == fmt::format("request body over {} bytes\n", kMaxAdmissionBody));
    res = c3->Post("/mutate", std::string(kMaxAdmissionBody, ' '), "application/json");
    REQUIRE(res);
    CHECK(res->status == 200);
  }
  SUBCASE("chunked bodies: 411 without reading them, and the connection ends") {
    TlsConnection tls(server->port(), a + "/ca.crt");
    REQUIRE(tls.ok);
    CHECK(tls.exchange("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n") == "HTTP/1.1 411 Length Required");
    CHECK(tls.closed_by_server());
  }
  SUBCASE("not JSON: 415 without reading the body, and the connection ends") {
    TlsConnection tls(server->port(), a + "/ca.crt");
    REQUIRE(tls.ok);
    CHECK(tls.exchange("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                       "Content-Length: 60000\r\n\r\n") == "HTTP/1.1 415 Unsupported Media Type");
    CHECK(tls.closed_by_server());
  }
  SUBCASE("a POST with no length, other methods, other paths") {
    TlsConnection tls(server->port(), a + "/ca.crt");
    REQUIRE(tls.ok);
    CHECK(tls.exchange("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n") ==
          "HTTP/1.1 411 Length Required");
    CHECK(tls.healthz() == "HTTP/1.1 200 OK");  // and the connection goes on
    CHECK(tls.exchange(
              "POST /other HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}") ==
          "HTTP/1.1 404 Not Found");
    CHECK(tls.healthz() == "HTTP/1.1 200 OK");
    CHECK(tls.exchange("PUT /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n") ==
          "HTTP/1.1 405 Method Not Allowed");
  }
}

TEST_CASE("webhook server: TLS 1.2 is the least it speaks") {
  std::string a = pki("a");
  auto server = start(loaded(a + "/server.crt", a + "/server.key"));

  TlsConnection tls11(server->port(), a + "/ca.crt", TLS1_1_VERSION);
  CHECK_FALSE(tls11.ok);
  // The server's alert, not this client giving up: it did offer TLS 1.1.
  CHECK(ERR_GET_REASON(tls11.error) == SSL_R_TLSV1_ALERT_PROTOCOL_VERSION);

  TlsConnection tls12(server->port(), a + "/ca.crt", TLS1_2_VERSION);
  REQUIRE(tls12.ok);
  CHECK(tls12.protocol == "TLSv1.2");
  CHECK(tls12.healthz() == "HTTP/1.1 200 OK");

  TlsConnection any(server->port(), a + "/ca.crt");
  REQUIRE(any.ok);
  CHECK(any.protocol == "TLSv1.3");
  CHECK(any.serial == serial_of(a + "/server.crt"));
  CHECK(any.subject == "/CN=iogate-test-server");
}

TEST_CASE("webhook server: a rotated certificate reaches new connections while the server runs") {
  std::string a = pki("a");
  std::string c = pki("c");
  issue(a, "webhook-b");
  TempTree dir;
  std::string cert = dir.write("tls.crt", slurp(a + "/server.crt"));
  std::string key = dir.write("tls.key", slurp(a + "/server.key"));
  auto certs = loaded(cert, key);
  auto server = start(certs);

  TlsConnection before(server->port(), a + "/ca.crt");
  REQUIRE(before.ok);
  CHECK(before.serial == serial_of(a + "/server.crt"));

  // cert B: a new key from the same CA, written over the files in place.
  dir.write("tls.crt", slurp(a + "/webhook-b.crt"));
  dir.write("tls.key", slurp(a + "/webhook-b.key"));
  CHECK(certs->reload_if_changed());
  TlsConnection after(server->port(), a + "/ca.crt");
  REQUIRE(after.ok);
  CHECK(after.serial == serial_of(a + "/webhook-b.crt"));
  CHECK(after.subject == "/CN=webhook-b");
  CHECK(before.healthz() == "HTTP/1.1 200 OK");  // the connection made before goes on
  auto res = client(*server, a + "/ca.crt")->Post("/mutate", "{}", "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);

  // A corrupt replacement: logged, and B served on.
  dir.write("tls.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n");
  CHECK_FALSE(certs->reload_if_changed());
  CHECK(certs->rejections() == 1);
  TlsConnection still_b(server->port(), a + "/ca.crt");
  REQUIRE(still_b.ok);
  CHECK(still_b.serial == serial_of(a + "/webhook-b.crt"));

  // Another CA altogether: clients that trust only the first now refuse the server.
  dir.write("tls.crt", slurp(c + "/server.crt"));
  dir.write("tls.key", slurp(c + "/server.key"));
  CHECK(certs->reload_if_changed());
  TlsConnection old_trust(server->port(), a + "/ca.crt");
  CHECK_FALSE(old_trust.ok);
  TlsConnection new_trust(server->port(), c + "/ca.crt");
  REQUIRE(new_trust.ok);
  CHECK(new_trust.serial == serial_of(c + "/server.crt"));
  CHECK(certs->reloads() == 2);
}

TEST_CASE("webhook server: a Secret volume's ..data swap is picked up by the check interval") {
  std::string a = pki("a");
  issue(a, "webhook-b");
  TempTree dir;
  SecretVolume secret(dir);
  secret.publish_files(a + "/server.crt", a + "/server.key");
  auto certs = loaded(secret.cert_path(), secret.key_path(), 200ms);
  auto server = start(certs);
  CHECK(TlsConnection(server->port(), a + "/ca.crt").serial == serial_of(a + "/server.crt"));

  secret.publish_files(a + "/webhook-b.crt", a + "/webhook-b.key");
  std::this_thread::sleep_for(250ms);  // no reload_if_changed(): the handshake's own check
  TlsConnection b(server->port(), a + "/ca.crt");
  REQUIRE(b.ok);
  CHECK(b.serial == serial_of(a + "/webhook-b.crt"));
  CHECK(certs->reloads() == 1);

  // Broken data published the same way: B stays.
  secret.publish("garbage", "garbage");
  std::this_thread::sleep_for(250ms);
  TlsConnection still_b(server->port(), a + "/ca.crt");
  REQUIRE(still_b.ok);
  CHECK(still_b.serial == serial_of(a + "/webhook-b.crt"));
  CHECK(certs->rejections() == 1);
}

TEST_CASE("webhook server: requests on several threads while the certificate rotates") {
  std::string a = pki("a");
  issue(a, "webhook-b");
  TempTree dir;
  SecretVolume secret(dir);
  secret.publish_files(a + "/server.crt", a + "/server.key");
  auto certs = loaded(secret.cert_path(), secret.key_path(), 0ms);  // a look at every handshake
  auto server = start(certs);

  std::atomic<bool> done{false};
  std::atomic<int> failures{0}, answered{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      while (!done) {
        auto c = client(*server, a + "/ca.crt");  // a new connection, a new handshake
        auto res = c->Post("/validate", "{}", "application/json");
        if (res && res->status == 200) ++answered;
        else ++failures;
      }
    });
  }
  for (int i = 0; i < 10; ++i) {
    bool even = i % 2 == 0;
    secret.publish_files(a + (even ? "/webhook-b.crt" : "/server.crt"), a + (even ? "/webhook-b.key" : "/server.key"));
    std::this_thread::sleep_for(20ms);
  }
  done = true;
  for (auto& t : clients) t.join();
  CHECK(failures == 0);
  CHECK(answered > 0);
  CHECK(certs->reloads() >= 1);
}

TEST_CASE("webhook server: the handler's status passes through; an exception is a bare 500") {
  std::string a = pki("a");
  WebhookHandlers h;
  h.mutate = [](const std::string&) { return HttpAnswer{400, "application/json", "{\"reason\":\"bad review\"}"}; };
  h.validate = [](const std::string&) -> HttpAnswer { throw std::runtime_error("secret detail"); };
  auto s = WebhookServer::start("127.0.0.1:0", loaded(a + "/server.crt", a + "/server.key"), h);
  REQUIRE(s.ok());
  auto c = client(**s, a + "/ca.crt");
  auto res = c->Post("/mutate", "{}", "application/json");
  REQUIRE(res);
  CHECK(res->status == 400);
  CHECK(res->body == "{\"reason\":\"bad review\"}");
  res = c->Post("/validate", "{}", "application/json");
  REQUIRE(res);
  CHECK(res->status == 500);
  CHECK(res->body == "internal error\n");
  CHECK_FALSE(res->has_header("EXCEPTION_WHAT"));
}

TEST_CASE("webhook server: a cert file with an intermediate sends the chain") {
  std::string a = pki("a");
  TempTree dir;
  std::string bundle = dir.write("tls.crt", slurp(a + "/server.crt") + slurp(a + "/ca.crt"));
  auto server = start(loaded(bundle, a + "/server.key"));
  TlsConnection tls(server->port(), a + "/ca.crt");
  REQUIRE(tls.ok);
  CHECK(tls.chain_length == 2);
  auto leaf_server = start(loaded(a + "/server.crt", a + "/server.key"));
  TlsConnection leaf_only(leaf_server->port(), a + "/ca.crt");
  REQUIRE(leaf_only.ok);
  CHECK(leaf_only.chain_length == 1);
}

TEST_CASE("webhook server: start() refuses an unloaded pair and a bad --listen") {
  auto unloaded = std::make_shared<CertificateReloader>(TlsFiles{"/nonexistent.crt", "/nonexistent.key"});
  auto s = WebhookServer::start("127.0.0.1:0", unloaded, echo_handlers());
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("no serving certificate") != std::string::npos);

  std::string a = pki("a");
  s = WebhookServer::start("127.0.0.1", loaded(a + "/server.crt", a + "/server.key"), echo_handlers());
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().kind == ErrorKind::kUsage);
  CHECK(s.error().message.find("--listen") == 0);

  auto first = start(loaded(a + "/server.crt", a + "/server.key"));
  s = WebhookServer::start(first->address(), loaded(a + "/server.crt", a + "/server.key"), echo_handlers());
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("cannot bind") != std::string::npos);
}

// The read timeout is set far beyond the clients' own 5 s in the tests below: an answer that came
// only when a timeout expired fails them, with no figure for how fast an answer must be.

TEST_CASE("webhook server: idle connections hold no worker; a review is answered while 32 stay open") {
  std::string a = pki("a");
  WebhookServerOptions options;
  options.read_timeout = 30s;
  auto server = start(loaded(a + "/server.crt", a + "/server.key"), options);
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 32; ++i) idle.push_back(idle_connection(server->port()));

  for (int i = 0; i < 3; ++i) {
    TlsConnection tls(server->port(), a + "/ca.crt");
    REQUIRE(tls.ok);
    CHECK(tls.exchange("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       "Content-Length: 2\r\n\r\n{}") == "HTTP/1.1 200 OK");
  }
  auto res = client(*server, a + "/ca.crt")->Post("/mutate", "{}", "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
  for (const auto& fd : idle) CHECK(still_open(fd));  // answered in their presence, not after them
}

TEST_CASE("webhook server: a malformed Content-Length gets 400 at once, and the connection ends") {
  std::string a = pki("a");
  WebhookServerOptions options;
  options.read_timeout = 30s;
  options.max_body_bytes = 64 * 1024;
  auto server = start(loaded(a + "/server.crt", a + "/server.key"), options);
  auto post = [](const std::string& length_headers) {
    return "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + length_headers + "\r\n";
  };
  for (std::string headers :
       {"Content-Length: -5\r\n", "Content-Length: 1e20\r\n", "Content-Length: 12abc\r\n", "Content-Length: +2\r\n",
        "Content-Length: 0x10\r\n", "Content-Length: 2\r\nContent-Length: 3\r\n",
        "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n"}) {
    CAPTURE(headers);
    TlsConnection tls(server->port(), a + "/ca.crt");
    REQUIRE(tls.ok);
    CHECK(tls.exchange(post(headers)) == "HTTP/1.1 400 Bad Request");
    CHECK(tls.closed_by_server());  // where its body would end is unknown: nothing more is read
  }
  SUBCASE("a well-formed length over the limit: 413 at once, without its body") {
    for (std::string length : {"65537", "99999999999999999999999"}) {
      CAPTURE(length);
      TlsConnection tls(server->port(), a + "/ca.crt");
      REQUIRE(tls.ok);
      CHECK(tls.exchange(post("Content-Length: " + length + "\r\n")) == "HTTP/1.1 413 Payload Too Large");
      CHECK(tls.closed_by_server());
    }
  }
  SUBCASE("the same length twice is one length") {
    TlsConnection tls(server->port(), a + "/ca.crt");
    REQUIRE(tls.ok);
    CHECK(tls.exchange(post("Content-Length: 2\r\nContent-Length: 2\r\n") + "{}") == "HTTP/1.1 200 OK");
    CHECK(tls.healthz() == "HTTP/1.1 200 OK");
  }
}

TEST_CASE("webhook server: reviews are let in by what they take parsed: 413 for one that never fits, 503 when busy") {
  std::string a = pki("a");
  WebhookServerOptions options;
  options.review_bytes_in_flight = 1 << 20;
  options.read_timeout = 2s;  // a second's wait for room
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  WebhookHandlers h = echo_handlers();
  h.mutate = [&](const std::string& body) {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait_for(lock, 10s, [&] { return release; });
    return HttpAnswer{200, "application/json", body};
  };
  auto s = WebhookServer::start("127.0.0.1:0", loaded(a + "/server.crt", a + "/server.key"), h, options);
  REQUIRE_MESSAGE(s.ok(), s.error().message);
  auto& server = **s;

  // 300 KB of empty objects are counted at about 15 MiB (parsed, then freed).
  std::string objects = "[{}";
  for (int i = 0; i < 100000; ++i) objects += ",{}";
  objects += "]";
  auto res = client(server, a + "/ca.crt")->Post("/validate", objects, "application/json");
  REQUIRE(res);
  CHECK(res->status == 413);
  CHECK((json_footprint(objects) >> 20) == 15);
  CHECK(res->body == "this JSON would take 15 MiB parsed, more than the 1 MiB reviews may take\n");

  // 120 KiB of one string takes 7 times that with the lexer's buffers: one at a time in 1 MiB.
  std::string text = "\"" + std::string(120 * 1024, 'x') + "\"";
  std::thread first([&] {
    auto r = client(server, a + "/ca.crt")->Post("/mutate", text, "application/json");
    CHECK((r && r->status == 200 && r->body == text));
  });
  auto let_go = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      release = true;
    }
    cv.notify_all();
    first.join();
  };
  bool in_handler;
  {
    std::unique_lock<std::mutex> lock(mu);
    in_handler = cv.wait_for(lock, 10s, [&] { return entered; });
  }
  if (!in_handler) let_go();
  REQUIRE(in_handler);
  // While the thread waits in the handler, no REQUIRE: its failure would leave the thread running.
  res = client(server, a + "/ca.crt")->Post("/validate", text, "application/json");
  CHECK((res && res->status == 503 && res->body == "busy: other reviews take the memory this one needs; retry\n"));
  CHECK((res && res->get_header_value("Retry-After") == std::to_string(kBusyRetryAfterSeconds)));
  res = client(server, a + "/ca.crt")->Post("/validate", "{}", "application/json");  // small: room for it
  CHECK((res && res->status == 200));
  let_go();
  res = client(server, a + "/ca.crt")->Post("/validate", text, "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
}

TEST_CASE("webhook server: accepted connections have TCP_NODELAY (no delayed-ACK stall per answer)") {
  std::string a = pki("a");
  auto server = start(loaded(a + "/server.crt", a + "/server.key"));
  TlsConnection tls(server->port(), a + "/ca.crt");
  REQUIRE(tls.ok);
  CHECK(tls.healthz() == "HTTP/1.1 200 OK");  // the connection is accepted and being served
  auto nodelay = accepted_nodelay(server->port());
  REQUIRE(nodelay.size() == 1);
  CHECK(nodelay[0]);
}
