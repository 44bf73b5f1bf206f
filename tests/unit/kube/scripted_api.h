// The API server as a test scripts it, behind ApiClient's seam (kube/http_transport.h): each
// request is kept for the test to check (method, path, content type, JSON body) and answered by
// the test, from a script of the exchanges it expects in order ("GET /api/v1/nodes/n1" and the
// answer), or by a function of the request once the script is spent; a watch by the next of the
// watches the test scripted (its events fed as the test goes, fed_body.h). Nothing here knows what
// Kubernetes would do with a request: merge semantics, resourceVersion checks, dryRun and watch
// semantics are the real kube-apiserver's, in the e2e tests (tests/e2e).
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fed_body.h"
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
  // The next watch opened: a 200 whose body is the returned feed, or `status` with `body` (a Status).
  // With none left, a watch gets `no_watch_left`'s answer, or where none was given cannot be opened
  // at all (kConnect, as from a transport that cannot stream; not kept among the requests), so a
  // watcher falls back to reads.
  std::shared_ptr<Feed> expect_watch(int status = 200, std::string body = "") {
    std::lock_guard<std::mutex> lock(mu_);
    watches_.push_back({status, std::move(body), std::make_shared<Feed>()});
    return watches_.back().feed;
  }
  void no_watch_left(int status, std::string body) {
    std::lock_guard<std::mutex> lock(mu_);
    no_watch_left_ = Watch{status, std::move(body), nullptr};
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

  // A scripted watch is kept among the requests with the method "WATCH".
  StreamResult open_stream(const HttpRequest& request, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (watches_.empty() && !no_watch_left_) {
      lock.unlock();
      return Transport::open_stream(request, timeout);
    }
    HttpRequest kept = request;
    kept.method = "WATCH";
    sent_.push_back(kept);
    Watch w = watches_.empty() ? *no_watch_left_ : std::move(watches_.front());
    if (!watches_.empty()) watches_.pop_front();
    OpenedStream o;
    o.response.status = w.status;
    if (w.status == 200) o.body = std::make_unique<FedBody>(w.feed);
    else o.response.body = w.body;
    return o;
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
  struct Watch {
    int status;
    std::string body;
    std::shared_ptr<Feed> feed;
  };
  mutable std::mutex mu_;
  std::deque<Step> script_;
  std::deque<Watch> watches_;
  std::optional<Watch> no_watch_left_;
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
    config.token = std::string("t");  // not from the literal: GCC 12's -O3 -Wrestrict false positive
    client = std::make_unique<ApiClient>(config, retry, std::move(transport), ClientClock::real(), 1);
  }
};

}  // namespace iogate::testing
