// The test API server end to end over HTTPS with cpp-httplib's client: TLS verified against the
// test CA, bearer and client-certificate auth, the /_test/ control endpoints, token rotation, and
// faults as a client meets them on the wire (a dropped connection, a 429 with Retry-After).
#include <doctest/doctest.h>
#include <httplib.h>

#include <cstdlib>
#include <filesystem>

#include "test_apiserver.h"

using nlohmann::json;
using namespace iogate::apiserver;
namespace fs = std::filesystem;

namespace {

const char* kToken = "server-test-token-42";

// One PKI for the whole binary, made by make_certs.sh.
const std::string& cert_dir() {
  static const std::string dir = [] {
    std::string script = std::getenv("APISERVER_MAKE_CERTS")
                             ? std::getenv("APISERVER_MAKE_CERTS")
                             : (fs::path(__FILE__).parent_path() / "make_certs.sh").string();
    fs::path out = fs::temp_directory_path() / ("iogate-apiserver-test-" + std::to_string(::getpid()));
    REQUIRE(std::system(("bash '" + script + "' '" + out.string() + "'").c_str()) == 0);
    std::atexit(
        [] { fs::remove_all(fs::temp_directory_path() / ("iogate-apiserver-test-" + std::to_string(::getpid()))); });
    return out.string();
  }();
  return dir;
}

std::unique_ptr<TestApiServer> start_server() {
  auto server = TestApiServer::start({cert_dir(), kToken, 0});
  REQUIRE(server.ok());
  REQUIRE(server.value()->port() > 0);
  return std::move(server.value());
}

std::unique_ptr<httplib::SSLClient> client(const TestApiServer& s, const std::string& token = kToken) {
  auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", s.port());
  c->set_ca_cert_path((cert_dir() + "/ca.crt").c_str());
  c->enable_server_certificate_verification(true);
  c->set_connection_timeout(5);
  c->set_read_timeout(5);
  if (!token.empty()) c->set_bearer_token_auth(token.c_str());
  return c;
}

}  // namespace

TEST_CASE("https: TLS verified against the test CA; bearer token; 401 Status body; /version anonymous") {
  auto s = start_server();
  REQUIRE(s->seed(json::parse(R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n1"}})")).ok());
  auto res = client(*s)->Get("/api/v1/nodes/n1");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->get_header_value("Content-Type") == "application/json");
  CHECK(json::parse(res->body)["metadata"]["name"] == "n1");
  res = client(*s, "wrong")->Get("/api/v1/nodes/n1");
  REQUIRE(res);
  CHECK(res->status == 401);
  CHECK(json::parse(res->body) == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"Unauthorized","reason":"Unauthorized","code":401})"));
  res = client(*s, "")->Get("/version");
  REQUIRE(res);
  CHECK(json::parse(res->body)["minor"] == "32");
  // A client that does not trust the test CA fails the handshake.
  httplib::SSLClient untrusting("127.0.0.1", s->port());
  untrusting.enable_server_certificate_verification(true);
  untrusting.set_ca_cert_path("/dev/null");
  CHECK_FALSE(untrusting.Get("/version"));
}

TEST_CASE("https: a client certificate signed by the CA authenticates; the log names its CN, never a token") {
  auto s = start_server();
  httplib::SSLClient c("127.0.0.1", s->port(), cert_dir() + "/client.crt", cert_dir() + "/client.key");
  c.set_ca_cert_path((cert_dir() + "/ca.crt").c_str());
  c.enable_server_certificate_verification(true);
  auto res = c.Get("/api/v1/namespaces/default");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(s->requests().back().auth == "x509 CN=iogate-test");
  // A well-formed client certificate from another CA is no credential: 401, not a TLS failure.
  fs::path other = fs::path(cert_dir()) / "other";
  REQUIRE(std::system(
              ("bash '" + (fs::path(__FILE__).parent_path() / "make_certs.sh").string() + "' '" + other.string() + "'")
                  .c_str()) == 0);
  httplib::SSLClient stranger("127.0.0.1", s->port(), (other / "client.crt").string(), (other / "client.key").string());
  stranger.set_ca_cert_path((cert_dir() + "/ca.crt").c_str());
  res = stranger.Get("/api/v1/namespaces/default");
  REQUIRE(res);
  CHECK(res->status == 401);
}

TEST_CASE("https: /_test/ control: seed, read back, faults, token rotation, the request log") {
  auto s = start_server();
  auto c = client(*s);
  auto res = c->Post(
      "/_test/objects",
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p1","namespace":"ml"},"spec":{"containers":[{"name":"c"}]}})",
      "application/json");
  REQUIRE(res);
  CHECK(res->status == 201);
  res = c->Patch("/api/v1/namespaces/ml/pods/p1", R"({"metadata":{"annotations":{"iogate.io/verdict":"pass"}}})",
                 "application/merge-patch+json");
  REQUIRE(res);
  CHECK(res->status == 200);
  res = c->Get("/_test/objects/pods/ml/p1");
  REQUIRE(res);
  CHECK(json::parse(res->body)["metadata"]["annotations"]["iogate.io/verdict"] == "pass");
  CHECK(json::parse(c->Get("/_test/objects/pods/ml")->body).size() == 1);

  res = c->Get("/_test/requests");
  json log = json::parse(res->body);
  REQUIRE(log.size() == 1);
  CHECK(log[0]["method"] == "PATCH");
  CHECK(log[0]["content_type"] == "application/merge-patch+json");
  CHECK(res->body.find(kToken) == std::string::npos);

  // A 429 as the wire shows it, then a dropped connection.
  REQUIRE(
      c->Post(
           "/_test/faults",
           R"({"method":"GET","path_regex":"/api/v1/namespaces/ml/pods/p1","kind":"429","retry_after_s":3,"count":1})",
           "application/json")
          ->status == 201);
  res = c->Get("/api/v1/namespaces/ml/pods/p1");
  REQUIRE(res);
  CHECK(res->status == 429);
  CHECK(res->get_header_value("Retry-After") == "3");
  CHECK(res->body == "Too many requests, please try again later.\n");
  REQUIRE(c->Post("/_test/faults", R"({"path_regex":"/api/v1/namespaces/ml/pods/p1","kind":"drop","count":1})",
                  "application/json")
              ->status == 201);
  auto dropped = client(*s)->Get("/api/v1/namespaces/ml/pods/p1");
  CHECK_FALSE(dropped);  // no response at all
  res = client(*s)->Get("/api/v1/namespaces/ml/pods/p1");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(c->Delete("/_test/faults")->status == 200);
  CHECK(c->Post("/_test/faults", R"({"kind":"sometimes"})", "application/json")->status == 400);

  // Rotation.
  REQUIRE(c->Post("/_test/token", R"({"token":"next-token"})", "application/json")->status == 200);
  CHECK(client(*s)->Get("/api/v1/namespaces/ml/pods/p1")->status == 401);
  CHECK(client(*s, "next-token")->Get("/api/v1/namespaces/ml/pods/p1")->status == 200);
  CHECK(client(*s, "next-token")->Delete("/_test/requests")->status == 200);
  CHECK(s->requests().empty());
}
