// A PVC waiter on a watch, against a scripted transport whose watches deliver the events the test
// writes: the requests it makes (one watch for a whole wait), the lost race answered by the
// watch, the silence that turns it into a poller (the lease judged on reads as always), and a
// server that cannot watch. The real API server's watch is driven by the e2e preflight tests.
#include <doctest/doctest.h>

#include <condition_variable>
#include <deque>
#include <mutex>

#include "fed_body.h"
#include "kube/api_client.h"
#include "kube/shared_result.h"
#include "kube/watch_stream.h"
#include "scripted_api.h"

namespace iogate {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;
using std::chrono::system_clock;

using testing::FedBody;
using testing::Feed;

void feed(const std::shared_ptr<Feed>& f, BodyStream::Read read, std::string bytes = "") {
  f->push(read, std::move(bytes));
}

const PvcRef kPvc{"ml", "imagenet"};

json pvc(int rv, const std::map<std::string, std::string>& annotations) {
  json a = json::object();
  for (const auto& [k, v] : annotations) a[k] = v;
  return {{"kind", "PersistentVolumeClaim"},
          {"metadata",
           {{"name", kPvc.name}, {"namespace", kPvc.ns}, {"resourceVersion", std::to_string(rv)}, {"annotations", a}}}};
}

std::string event_line(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump() + "\n";
}

std::string lock_of(const std::string& pod, seconds lease, system_clock::time_point renewed = system_clock::now()) {
  return probe_lock_to_json(ProbeLock{pod, "node-x", renewed, lease}).dump();
}

std::string result_of(const std::string& pod) {
  return recorded_result_to_json(
             RecordedResult{"randread/4k/qd32x1", "node-x", pod, system_clock::now(), json{{"iops", 12345}}})
      .dump();
}

// The PVC as this test scripts it (scripted_api.h): a GET answers `current`, a PATCH the next of
// `patches` (200 by default), a watch the next the test scripted.
struct Harness {
  testing::ScriptedClient s;
  testing::ScriptedApi* api = s.api;
  std::mutex mu;
  json current;
  std::deque<int> patches;
  Harness() {
    api->otherwise([this](const HttpRequest& r) -> TransportResult {
      std::lock_guard<std::mutex> lock(mu);
      if (r.method == "GET") return testing::json_answer(current);
      int status = 200;
      if (!patches.empty()) {
        status = patches.front();
        patches.pop_front();
      }
      if (status == 409) return testing::conflict_answer();
      return testing::json_answer(current, status);
    });
  }
  ShareRequest request(milliseconds wait) const {
    ShareRequest r;
    r.pvc = kPvc;
    r.workload = "randread/4k/qd32x1";
    r.ttl = std::chrono::hours(1);
    r.pod = "ml/me";
    r.node = "node-me";
    r.lease = seconds(3);
    r.wait_until = steady_clock::now() + wait;
    r.poll_interval = milliseconds(100);
    return r;
  }
  const char* forbidden = R"({"kind":"Status","reason":"Forbidden","message":"cannot watch","code":403})";
};

}  // namespace

TEST_CASE("watch lines: events across chunks, several in one chunk, a last line without newline") {
  auto f = std::make_shared<Feed>();
  std::string a = event_line("ADDED", pvc(1, {}));
  std::string b = event_line("MODIFIED", pvc(2, {}));
  feed(f, BodyStream::Read::kData, a.substr(0, 10));
  feed(f, BodyStream::Read::kData,
       a.substr(10) + b + R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}})");
  feed(f, BodyStream::Read::kEnded);
  WatchStream w("WATCH /x", std::make_unique<FedBody>(f));
  auto r = w.next(milliseconds(100));
  REQUIRE(r.next == WatchStream::Next::kEvent);
  CHECK(r.event.type == WatchEventType::kAdded);
  CHECK(r.event.object["metadata"]["resourceVersion"] == "1");
  r = w.next(milliseconds(100));
  REQUIRE(r.next == WatchStream::Next::kEvent);
  CHECK(r.event.type == WatchEventType::kModified);
  r = w.next(milliseconds(100));
  REQUIRE(r.next == WatchStream::Next::kEvent);
  CHECK(r.event.type == WatchEventType::kBookmark);
  CHECK(w.next(milliseconds(100)).next == WatchStream::Next::kEnded);
}

TEST_CASE("watch lines: silence is idle, a line that is no event fails, a 410 ERROR is an expiry") {
  auto f = std::make_shared<Feed>();
  WatchStream w("WATCH /x", std::make_unique<FedBody>(f));
  CHECK(w.next(milliseconds(20)).next == WatchStream::Next::kIdle);
  feed(f, BodyStream::Read::kData,
       R"({"kind":"PersistentVolumeClaimList","items":[]})"
       "\n");
  auto r = w.next(milliseconds(100));
  CHECK(r.next == WatchStream::Next::kFailed);
  CHECK(r.error.reason == "InvalidResponse");

  auto gone = parse_watch_event(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
  REQUIRE(gone);
  CHECK(watch_expired(*gone));
  CHECK_FALSE(parse_watch_event(R"({"type":"SOMETHING","object":{}})"));
  CHECK_FALSE(parse_watch_event("not json"));
}

TEST_CASE("a waiter on a watch: one request for the whole wait, the result arriving as an event") {
  Harness h;
  auto w = h.api->expect_watch();
  feed(w, BodyStream::Read::kData,
       event_line("ADDED", pvc(1, {{kPvcLockAnnotation, lock_of("ml/prober", seconds(3))}})));
  feed(w, BodyStream::Read::kData,
       event_line("MODIFIED", pvc(2, {{kPvcLockAnnotation, lock_of("ml/prober", seconds(3))}})));
  feed(w, BodyStream::Read::kData, event_line("MODIFIED", pvc(3, {{kPvcResultAnnotation, result_of("ml/prober")}})));
  auto d = claim_or_reuse(*h.s.client, h.request(seconds(10)));
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kReuse);
  CHECK(d->reused->pod == "ml/prober");
  const auto sent = h.api->sent();
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].method == "WATCH");
  // The first watch starts from the PVC as it is (no resourceVersion), for that one PVC.
  CHECK(sent[0].path.find("fieldSelector=metadata.name%3Dimagenet") != std::string::npos);
  CHECK(sent[0].path.find("resourceVersion=") == std::string::npos);
}

TEST_CASE("a lost race: the 409's winner arrives on the same watch, no read in between") {
  Harness h;
  auto w = h.api->expect_watch();
  h.patches.push_back(409);
  feed(w, BodyStream::Read::kData, event_line("ADDED", pvc(1, {})));
  feed(w, BodyStream::Read::kData,
       event_line("MODIFIED", pvc(2, {{kPvcLockAnnotation, lock_of("ml/winner", seconds(3))}})));
  feed(w, BodyStream::Read::kData, event_line("MODIFIED", pvc(3, {{kPvcResultAnnotation, result_of("ml/winner")}})));
  auto d = claim_or_reuse(*h.s.client, h.request(seconds(10)));
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kReuse);
  CHECK(h.api->count("WATCH") == 1);
  CHECK(h.api->count("PATCH") == 1);
  CHECK(h.api->count("GET") == 0);
}

TEST_CASE("a watch the server ends is reopened from the last resourceVersion") {
  Harness h;
  auto first = h.api->expect_watch();
  auto second = h.api->expect_watch();
  feed(first, BodyStream::Read::kData,
       event_line("ADDED", pvc(41, {{kPvcLockAnnotation, lock_of("ml/prober", seconds(3))}})));
  std::thread ender([&] {
    std::this_thread::sleep_for(milliseconds(1200));  // past the reopen-at-once guard
    feed(first, BodyStream::Read::kEnded);
    feed(second, BodyStream::Read::kData,
         event_line("MODIFIED", pvc(42, {{kPvcResultAnnotation, result_of("ml/prober")}})));
  });
  auto d = claim_or_reuse(*h.s.client, h.request(seconds(10)));
  ender.join();
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kReuse);
  REQUIRE(h.api->count("WATCH") == 2);
  CHECK(h.api->sent()[1].path.find("&resourceVersion=41") != std::string::npos);
  CHECK(h.api->count("GET") == 0);
}

TEST_CASE("a silent watch: the waiter reads the PVC itself, and takes a dead holder's lock over after a lease") {
  Harness h;
  auto w = h.api->expect_watch();
  json held = pvc(5, {{kPvcLockAnnotation, lock_of("ml/dead", seconds(3))}});
  h.current = held;
  feed(w, BodyStream::Read::kData, event_line("ADDED", held));
  const auto t0 = steady_clock::now();
  auto d = claim_or_reuse(*h.s.client, h.request(seconds(20)));
  const auto took = steady_clock::now() - t0;
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kProbeLocked);
  CHECK(d->why.find("took over the probe lock of pod ml/dead") != std::string::npos);
  // Silence for a renewal period and its slack (1 s + 2 s), then polls for a whole lease (3 s).
  CHECK(took >= seconds(6));
  CHECK(h.api->count("GET") >= 20);  // a poll interval (100 ms) apart
  CHECK(h.api->count("WATCH") == 1);
  CHECK(h.api->count("PATCH") == 1);
}

TEST_CASE("a Role without watch: the waiter polls, as before, and says how to fix it") {
  Harness h;
  h.api->expect_watch(403, h.forbidden);
  h.current = pvc(9, {{kPvcLockAnnotation, lock_of("ml/prober", seconds(3))}});
  std::thread recorder([&] {
    std::this_thread::sleep_for(milliseconds(500));
    std::lock_guard<std::mutex> lock(h.mu);
    h.current = pvc(10, {{kPvcResultAnnotation, result_of("ml/prober")}});
  });
  auto d = claim_or_reuse(*h.s.client, h.request(seconds(10)));
  recorder.join();
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kReuse);
  CHECK(h.api->count("WATCH") == 1);  // refused once, never asked again
  CHECK(h.api->count("GET") >= 3);
}

TEST_CASE("a live holder past the waiter's time: still probing, after one watch") {
  Harness h;
  auto w = h.api->expect_watch();
  feed(w, BodyStream::Read::kData,
       event_line("ADDED", pvc(1, {{kPvcLockAnnotation, lock_of("ml/prober", seconds(3))}})));
  std::atomic<bool> done{false};
  std::thread renewer([&] {
    for (int rv = 2; !done.load(); ++rv) {
      std::this_thread::sleep_for(milliseconds(300));
      feed(w, BodyStream::Read::kData,
           event_line("MODIFIED", pvc(rv, {{kPvcLockAnnotation, lock_of("ml/prober", seconds(3))}})));
    }
  });
  auto d = claim_or_reuse(*h.s.client, h.request(milliseconds(1500)));
  done = true;
  renewer.join();
  REQUIRE(d.ok());
  CHECK(d->action == ShareAction::kHolderStillProbing);
  CHECK(d->holder->pod == "ml/prober");
  CHECK(h.api->sent().size() == 1);
}

}  // namespace iogate
