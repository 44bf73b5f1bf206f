// The HTTPS front: cpp-httplib's SSLServer, TLS set up to request (not require) a client
// certificate and to verify it against the test CA, every method and path routed to ApiHandler.
#include "test_apiserver.h"

#include <httplib.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

namespace iogate::apiserver {

struct TestApiServer::Http {
  std::unique_ptr<httplib::SSLServer> server;
  std::thread thread;
};

namespace {

bool setup_tls(SSL_CTX& ctx, const std::string& dir) {
  const std::string ca = dir + "/ca.crt";
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(&ctx, (dir + "/server.crt").c_str()) != 1) return false;
  if (SSL_CTX_use_PrivateKey_file(&ctx, (dir + "/server.key").c_str(), SSL_FILETYPE_PEM) != 1) return false;
  if (SSL_CTX_check_private_key(&ctx) != 1) return false;
  if (SSL_CTX_load_verify_locations(&ctx, ca.c_str(), nullptr) != 1) return false;
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca.c_str());
  if (names == nullptr) return false;
  SSL_CTX_set_client_CA_list(&ctx, names);  // takes ownership
  // Ask for a client certificate but let the handshake finish whatever it is: as kube-apiserver
  // does, an untrusted certificate is no credential (checked per request), not a TLS failure.
  SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
  return true;
}

// The CN of a client certificate that chains to the CA; empty when none or unverified.
std::string verified_client_user(const SSL* ssl) {
  if (ssl == nullptr) return "";
  X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return "";
  char cn[256] = {0};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof cn) <= 0) return "";
  return cn;
}

ApiRequest to_api_request(const httplib::Request& req) {
  ApiRequest r;
  r.method = req.method;
  r.path = req.path;
  for (const auto& [k, v] : req.params) r.query.emplace(k, v);
  r.content_type = req.get_header_value("Content-Type");
  r.accept = req.get_header_value("Accept");
  r.user_agent = req.get_header_value("User-Agent");
  r.body = req.body;
  if (req.has_header("Authorization")) {
    r.authorization_present = true;
    std::string value = req.get_header_value("Authorization");
    if (value.size() > 7 && strncasecmp(value.c_str(), "Bearer ", 7) == 0) r.bearer_token = value.substr(7);
  }
  r.client_cert_user = verified_client_user(req.ssl);
  return r;
}

}  // namespace

TestApiServer::TestApiServer(std::string token) : handler_(std::move(token)), http_(std::make_unique<Http>()) {}

Result<std::unique_ptr<TestApiServer>> TestApiServer::start(const TestApiServerOptions& options) {
  // A dropped connection is a socket shut down under a worker that then writes to it.
  ::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<TestApiServer> self(new TestApiServer(options.token));
  const std::string dir = options.cert_dir;
  auto server = std::make_unique<httplib::SSLServer>([dir](SSL_CTX& ctx) { return setup_tls(ctx, dir); });
  if (!server->is_valid()) {
    return runtime_error("--cert-dir " + dir + ": cannot load server.crt, server.key and ca.crt");
  }
  server->new_task_queue = [] { return new httplib::ThreadPool(32); };
  server->set_keep_alive_timeout(5);
  ApiHandler* handler = &self->handler_;
  auto route = [handler](const httplib::Request& req, httplib::Response& res) {
    ApiResponse out = handler->handle(to_api_request(req));
    if (out.drop_connection) {
      ::shutdown(SSL_get_fd(req.ssl), SHUT_RDWR);
      res.status = 500;
      return;
    }
    res.status = out.status;
    for (const auto& [k, v] : out.headers) res.set_header(k, v);
    res.set_content(out.body, out.content_type.c_str());
  };
  const std::string any = ".*";
  server->Get(any, route).Post(any, route).Put(any, route).Patch(any, route).Delete(any, route);
  int port = options.port;
  if (port == 0) {
    port = server->bind_to_any_port("127.0.0.1");
    if (port <= 0) return runtime_error("cannot bind 127.0.0.1 on any port");
  } else if (!server->bind_to_port("127.0.0.1", port)) {
    return runtime_error("--port " + std::to_string(port) + ": cannot bind 127.0.0.1:" + std::to_string(port));
  }
  self->port_ = port;
  self->handler_.set_server_address("127.0.0.1:" + std::to_string(port));
  httplib::SSLServer* raw = server.get();
  self->http_->server = std::move(server);
  self->http_->thread = std::thread([raw] { raw->listen_after_bind(); });
  for (int i = 0; i < 500 && !raw->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return self;
}

void TestApiServer::stop() {
  if (!http_ || !http_->server) return;
  // is_running() turns true inside listen_after_bind; stop() before that would be lost.
  for (int i = 0; i < 500 && !http_->server->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  http_->server->stop();
  if (http_->thread.joinable()) http_->thread.join();
  http_->server.reset();
}

TestApiServer::~TestApiServer() { stop(); }

}  // namespace iogate::apiserver
