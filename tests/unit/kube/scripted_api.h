// The API server as a test scripts it, behind ApiClient's seam (kube/http_transport.h): each
// request is kept for the test to check (method, path, content type, JSON body) and answered by
// the test, from a script of the exchanges it expects in order ("GET /api/v1/nodes/n1" and the
// answer), or by a function of the request once the script is spent. Nothing here knows what
// Kubernetes would do with a request: merge semantics, resourceVersion checks, dryRun and watch
// are the real kube-apiserver's, in the e2e tests (tests/e2e). A scripted transport cannot
// stream, so a watcher falls back to reads (watch_waiter_test.cc scripts watches).
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"

namespace iogate::testing {

// A JSON answer, as the API server sends an object.
inline HttpResponse json_answer(const nlohmann::json& body, int status = 200) {
  return HttpResponse{status, body.dump(), ""};
}

// The API server's failure: a Status object.
inline HttpResponse status_answer(int code, const std::string& reason, const std::string& message) {
  return json_answer(
      {{"kind", "Status"}, {"status", "Failure"}, {"reason", reason}, {"message", message}, {"code", code}}, code);
}

inline HttpResponse conflict_answer() {
  return status_answer(409, "Conflict",
                       "Operation cannot be fulfilled: the object has been modified; please apply your changes to "
                       "the latest version and try again");
}

class ScriptedApi : public Transport {
 public:
  using Answer = std::function<TransportResult(const HttpRequest&)>;

  // The next exchange: `request` is "METHOD path" as sent (the query included).
  void expect(std::string request, TransportResult answer) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.push_back({std::move(request), std::move(answer)});
  }
  // Answers every request once the script is spent (none by default: such a request fails the test).
  void otherwise(Answer answer) {
    std::lock_guard<std::mutex> lock(mu_);
    otherwise_ = std::move(answer);
  }

  TransportResult send(const HttpRequest& request, std::chrono::milliseconds) override {
    std::unique_lock<std::mutex> lock(mu_);
    sent_.push_back(request);
    const std::string line = request.method + " " + request.path;
    if (!script_.empty()) {
      Step step = std::move(script_.front());
      script_.pop_front();
      CHECK(line == step.request);
      return step.answer;
    }
    Answer answer = otherwise_;
    lock.unlock();
    if (!answer) {
      FAIL_CHECK("unscripted request: " << line);
      return status_answer(418, "Unscripted", line);
    }
    return answer(request);
  }

  // Every request so far, and "METHOD path" of each.
  std::vector<HttpRequest> sent() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_;
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const HttpRequest& r : sent()) out.push_back(r.method + " " + r.path);
    return out;
  }
  int count(std::string_view method) const {
    int n = 0;
    for (const HttpRequest& r : sent()) n += r.method == method;
    return n;
  }
  // Whether every scripted exchange took place.
  bool spent() const {
    std::lock_guard<std::mutex> lock(mu_);
    return script_.empty();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    sent_.clear();
  }

 private:
  struct Step {
    std::string request;
    TransportResult answer;
  };
  mutable std::mutex mu_;
  std::deque<Step> script_;
  Answer otherwise_;
  std::vector<HttpRequest> sent_;
};

// A request's JSON body.
inline nlohmann::json body_of(const HttpRequest& r) { return nlohmann::json::parse(r.body); }

// Short backoff so that retried requests take milliseconds.
inline RetryPolicy quick_retry() {
  RetryPolicy p;
  p.initial_backoff = std::chrono::milliseconds(1);
  p.max_backoff = std::chrono::milliseconds(5);
  return p;
}

// An ApiClient on a ScriptedApi, with a bearer token, the real clock and a fixed jitter seed.
struct ScriptedClient {
  ScriptedApi* api = nullptr;  // owned by client
  std::unique_ptr<ApiClient> client;
  explicit ScriptedClient(RetryPolicy retry = quick_retry()) {
    auto transport = std::make_unique<ScriptedApi>();
    api = transport.get();
    KubeConfig config;
    config.token = "t";
    config.description = "scripted";
    client = std::make_unique<ApiClient>(config, retry, std::move(transport), ClientClock::real(), 1);
  }
};

}  // namespace iogate::testing
