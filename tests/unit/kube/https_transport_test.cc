// The real HTTPS transport (cpp-httplib over OpenSSL) against a TLS peer on loopback that treats
// each connection the way a troubled API server does: stopped, reset, closed, refusing our TLS.
// It must tell a stall and a cut connection (transient: ApiClient retries) from a refusal
// (permanent: a retry would meet it again), which cpp-httplib reports as one error. And what the
// client's TLS must be whatever the server: verified against the configured CA alone, host name
// checked, a client certificate presented from a kubeconfig, bad configurations refused up front.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "base/text_file.h"
#include "kube/api_client.h"
#include "kube/kube_config.h"
#include "pki.h"
#include "temp_tree.h"

namespace iogate {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// What the peer does with one connection.
enum class Peer {
  kSilent,              // accepts, never reads nor answers: a stopped (SIGSTOP) or wedged server,
                        // whose kernel still completes the TCP connection
  kResetAfterHello,     // reads the ClientHello, then resets the connection (RST)
  kCloseAfterHello,     // reads the ClientHello, then closes it (FIN, no TLS alert)
  kNotTls,              // answers the ClientHello in plain HTTP
  kRefuseClientCert12,  // TLS 1.2 requiring a client certificate: an alert within the handshake
  kRefuseClientCert13,  // TLS 1.3 requiring one: the alert arrives after the client's handshake
  kHandshakeThenDeaf,   // completes the handshake, then reads nothing: the request cannot be sent
  kReadThenSilent,      // completes the handshake, reads the request, never answers
  kAnswer,              // answers 200 {}
  kAnswerClientCert,    // requires a client certificate from the test CA; answers {"client":"<its subject>"}
};

// The test PKI of this file, and the text of one of its files.
const std::string& test_pki() {
  static const std::string dir = testing::pki("kube");
  return dir;
}
std::string pki_text(const std::string& file) { return testing::slurp(test_pki() + "/" + file); }

// A TLS server on 127.0.0.1 with the test PKI's server certificate; connection i meets script[i],
// the last entry repeating. Its receive buffer is small, so that a large request body fills it.
class TlsPeer {
 public:
  explicit TlsPeer(std::vector<Peer> script) : script_(std::move(script)) {
    ctx_ = SSL_CTX_new(TLS_server_method());
    REQUIRE(ctx_);
    const std::string dir = test_pki();
    REQUIRE(SSL_CTX_use_certificate_chain_file(ctx_, (dir + "/server.crt").c_str()) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey_file(ctx_, (dir + "/server.key").c_str(), SSL_FILETYPE_PEM) == 1);
    REQUIRE(SSL_CTX_load_verify_locations(ctx_, (dir + "/ca.crt").c_str(), nullptr) == 1);  // client certificates
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listener_ >= 0);
    int small = 4096;  // accepted sockets inherit it
    setsockopt(listener_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(listen(listener_, 16) == 0);
    socklen_t len = sizeof a;
    REQUIRE(getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~TlsPeer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      for (int fd : open_) shutdown(fd, SHUT_RDWR);  // ends blocked reads and handshakes
    }
    stopped_.notify_all();
    acceptor_.join();
    for (std::thread& t : handlers_) t.join();
    for (int fd : open_) close(fd);
    close(listener_);
    SSL_CTX_free(ctx_);
  }

  KubeConfig config() const {
    KubeConfig c;
    c.server = "https://127.0.0.1:" + std::to_string(port_);
    c.ca_pem = pki_text("ca.crt");
    c.token = "t";
    return c;
  }
  int connections() const { return accepted_.load(); }

 private:
  void accept_loop() {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) return;
      }
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      size_t i = static_cast<size_t>(accepted_.fetch_add(1));
      Peer peer = script_[std::min(i, script_.size() - 1)];
      std::lock_guard<std::mutex> lock(mu_);
      open_.insert(fd);
      handlers_.emplace_back([this, fd, peer] { serve(fd, peer); });
    }
  }

  void wait_for_stop() {
    std::unique_lock<std::mutex> lock(mu_);
    stopped_.wait(lock, [this] { return stop_; });
  }
  // Closes it now, as the peer's own act; RST instead of FIN with `reset`.
  void close_now(int fd, bool reset) {
    std::lock_guard<std::mutex> lock(mu_);
    if (reset) {
      linger l{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    open_.erase(fd);
    close(fd);
  }

  void serve(int fd, Peer peer) {
    char buf[4096];
    switch (peer) {
      case Peer::kSilent: wait_for_stop(); return;
      case Peer::kResetAfterHello:
      case Peer::kCloseAfterHello:
        (void)!read(fd, buf, sizeof buf);
        close_now(fd, peer == Peer::kResetAfterHello);
        return;
      case Peer::kNotTls: {
        (void)!read(fd, buf, sizeof buf);
        const std::string http = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
        (void)!write(fd, http.data(), http.size());
        wait_for_stop();
        return;
      }
      default: break;
    }
    SSL* ssl = SSL_new(ctx_);
    SSL_set_fd(ssl, fd);
    if (peer == Peer::kRefuseClientCert12 || peer == Peer::kRefuseClientCert13) {
      int version = peer == Peer::kRefuseClientCert12 ? TLS1_2_VERSION : TLS1_3_VERSION;
      SSL_set_min_proto_version(ssl, version);
      SSL_set_max_proto_version(ssl, version);
      SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    if (peer == Peer::kAnswerClientCert) {
      SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    if (SSL_accept(ssl) == 1) {
      if (peer == Peer::kReadThenSilent) {
        (void)SSL_read(ssl, buf, sizeof buf);
      } else if ((peer == Peer::kAnswer || peer == Peer::kAnswerClientCert) && read_request(ssl)) {
        std::string body = "{}";
        if (X509* client = SSL_get_peer_certificate(ssl)) {
          char name[256] = {};
          X509_NAME_oneline(X509_get_subject_name(client), name, sizeof name);
          body = nlohmann::json{{"client", name}}.dump();
          X509_free(client);
        }
        const std::string ok =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\n\r\n" + body;
        SSL_write(ssl, ok.data(), static_cast<int>(ok.size()));
      }
    }
    // Held open until the test ends: closing with the request unread would reset the connection,
    // and the client could see that instead of what this peer means it to see.
    wait_for_stop();
    SSL_free(ssl);
  }

  // Reads one request, its body included (Content-Length).
  static bool read_request(SSL* ssl) {
    std::string in;
    char buf[4096];
    size_t body_at = std::string::npos;
    size_t length = 0;
    for (;;) {
      if (body_at == std::string::npos && (body_at = in.find("\r\n\r\n")) != std::string::npos) {
        body_at += 4;
        size_t at = in.find("Content-Length: ");
        if (at != std::string::npos && at < body_at) length = std::stoul(in.substr(at + 16));
      }
      if (body_at != std::string::npos && in.size() >= body_at + length) return true;
      int n = SSL_read(ssl, buf, sizeof buf);
      if (n <= 0) return false;
      in.append(buf, static_cast<size_t>(n));
    }
  }

  std::vector<Peer> script_;
  SSL_CTX* ctx_ = nullptr;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable stopped_;
  bool stop_ = false;                  // guarded by mu_
  std::set<int> open_;                 // guarded by mu_
  std::vector<std::thread> handlers_;  // guarded by mu_ until acceptor_ ends
};

// Long enough that a loaded machine completes a loopback handshake within it, short enough
// that the tests that wait it out take a second or two.
constexpr milliseconds kTimeout{500};

HttpRequest get_request() { return HttpRequest{"GET", "/api/v1/nodes/n1", "", "", "t"}; }

// A body larger than the kernel lets a socket hold for sending (tcp_wmem's maximum, 4 MiB by
// default) and the peer's small receive buffer together: sending it blocks on a peer that does
// not read.
size_t unsendable_size() {
  std::ifstream wmem("/proc/sys/net/ipv4/tcp_wmem");
  size_t least = 0, usual = 0, most = 4 << 20;
  wmem >> least >> usual >> most;
  return 2 * most + (1 << 20);
}

TransportError failure_of(Peer peer, HttpRequest request = get_request()) {
  TlsPeer server({peer});
  auto transport = make_https_transport(server.config());
  REQUIRE(transport.ok());
  TransportResult r = (*transport)->send(request, kTimeout);
  REQUIRE(std::holds_alternative<TransportError>(r));
  return std::get<TransportError>(r);
}

bool says(const TransportError& e, const std::string& text) { return e.message.find(text) != std::string::npos; }

TEST_CASE("transport: a server that accepts TCP but never answers the handshake timed out (a stopped server)") {
  TransportError e = failure_of(Peer::kSilent);
  CAPTURE(e.message);
  CHECK(e.failure == TransportFailure::kTimeout);
  CHECK(says(e, "TLS handshake with 127.0.0.1:"));
  CHECK(says(e, "timed out after 500 ms"));
}

TEST_CASE("transport: a connection reset or closed in the handshake is lost, not refused") {
  for (Peer peer : {Peer::kResetAfterHello, Peer::kCloseAfterHello}) {
    TransportError e = failure_of(peer);
    CAPTURE(e.message);
    CHECK(e.failure == TransportFailure::kConnectionLost);
    CHECK(says(e, "closed during the TLS handshake"));
  }
}

TEST_CASE("transport: a TLS alert or a peer that is not TLS is a refused handshake, with OpenSSL's reason") {
  struct Case {
    Peer peer;
    const char* reason;
  };
  for (const Case& c :
       {Case{Peer::kRefuseClientCert12, "TLS handshake with 127.0.0.1:"},
        Case{Peer::kRefuseClientCert12, "alert handshake failure"},
        // TLS 1.3: the client's handshake is over when the server refuses it.
        Case{Peer::kRefuseClientCert13, "TLS alert from 127.0.0.1:"},
        Case{Peer::kRefuseClientCert13, "alert certificate required"}, Case{Peer::kNotTls, "wrong version number"}}) {
    TransportError e = failure_of(c.peer);
    CAPTURE(e.message);
    CHECK(e.failure == TransportFailure::kTlsHandshake);
    CHECK(says(e, c.reason));
    // Not the teardown's complaint, which follows every failed handshake.
    CHECK_FALSE(says(e, "shutdown while in init"));
  }
}

TEST_CASE("transport: no answer to a sent request is a read timeout") {
  TransportError e = failure_of(Peer::kReadThenSilent);
  CAPTURE(e.message);
  CHECK(e.failure == TransportFailure::kTimeout);
  CHECK(says(e, "no answer from 127.0.0.1:"));
}

TEST_CASE("transport: a request body the server does not read is a write timeout") {
  HttpRequest big{"PATCH", "/api/v1/nodes/n1", "application/merge-patch+json", std::string(unsendable_size(), 'x'),
                  "t"};
  TransportError e = failure_of(Peer::kHandshakeThenDeaf, big);
  CAPTURE(e.message);
  CHECK(e.failure == TransportFailure::kTimeout);
  CHECK(says(e, "sending the request to 127.0.0.1:"));
}

TEST_CASE("transport: nothing listening is a refused connection") {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  close(s);  // the port is free and nobody listens on it
  KubeConfig config;
  config.server = "https://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  config.ca_pem = pki_text("ca.crt");
  auto transport = make_https_transport(config);
  REQUIRE(transport.ok());
  TransportResult r = (*transport)->send(get_request(), kTimeout);
  REQUIRE(std::holds_alternative<TransportError>(r));
  CHECK(std::get<TransportError>(r).failure == TransportFailure::kConnect);
}

// The real transport under ApiClient, each try's result recorded.
class Recorded : public Transport {
 public:
  explicit Recorded(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}
  TransportResult send(const HttpRequest& request, milliseconds timeout) override {
    results.push_back(inner_->send(request, timeout));
    return results.back();
  }
  std::vector<TransportResult> results;

 private:
  std::unique_ptr<Transport> inner_;
};

struct ClientRun {
  ApiResult<nlohmann::json> result;
  std::vector<TransportResult> tries;
  int connections = 0;
};

ClientRun through_client(std::vector<Peer> script, bool big_patch = false,
                         const std::function<void(KubeConfig&)>& adjust = nullptr) {
  TlsPeer server(std::move(script));
  KubeConfig config = server.config();
  if (adjust) adjust(config);
  auto transport = make_https_transport(config);
  REQUIRE(transport.ok());
  auto recorded = std::make_unique<Recorded>(std::move(*transport));
  Recorded* tries = recorded.get();
  RetryPolicy retry;
  retry.initial_backoff = milliseconds(20);
  retry.max_backoff = milliseconds(50);
  retry.request_timeout = kTimeout;
  ApiClient client(config, retry, std::move(recorded), ClientClock::real(), 1);
  client.set_deadline(Clock::now() + std::chrono::seconds(30));
  ClientRun run{ApiError{}, {}, 0};
  if (big_patch) {
    run.result = client.patch("/api/v1/nodes/n1", PatchType::kMerge, {{"x", std::string(unsendable_size(), 'x')}});
  } else {
    run.result = client.get("/api/v1/nodes/n1");
  }
  run.tries = tries->results;
  run.connections = server.connections();
  return run;
}

TransportFailure failure_at(const ClientRun& run, size_t i) {
  REQUIRE(i < run.tries.size());
  REQUIRE(std::holds_alternative<TransportError>(run.tries[i]));
  return std::get<TransportError>(run.tries[i]).failure;
}

TEST_CASE("client: a stalled, reset or closed handshake and a silent server are retried, then answered") {
  struct Case {
    Peer peer;
    TransportFailure failure;
  };
  for (const Case& c : {Case{Peer::kSilent, TransportFailure::kTimeout},
                        Case{Peer::kResetAfterHello, TransportFailure::kConnectionLost},
                        Case{Peer::kCloseAfterHello, TransportFailure::kConnectionLost},
                        Case{Peer::kReadThenSilent, TransportFailure::kTimeout}}) {
    CAPTURE(static_cast<int>(c.peer));
    ClientRun run = through_client({c.peer, c.peer, Peer::kAnswer});
    REQUIRE(run.result.ok());
    CHECK(failure_at(run, 0) == c.failure);
    CHECK(failure_at(run, 1) == c.failure);
    // The last try got the answer (a loaded machine may add a try that timed out before it).
    REQUIRE(std::holds_alternative<HttpResponse>(run.tries.back()));
    CHECK(std::get<HttpResponse>(run.tries.back()).status == 200);
  }
}

TEST_CASE("client: a request the server would not read is retried, then answered") {
  ClientRun run = through_client({Peer::kHandshakeThenDeaf, Peer::kAnswer}, /*big_patch=*/true);
  REQUIRE(run.result.ok());
  CHECK(failure_at(run, 0) == TransportFailure::kTimeout);
}

TEST_CASE("client: a refused handshake is not retried, whatever the deadline left") {
  for (Peer peer : {Peer::kRefuseClientCert12, Peer::kRefuseClientCert13, Peer::kNotTls}) {
    CAPTURE(static_cast<int>(peer));
    ClientRun run = through_client({peer, Peer::kAnswer});
    REQUIRE_FALSE(run.result.ok());
    CHECK(run.result.error().reason == "TLSHandshake");
    CHECK(run.tries.size() == 1);
    CHECK(run.connections == 1);
  }
}

// A client on the real transport made from `config`, as the modes make theirs.
ApiResult<nlohmann::json> get_with(const KubeConfig& config) {
  ApiClient api(config);
  REQUIRE(api.ready().ok());
  return api.get("/api/v1/nodes/n1");
}

TEST_CASE("TLS: a server certificate from another CA fails at once, with a clear message") {
  for (bool with_system_roots : {false, true}) {
    CAPTURE(with_system_roots);
    // Another PKI's CA, and with it the machine's roots, if it has them: none vouches for the
    // server, and the system's CAs are not trusted in place of the configured one.
    ClientRun run = through_client({Peer::kAnswer}, false, [&](KubeConfig& c) {
      c.ca_pem = testing::slurp(testing::pki("other-ca") + "/ca.crt");
      if (auto system = read_text_file("/etc/ssl/certs/ca-certificates.crt"); system.ok() && with_system_roots) {
        c.ca_pem += *system;
      }
    });
    REQUIRE_FALSE(run.result.ok());
    CHECK(run.result.error().reason == "TLSVerification");
    CHECK(run.result.error().summary().find("not verified against the configured CA") != std::string::npos);
    CHECK(run.tries.size() == 1);  // no retry storm
  }
}

TEST_CASE("TLS: the host name is checked against the certificate (localhost is in it)") {
  TlsPeer server({Peer::kAnswer});
  KubeConfig by_name = server.config();
  by_name.server = "https://localhost:" + by_name.server.substr(by_name.server.rfind(':') + 1);
  CHECK(get_with(by_name).ok());
}

TEST_CASE("kubeconfig with a client certificate authenticates over mutual TLS; a key not its own is refused") {
  TlsPeer server({Peer::kAnswerClientCert});
  testing::TempTree dir;
  dir.write("pki/ca.crt", pki_text("ca.crt"));
  dir.write("pki/client.crt", pki_text("client.crt"));
  dir.write("pki/client.key", pki_text("client.key"));
  std::string path = dir.write("kubeconfig",
                               "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                               "clusters:\n- name: test\n  cluster:\n    server: " +
                                   server.config().server +
                                   "\n    certificate-authority: pki/ca.crt\n"
                                   "contexts:\n- name: test\n  context: {cluster: test, user: admin}\n"
                                   "users:\n- name: admin\n  user:\n"
                                   "    client-certificate: pki/client.crt\n    client-key: pki/client.key\n");
  auto config = load_kubeconfig(path);
  REQUIRE(config.ok());
  auto answer = get_with(*config);
  REQUIRE(answer.ok());
  CHECK((*answer)["client"] == "/O=system:masters/CN=iogate-test");

  KubeConfig mismatched = *config;
  mismatched.client_key_pem = pki_text("server.key");
  ApiClient bad(mismatched);
  REQUIRE_FALSE(bad.ready().ok());
  CHECK(bad.ready().error().message.find("does not match") != std::string::npos);

  // Without one, the peer refuses the handshake.
  KubeConfig anonymous = *config;
  anonymous.client_cert_pem.clear();
  anonymous.client_key_pem.clear();
  ApiClient refused(anonymous);
  auto r = refused.get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "TLSHandshake");
}

TEST_CASE("client setup: bad server URLs and PEMs are refused when the client is made") {
  KubeConfig base;
  base.ca_pem = pki_text("ca.crt");
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
  bad_key.client_cert_pem = pki_text("client.crt");
  bad_key.client_key_pem = "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n";
  ApiClient api(bad_key);
  REQUIRE_FALSE(api.ready().ok());
  CHECK(api.ready().error().message.find("client key") != std::string::npos);
}

}  // namespace
}  // namespace iogate
