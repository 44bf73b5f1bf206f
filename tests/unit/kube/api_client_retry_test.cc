// The client's retry, deadline and re-authentication logic against a scripted transport and a
// fake clock: the schedule is checked exactly, and nothing sleeps.
#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <deque>
#include <filesystem>
#include <sstream>

#include "kube/api_client.h"
#include "service_account_dir.h"

namespace iogate {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

struct FakeTime {
  Clock::time_point now{};  // starts at the epoch of steady_clock; only differences matter
  std::vector<milliseconds> sleeps;
};

struct Sent {
  HttpRequest request;
  milliseconds timeout;
  Clock::time_point at;
};

// Answers from a script, one per exchange; each exchange takes `latency` of fake time, or the
// whole timeout where it timed out (as a real one waits it out).
class ScriptedTransport : public Transport {
 public:
  ScriptedTransport(FakeTime* time, std::deque<TransportResult> script, std::vector<Sent>* log)
      : time_(time), script_(std::move(script)), log_(log) {}
  TransportResult send(const HttpRequest& request, milliseconds timeout) override {
    log_->push_back({request, timeout, time_->now});
    REQUIRE_FALSE(script_.empty());
    TransportResult r = script_.front();
    script_.pop_front();
    auto* failure = std::get_if<TransportError>(&r);
    time_->now += failure && failure->failure == TransportFailure::kTimeout ? timeout : latency;
    return r;
  }
  milliseconds latency{5};

 private:
  FakeTime* time_;
  std::deque<TransportResult> script_;
  std::vector<Sent>* log_;
};

HttpResponse answer(int status, std::string body, std::string retry_after = "") {
  return HttpResponse{status, std::move(body), std::move(retry_after)};
}

const char* kStatus500 =
    R"({"kind":"Status","status":"Failure","reason":"InternalError","message":"etcd hiccup","code":500})";

struct Harness {
  FakeTime time;
  std::vector<Sent> sent;
  std::unique_ptr<ApiClient> client;

  Harness(std::deque<TransportResult> script, RetryPolicy policy = {}, KubeConfig config = {}) {
    if (config.token.empty() && config.token_file.empty()) config.token = "t0";
    ClientClock clock{[this] { return time.now; },
                      [this](milliseconds d) {
                        time.sleeps.push_back(d);
                        time.now += d;
                      }};
    client = std::make_unique<ApiClient>(
        config, policy, std::make_unique<ScriptedTransport>(&time, std::move(script), &sent), clock, 1);
  }
};

TEST_CASE("retry: 500s then success, with jittered, growing, bounded sleeps") {
  RetryPolicy p;
  p.max_attempts = 6;
  p.initial_backoff = milliseconds(100);
  p.max_backoff = milliseconds(300);
  Harness h({answer(500, kStatus500), answer(503, ""), answer(502, "bad gateway"), answer(504, ""),
             answer(200, R"({"kind":"Pod"})")},
            p);
  auto r = h.client->get("/api/v1/namespaces/ns/pods/p");
  REQUIRE(r.ok());
  CHECK((*r)["kind"] == "Pod");
  CHECK(h.sent.size() == 5);
  REQUIRE(h.time.sleeps.size() == 4);
  const int64_t ceilings[] = {100, 200, 300, 300};
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(h.time.sleeps[i] >= milliseconds(0));
    CHECK(h.time.sleeps[i] <= milliseconds(ceilings[i]));
  }
  CHECK(h.client->stats().retries == 4);
  for (const Sent& s : h.sent) CHECK(s.request.bearer_token == "t0");
}

TEST_CASE("retry: gives up after max_attempts with the last Status") {
  RetryPolicy p;
  p.max_attempts = 3;
  Harness h({answer(500, kStatus500), answer(500, kStatus500), answer(500, kStatus500)}, p);
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().http_status == 500);
  CHECK(r.error().summary() == "GET /api/v1/nodes/n1: 500 InternalError: etcd hiccup (gave up after 3 attempts)");
  CHECK(h.sent.size() == 3);
  CHECK(h.time.sleeps.size() == 2);
}

TEST_CASE("retry: 429 with Retry-After sleeps exactly that, plain-text body") {
  Harness h({answer(429, "Too many requests, please try again later.\n", "2"), answer(200, "{}")});
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE(r.ok());
  REQUIRE(h.time.sleeps.size() == 1);
  CHECK(h.time.sleeps[0] == milliseconds(2000));
}

// Each transient failure as the real transport reports it (https_transport.cc; which socket and
// TLS events make which failure is https_transport_test.cc's), or as the API server answers.
struct Transient {
  const char* what;
  TransportResult result;
};
std::vector<Transient> transient_failures() {
  auto failed = [](TransportFailure f, const char* message) { return TransportError{f, message}; };
  using F = TransportFailure;
  return {
      {"connection refused", failed(F::kConnect, "cannot connect to 10.96.0.1:443")},
      {"connection reset", failed(F::kConnectionLost, "connection to 10.96.0.1:443 closed before the answer")},
      {"connect timeout", failed(F::kTimeout, "connecting to 10.96.0.1:443 timed out after 10000 ms")},
      {"TLS handshake timeout", failed(F::kTimeout, "TLS handshake with 10.96.0.1:443 timed out after 10000 ms")},
      {"TLS handshake reset",
       failed(F::kConnectionLost, "connection to 10.96.0.1:443 closed during the TLS handshake")},
      {"read timeout", failed(F::kTimeout, "no answer from 10.96.0.1:443 within 10000 ms")},
      {"write timeout", failed(F::kTimeout, "sending the request to 10.96.0.1:443 timed out after 10000 ms")},
      {"429", answer(429, "Too many requests, please try again later.\n")},
      {"500", answer(500, kStatus500)},
      {"502", answer(502, "bad gateway")},
      {"503", answer(503, "")},
      {"504", answer(504, R"({"kind":"Status","status":"Failure","reason":"Timeout","code":504})")},
  };
}

TEST_CASE("retry: every transient failure, twice, then the answer, within the deadline") {
  for (const Transient& t : transient_failures()) {
    CAPTURE(t.what);
    Harness h({t.result, t.result, answer(200, R"({"kind":"Pod"})")});
    const Clock::time_point deadline = h.time.now + std::chrono::seconds(60);
    h.client->set_deadline(deadline);
    auto r = h.client->get("/api/v1/namespaces/ns/pods/p");
    REQUIRE(r.ok());
    CHECK((*r)["kind"] == "Pod");
    CHECK(h.sent.size() == 3);
    CHECK(h.client->stats().retries == 2);
    REQUIRE(h.time.sleeps.size() == 2);
    CHECK(h.time.sleeps[0] <= milliseconds(200));  // RetryPolicy's default backoff, full jitter
    CHECK(h.time.sleeps[1] <= milliseconds(400));
    CHECK(h.time.now <= deadline);
  }
}

TEST_CASE("retry: without a deadline, transient failures are retried too, up to max_attempts") {
  for (const Transient& t : transient_failures()) {
    CAPTURE(t.what);
    Harness h({t.result, answer(200, "{}")});
    CHECK(h.client->get("/api/v1/nodes/n1").ok());
    CHECK(h.sent.size() == 2);
  }
}

TEST_CASE("retry: a TLS alert, an unverified certificate and other 4xx are returned at once, deadline or not") {
  using F = TransportFailure;
  const std::pair<TransportResult, std::string> permanent[] = {
      {TransportError{F::kTlsHandshake, "TLS handshake with 10.96.0.1:443 failed: sslv3 alert handshake failure"},
       "TLSHandshake"},
      {TransportError{F::kTlsHandshake, "TLS alert from 10.96.0.1:443: tlsv13 alert certificate required"},
       "TLSHandshake"},
      {TransportError{F::kTlsVerification, "server certificate not verified: self-signed"}, "TLSVerification"},
      {answer(400, ""), "BadRequest"},
      {answer(403, ""), "Forbidden"},
      {answer(404, ""), "NotFound"},
      {answer(422, ""), "Invalid"},
  };
  for (bool with_deadline : {false, true}) {
    for (const auto& [result, reason] : permanent) {
      CAPTURE(with_deadline);
      CAPTURE(reason);
      Harness h({result});
      if (with_deadline) h.client->set_deadline(h.time.now + std::chrono::seconds(60));
      auto r = h.client->get("/api/v1/nodes/n1");
      REQUIRE_FALSE(r.ok());
      CHECK(r.error().reason == reason);
      CHECK(h.sent.size() == 1);
      CHECK(h.time.sleeps.empty());
    }
  }
}

// An API server out of service until `resumes`, then answering. kTimeout: stopped (SIGSTOP,
// overloaded): its kernel still completes connections, so each try waits out its timeout, and a
// try still waiting when it resumes is answered then. kConnect: restarting, every try refused at
// once.
class OutageTransport : public Transport {
 public:
  OutageTransport(FakeTime* time, TransportFailure kind, Clock::time_point resumes, std::vector<Sent>* log)
      : time_(time), kind_(kind), resumes_(resumes), log_(log) {}
  TransportResult send(const HttpRequest& request, milliseconds timeout) override {
    log_->push_back({request, timeout, time_->now});
    if (time_->now >= resumes_) return answered();
    if (kind_ == TransportFailure::kTimeout) {
      if (time_->now + timeout > resumes_) {
        time_->now = resumes_;
        return answered();
      }
      time_->now += timeout;
      return TransportError{kind_, "TLS handshake with 10.96.0.1:443 timed out"};
    }
    time_->now += milliseconds(1);
    return TransportError{kind_, "cannot connect to 10.96.0.1:443"};
  }

 private:
  TransportResult answered() {
    time_->now += milliseconds(5);
    return HttpResponse{200, R"({"kind":"Pod"})", ""};
  }
  FakeTime* time_;
  TransportFailure kind_;
  Clock::time_point resumes_;
  std::vector<Sent>* log_;
};

struct OutageRun {
  ApiResult<nlohmann::json> result;
  std::vector<Sent> sent;
  Clock::time_point resumed, ended, deadline;
};

// One GET under a 60 s deadline with the default RetryPolicy, the server out for 30 s from the start.
OutageRun outage_of_30s(TransportFailure kind) {
  auto time = std::make_shared<FakeTime>();
  OutageRun run{ApiError{}, {}, time->now + std::chrono::seconds(30), {}, time->now + std::chrono::seconds(60)};
  ClientClock clock{[time] { return time->now; },
                    [time](milliseconds d) {
                      time->sleeps.push_back(d);
                      time->now += d;
                    }};
  KubeConfig config;
  config.token = "t0";
  ApiClient client(config, RetryPolicy{}, std::make_unique<OutageTransport>(time.get(), kind, run.resumed, &run.sent),
                   clock, 1);
  client.set_deadline(run.deadline);
  run.result = client.get("/api/v1/namespaces/ns/pods/p");
  run.ended = time->now;
  return run;
}

TEST_CASE(
    "outage: a server stalled 30 s from the start, 60 s deadline: tries of 10 s, then the answer when it resumes") {
  OutageRun run = outage_of_30s(TransportFailure::kTimeout);
  REQUIRE(run.result.ok());
  CHECK((*run.result)["kind"] == "Pod");
  // Not one try that waits out the deadline: each waits the policy's 10 s, then tries again.
  REQUIRE(run.sent.size() >= 3);
  for (const Sent& s : run.sent) CHECK(s.timeout == RetryPolicy{}.request_timeout);
  // The try waiting when it resumed is answered: no backoff after the outage.
  CHECK(run.ended >= run.resumed);
  CHECK(run.ended <= run.resumed + milliseconds(5));
}

TEST_CASE(
    "outage: a server refusing connections 30 s (restarting), 60 s deadline: retried past max_attempts, soon after") {
  OutageRun run = outage_of_30s(TransportFailure::kConnect);
  REQUIRE(run.result.ok());
  CHECK(static_cast<int>(run.sent.size()) > RetryPolicy{}.max_attempts);
  // The next try after it is back comes within one capped backoff.
  CHECK(run.ended >= run.resumed);
  CHECK(run.ended <= run.resumed + RetryPolicy{}.max_backoff + milliseconds(6));
  CHECK(run.ended < run.deadline);
}

TEST_CASE("retry: other 4xx and 501 are returned at once") {
  for (int status : {400, 403, 404, 409, 422, 501}) {
    CAPTURE(status);
    Harness h({answer(status, "")});
    auto r = h.client->patch("/api/v1/nodes/n1", PatchType::kMerge, {{"a", 1}});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().http_status == status);
    CHECK(h.sent.size() == 1);
  }
}

TEST_CASE("retry: a 409 on a patch declared repeatable is retried with backoff, within max_attempts") {
  const char* conflict = R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409,)"
                         R"("message":"Operation cannot be fulfilled on pods \"p\": the object has been modified"})";
  Harness h({answer(409, conflict), answer(200, R"({"kind":"Pod"})")});
  auto r = h.client->patch("/api/v1/namespaces/ns/pods/p", PatchType::kMerge, {{"metadata", 1}}, OnConflict::kRetry);
  REQUIRE(r.ok());
  CHECK(h.sent.size() == 2);
  CHECK(h.client->stats().retries == 1);
  CHECK(h.time.sleeps.size() == 1);
  CHECK(h.sent[1].request.body == h.sent[0].request.body);  // the same patch again

  RetryPolicy p;
  p.max_attempts = 3;
  Harness always({answer(409, conflict), answer(409, conflict), answer(409, conflict)}, p);
  auto gave_up =
      always.client->patch("/api/v1/namespaces/ns/pods/p", PatchType::kMerge, {{"metadata", 1}}, OnConflict::kRetry);
  REQUIRE_FALSE(gave_up.ok());
  CHECK(gave_up.error().conflict());
  CHECK(gave_up.error().message.find("gave up after 3 attempts") != std::string::npos);
  CHECK(always.sent.size() == 3);
}

TEST_CASE("deadline: a sleep that would pass it is not taken; the error names the deadline") {
  RetryPolicy p;
  p.max_attempts = 10;
  Harness h({answer(429, "slow down", "30"), answer(200, "{}")}, p);
  h.client->set_deadline(h.time.now + std::chrono::seconds(10));
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "DeadlineExceeded");
  CHECK(r.error().summary().find("deadline reached after 1 attempt") != std::string::npos);
  CHECK(r.error().summary().find("429 TooManyRequests: slow down") != std::string::npos);
  CHECK(h.sent.size() == 1);
  CHECK(h.time.sleeps.empty());
}

TEST_CASE("deadline: bounds each attempt's timeout and stops retries") {
  RetryPolicy p;
  p.max_attempts = 100;
  p.initial_backoff = milliseconds(200);
  p.max_backoff = milliseconds(200);
  p.request_timeout = milliseconds(10000);
  std::deque<TransportResult> script(100, answer(503, ""));
  Harness h(script, p);
  Clock::time_point deadline = h.time.now + milliseconds(1000);
  h.client->set_deadline(deadline);
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "DeadlineExceeded");
  CHECK(h.time.now <= deadline);
  REQUIRE_FALSE(h.sent.empty());
  for (const Sent& s : h.sent) {
    CHECK(s.timeout <= std::chrono::duration_cast<milliseconds>(deadline - s.at));
  }
  CHECK(h.sent.size() < 100);
}

TEST_CASE("deadline: already passed → no request at all") {
  Harness h({});
  h.client->set_deadline(h.time.now);
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "DeadlineExceeded");
  CHECK(h.sent.empty());
}

TEST_CASE("401: the token file is re-read and the request retried once, without sleeping") {
  testing::TempTree dir;
  testing::ServiceAccountDir sa(dir);
  sa.publish("old-token", "ca", "ns");
  KubeConfig config;
  config.token_file = dir.path("token");
  const char* k401 =
      R"({"kind":"Status","status":"Failure","reason":"Unauthorized","message":"Unauthorized","code":401})";
  Harness h({answer(200, "{}"), answer(401, k401), answer(200, "{}"), answer(401, k401), answer(401, k401)}, {},
            config);
  REQUIRE(h.client->get("/api/v1/nodes/n1").ok());
  sa.publish("new-token", "ca", "ns");  // the kubelet rotates; our cached copy is seconds old
  REQUIRE(h.client->get("/api/v1/nodes/n1").ok());
  REQUIRE(h.sent.size() == 3);
  CHECK(h.sent[0].request.bearer_token == "old-token");
  CHECK(h.sent[1].request.bearer_token == "old-token");
  CHECK(h.sent[2].request.bearer_token == "new-token");
  CHECK(h.time.sleeps.empty());
  CHECK(h.client->stats().token_reloads == 1);

  // Still refused after the re-read: the 401 is returned, not retried again.
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().http_status == 401);
  CHECK(h.sent.size() == 5);
}

TEST_CASE("exec plugin: a real script runs once, again after a 401; its failure fails the request") {
  testing::TempTree dir;
  // Counts its runs in a file and hands out tok-N: the client's cache and re-runs are visible.
  std::string plugin = dir.write("plugin",
                                 "#!/bin/sh\n"
                                 "n=$(( $(cat \"$0.runs\" 2>/dev/null || echo 0) + 1 ))\n"
                                 "echo $n > \"$0.runs\"\n"
                                 "if [ $n -ge 3 ]; then echo 'error: SSO session expired' >&2; exit 1; fi\n"
                                 "printf '{\"kind\":\"ExecCredential\",\"apiVersion\":"
                                 "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"tok-%s\"}}' $n\n");
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  KubeConfig config;
  config.exec = ExecPlugin{};
  config.exec->api_version = "client.authentication.k8s.io/v1";
  config.exec->command = plugin;
  config.exec->user = "users[dev] (kubeconfig k)";
  const char* k401 =
      R"({"kind":"Status","status":"Failure","reason":"Unauthorized","message":"Unauthorized","code":401})";
  Harness h({answer(200, "{}"), answer(401, k401), answer(200, "{}"), answer(401, k401)}, {}, config);
  REQUIRE(h.client->get("/api/v1/nodes/n1").ok());
  REQUIRE(h.client->get("/api/v1/nodes/n1").ok());
  REQUIRE(h.sent.size() == 3);
  CHECK(h.sent[0].request.bearer_token == "tok-1");
  CHECK(h.sent[1].request.bearer_token == "tok-1");  // cached
  CHECK(h.sent[2].request.bearer_token == "tok-2");  // re-run after the 401
  CHECK(h.client->stats().token_reloads == 1);

  // The third run fails: the request after the next 401 fails with the plugin's own words.
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "ExecCredential");
  CHECK(r.error().message ==
        "users[dev] (kubeconfig k) exec plugin \"" + plugin + "\": exit status 1: error: SSO session expired");
  CHECK(h.sent.size() == 4);
}

TEST_CASE("exec plugin: a token refused again after a fresh run names the user entry and the plugin") {
  testing::TempTree dir;
  std::string plugin = dir.write("plugin",
                                 "#!/bin/sh\nprintf '{\"kind\":\"ExecCredential\",\"apiVersion\":"
                                 "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"bad\"}}'\n");
  std::filesystem::permissions(plugin, std::filesystem::perms::owner_all);
  KubeConfig config;
  config.exec = ExecPlugin{};
  config.exec->api_version = "client.authentication.k8s.io/v1";
  config.exec->command = plugin;
  config.exec->user = "users[dev] (kubeconfig k)";
  Harness h({answer(401, ""), answer(401, "")}, {}, config);
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().summary() ==
        "GET /api/v1/nodes/n1: 401 Unauthorized: the token of users[dev] (kubeconfig k) exec "
        "plugin \"" +
            plugin + "\" was refused, also when run again");
  CHECK(h.client->stats().token_reloads == 1);
}

TEST_CASE("401 with a static token: nothing to re-read, returned at once") {
  Harness h({answer(401, "")});
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().summary() == "GET /api/v1/nodes/n1: 401 Unauthorized");
  CHECK(h.sent.size() == 1);
}

TEST_CASE("requests carry method, content type and JSON body") {
  Harness h({answer(200, "{}"), answer(201, R"({"metadata":{"name":"e"}})"), answer(200, "")});
  REQUIRE(h.client->patch("/api/v1/nodes/n1/status", PatchType::kStrategicMerge, {{"status", 1}}).ok());
  auto posted = h.client->post("/api/v1/namespaces/default/events", {{"kind", "Event"}});
  REQUIRE(posted.ok());
  CHECK((*posted)["metadata"]["name"] == "e");
  auto empty = h.client->patch("/x", PatchType::kJsonPatch, nlohmann::json::array());
  REQUIRE(empty.ok());
  CHECK(empty->is_null());
  CHECK(h.sent[0].request.method == "PATCH");
  CHECK(h.sent[0].request.content_type == "application/strategic-merge-patch+json");
  CHECK(nlohmann::json::parse(h.sent[0].request.body) == nlohmann::json{{"status", 1}});
  CHECK(h.sent[1].request.method == "POST");
  CHECK(h.sent[1].request.content_type == "application/json");
  CHECK(h.sent[2].request.content_type == "application/json-patch+json");
}

TEST_CASE("a 200 that is not JSON is an error") {
  Harness h({answer(200, "<html>")});
  auto r = h.client->get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "InvalidResponse");
}

TEST_CASE("logs: each request at debug, retries at warn, never the token") {
  KubeConfig config;
  config.token = "secret-token-3f9c";
  Harness h({answer(500, kStatus500), answer(200, "{}"), answer(401, "")}, {}, config);
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  logger->set_level(spdlog::level::debug);
  spdlog::set_default_logger(logger);
  CHECK(h.client->get("/api/v1/nodes/n1").ok());
  CHECK_FALSE(h.client->get("/api/v1/nodes/n1").ok());
  spdlog::set_default_logger(previous);
  const std::string text = out.str();
  CAPTURE(text);
  CHECK(text.find("kube: GET /api/v1/nodes/n1 500") != std::string::npos);
  CHECK(text.find("500 InternalError: etcd hiccup") != std::string::npos);
  CHECK(text.find("retry 1 of") != std::string::npos);
  CHECK(text.find("kube: GET /api/v1/nodes/n1 200") != std::string::npos);
  CHECK(text.find("kube: GET /api/v1/nodes/n1 401") != std::string::npos);
  for (const Sent& s : h.sent) CHECK(s.request.bearer_token == config.token);  // the transport's to carry
  CHECK(text.find(config.token) == std::string::npos);
  CHECK(text.find("Bearer") == std::string::npos);
}

TEST_CASE("client setup errors surface from ready() and every request") {
  KubeConfig config;
  config.server = "https://127.0.0.1:6443";
  config.ca_pem = "not a certificate";
  config.token = "t";
  ApiClient client(config);
  REQUIRE_FALSE(client.ready().ok());
  CHECK(client.ready().error().message.find("CA") != std::string::npos);
  auto r = client.get("/api/v1/nodes/n1");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().reason == "ClientSetup");
}

}  // namespace
}  // namespace iogate
