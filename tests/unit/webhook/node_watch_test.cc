// The webhook's list+watch node cache: what a decision reads of a Node (decision_view judges as the
// whole Node does), the store's freshness against its lag bound (injected times), and the
// informer against a scripted transport whose LIST pages and watches the test writes: pages
// followed by their continue token, the watch opened from the list's resourceVersion and reopened
// from the last one seen, events applied, 410 Gone and a relist, a silent watch reopened, a
// broken watch answered from memory within the bound and by GET after it, and a ClusterRole that
// refuses to list (GETs, as before). The real API server's list and watch are e2e.webhook_nodes'.
#include <doctest/doctest.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "admission_fixtures.h"
#include "base/clock.h"
#include "fed_body.h"
#include "heap_peak.h"
#include "kube/api_client.h"
#include "kube/scripted_api.h"
#include "webhook/json_footprint.h"
#include "webhook/node_check.h"
#include "webhook/node_informer.h"
#include "webhook/node_source.h"
#include "webhook/node_store.h"
#include "webhook/storage_demand.h"

namespace iogate {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// A Node as the API server returns it: labels of several owners, taints, managedFields and the
// status a kubelet reports (the bulk of a real Node's JSON).
json full_node(const std::string& name, const std::map<std::string, std::string>& iogate_labels,
               const json& taints = json::array(), int rv = 1) {
  json labels = {{"kubernetes.io/hostname", name},
                 {"kubernetes.io/os", "linux"},
                 {"node.kubernetes.io/instance-type", "p5.48xlarge"},
                 {"nvidia.com/gpu.count", "8"},
                 {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
                 {"iogate.io/tier", "fast"}};
  for (const auto& [k, v] : iogate_labels) labels[k] = v;
  json images = json::array();
  for (int i = 0; i < 30; ++i) {
    images.push_back({{"names",
                       {fmt::format("registry.example.com/team/image-{}@sha256:{:064x}", i, i),
                        fmt::format("registry.example.com/team/image-{}:v1.{}", i, i)}},
                      {"sizeBytes", 1000000 + i}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"uid", "5c3c1b1e-8e2a-4c55-9c0f-7d9b0b6d1f2a"},
            {"resourceVersion", std::to_string(rv)},
            {"labels", labels},
            {"annotations", {{"iogate.io/report", std::string(2000, 'r')}, {"node.alpha.kubernetes.io/ttl", "0"}}},
            {"managedFields",
             {{{"manager", "kubelet"}, {"operation", "Update"}, {"time", "2026-12-06T10:00:00Z"}},
              {{"manager", "iogate"}, {"operation", "Apply"}, {"time", "2026-12-06T10:00:05Z"}}}}}},
          {"spec", {{"podCIDR", "10.0.1.0/24"}, {"taints", taints}}},
          {"status",
           {{"capacity", {{"cpu", "192"}, {"memory", "2063731456Ki"}, {"nvidia.com/gpu", "8"}}},
            {"conditions",
             {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}},
              {{"type", "StorageBelowPolicy"}, {"status", "False"}}}},
            {"addresses", {{{"type", "InternalIP"}, {"address", "10.0.1.17"}}}},
            {"images", images}}}};
}

json below_policy_taint() {
  return json::array({{{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}},
                      {{"key", "iogate.io/storage-below-policy"}, {"value", "true"}, {"effect", "NoSchedule"}}});
}

// --- a scripted API server: LIST pages, GETs by name, watches fed by the test ---------------------

using testing::Feed;

const char* kForbidden =
    R"({"kind":"Status","reason":"Forbidden","code":403,"message":"nodes is forbidden: User \"system:serviceaccount:iogate-system:iogate-webhook\" cannot list resource \"nodes\""})";
const char* kUnavailable = R"({"kind":"Status","reason":"ServiceUnavailable","code":503,"message":"down"})";

// The API as this test scripts it (kube/scripted_api.h): a LIST the next of the pages added (503
// when none is left), a watch the next added (503 when none is left). Threads: the informer's.
struct ScriptedNodes {
  testing::ScriptedApi* api;
  std::mutex mu;
  std::deque<HttpResponse> lists;

  explicit ScriptedNodes(testing::ScriptedApi* a) : api(a) {
    api->no_watch_left(503, kUnavailable);
    api->otherwise([this](const HttpRequest&) -> TransportResult {
      std::lock_guard<std::mutex> lock(mu);
      if (lists.empty()) return HttpResponse{503, kUnavailable, ""};
      HttpResponse r = lists.front();
      lists.pop_front();
      return r;
    });
  }
  std::shared_ptr<Feed> add_watch(int status = 200) {
    return api->expect_watch(status, status == 403 ? kForbidden : status == 200 ? "" : kUnavailable);
  }
  void add_list(const json& items, const std::string& rv, const std::string& cont = "") {
    json page = {{"kind", "NodeList"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", rv}}}, {"items", items}};
    if (!cont.empty()) page["metadata"]["continue"] = cont;
    std::lock_guard<std::mutex> lock(mu);
    lists.push_back(HttpResponse{200, page.dump(), ""});
  }
  void add_list_answer(int status, const char* body) {
    std::lock_guard<std::mutex> lock(mu);
    lists.push_back(HttpResponse{status, body, ""});
  }
  std::vector<std::string> requests() const { return api->lines(); }
  int count(std::string_view method) const { return api->count(method); }
};

// Polls `done` for up to 20 s (a loaded machine): the informer runs on its own thread.
bool eventually(const std::function<bool()>& done) {
  for (auto until = Clock::now() + seconds(20); Clock::now() < until; std::this_thread::sleep_for(milliseconds(5))) {
    if (done()) return true;
  }
  return done();
}

NodeInformerOptions fast_options() {
  NodeInformerOptions o;
  o.request_deadline = milliseconds(100);
  o.backoff = RetryPolicy{0, milliseconds(1), milliseconds(10)};
  return o;
}

struct Harness {
  testing::ScriptedClient s{RetryPolicy{1, milliseconds(1), milliseconds(1)}};
  std::unique_ptr<ScriptedNodes> api = std::make_unique<ScriptedNodes>(s.api);
  std::unique_ptr<ApiClient>& client = s.client;  // moved into the informer
  NodeStore store;
  explicit Harness(milliseconds max_lag = seconds(10)) : store(max_lag) {}
  NodeStoreState state() const { return store.state(Clock::now()); }
  NodeStore::Answer answer(const std::string& name) const { return store.find(name, Clock::now()).answer; }
  std::string label(const std::string& name, const std::string& key) const {
    auto f = store.find(name, Clock::now());
    if (f.answer != NodeStore::Answer::kFound) return "<none>";
    return f.node->at("metadata").at("labels").value(key, "<unset>");
  }
};

using A = NodeStore::Answer;

}  // namespace

// --- decision_view ---------------------------------------------------------------------------------

TEST_CASE("decision_view keeps what check_node reads: the same findings as the whole Node, for every case") {
  Policy floors = test::gpu_feed("enforce");
  Policy demand = test::load_policy(
      "mode: enforce\nworkload: {mode: auto}\nrules:\n"
      "  - name: feed-gpus\n    demand: {workload: resnet50, accelerator: h100, sample_size: 110k}\n");
  const std::vector<json> nodes = {
      full_node("fast", {{"iogate.io/randread-iops", "250000"}, {"iogate.io/disk-class", "nvme"}}),
      full_node("slow", {{"iogate.io/randread-iops", "3000"}, {"iogate.io/disk-class", "nvme"}}),
      full_node("hdd", {{"iogate.io/randread-iops", "900000"}, {"iogate.io/disk-class", "hdd"}}),
      full_node("tainted", {{"iogate.io/randread-iops", "90000"}, {"iogate.io/disk-class", "nvme"}},
                below_policy_taint()),
      full_node("unlabelled", {}),
      full_node("garbled", {{"iogate.io/randread-iops", "12k"}, {"iogate.io/disk-class", "quantum"}}),
      full_node("few-accel", {{"iogate.io/randread-iops", "250000"},
                              {"iogate.io/disk-class", "nvme"},
                              {"iogate.io/accelerators.feed-gpus", "3"}}),
      full_node("many-accel", {{"iogate.io/randread-iops", "250000"},
                               {"iogate.io/disk-class", "nvme"},
                               {"iogate.io/accelerators.feed-gpus", "64"},
                               {"iogate.io/accelerators.other", "1"}}),
  };
  int problems = 0, unchecked = 0;
  for (const Policy* policy : {&floors, &demand}) {
    StorageDemand d = storage_demand(*policy, test::pod("8"), {}, std::nullopt);
    REQUIRE(d.selected);
    for (const json& n : nodes) {
      const std::string name = n["metadata"]["name"];
      CAPTURE(name);
      NodeFindings whole = check_node(d, name, n);
      NodeFindings view = check_node(d, name, decision_view(n));
      CHECK(view.problems == whole.problems);
      CHECK(view.unchecked == whole.unchecked);
      problems += int(whole.problems.size());
      unchecked += int(whole.unchecked.size());
    }
  }
  // The cases judge something: refusals and unknowns both occur, so equal findings mean something.
  CHECK(problems >= 5);
  CHECK(unchecked >= 3);
}

TEST_CASE("decision_view drops what no decision reads: about 2 KB parsed where the Node takes tens") {
  json n = full_node("gpu-1",
                     {{"iogate.io/randread-iops", "250000"},
                      {"iogate.io/disk-class", "nvme"},
                      {"iogate.io/accelerators.feed-gpus", "8"}},
                     below_policy_taint());
  json v = decision_view(n);
  CHECK(v == json{{"metadata",
                   {{"name", "gpu-1"},
                    {"labels",
                     {{"iogate.io/randread-iops", "250000"},
                      {"iogate.io/disk-class", "nvme"},
                      {"iogate.io/accelerators.feed-gpus", "8"}}}}},
                  {"spec", {{"taints", {{{"key", "iogate.io/storage-below-policy"}, {"effect", "NoSchedule"}}}}}}});
  CHECK(decision_view(full_node("plain", {})) == json{{"metadata", {{"name", "plain"}, {"labels", json::object()}}}});
  CHECK(n.dump().size() > 8000);
  CHECK(v.dump().size() < 300);

  // A LIST page is held whole while its Nodes become views: at the informer's page size, a page of
  // such Nodes (real ones run to 30 KB: more images, longer managedFields) stays well within the
  // chart's 128 MiB beside the 76 MiB the admission budgets may hold.
  const size_t whole = json_footprint(n.dump());
  MESSAGE("a Node of " << n.dump().size() << " bytes takes up to " << whole << " parsed");
  CHECK(size_t(NodeInformerOptions{}.page_size) * whole * 3 < 32u * 1024 * 1024);

  // What the store counts for it (json_footprint of the view, and the map's node): 5,000 such
  // nodes in about 12 MB, where their whole Nodes would take over 200 MB parsed.
  // The count bounds what the heap holds for them (heap_peak.h counts every block by its size).
  auto store = std::make_unique<NodeStore>(seconds(10));
  const size_t before = test::heap_in_use();
  NodeStore::Listing listing;
  for (int i = 0; i < 5000; ++i) {
    n["metadata"]["name"] = fmt::format("gpu-{:05}", i);
    listing.add(n);
  }
  store->replace(std::move(listing), "1", Clock::now());
  const size_t held = test::heap_in_use() - before;
  NodeStoreState s = store->state(Clock::now());
  CHECK(s.nodes == 5000);
  MESSAGE("5,000 nodes' views: " << s.bytes << " bytes counted, " << held << " held");
  CHECK(held <= s.bytes);
  CHECK(s.bytes < 5000 * 2500);
  CHECK(s.bytes > 5000 * 1000);
  CHECK(s.bytes * 10 < 5000 * whole);
}

// --- the store: freshness against its lag bound, events, bytes --------------------------------

TEST_CASE("the store: stale until synced; current while watching; within max_lag after the watch closes") {
  NodeStore store(seconds(10));
  const Clock::time_point t0{};
  CHECK(store.find("n1", t0).answer == A::kStale);
  NodeStore::Listing l;
  l.add(full_node("n1", {{"iogate.io/randread-iops", "5000"}}));
  store.replace(std::move(l), "10", t0);
  CHECK(store.find("n1", t0 + seconds(10)).answer == A::kFound);
  CHECK(store.find("n1", t0 + seconds(11)).answer == A::kStale);  // listed, never watched
  CHECK(store.find("ghost", t0 + seconds(1)).answer == A::kNotFound);

  store.watch_opened(t0 + seconds(1));
  CHECK(store.find("n1", t0 + std::chrono::hours(1)).answer == A::kFound);  // an open watch is current
  store.watch_closed(t0 + std::chrono::hours(1));
  CHECK(store.find("n1", t0 + std::chrono::hours(1) + seconds(10)).answer == A::kFound);
  CHECK(store.find("n1", t0 + std::chrono::hours(1) + seconds(11)).answer == A::kStale);
  CHECK(store.find("ghost", t0 + std::chrono::hours(1) + seconds(11)).answer == A::kStale);
  NodeStoreState s = store.state(t0 + std::chrono::hours(1) + seconds(11));
  CHECK(s.synced);
  CHECK_FALSE(s.watching);
  CHECK_FALSE(s.current);
  CHECK(s.since_contact == milliseconds(11000));
}

TEST_CASE("the store applies ADDED, MODIFIED, DELETED and BOOKMARK; bytes follow; the lag from managedFields") {
  NodeStore store(seconds(10));
  const Clock::time_point t0{};
  NodeStore::Listing l;
  l.add(full_node("n1", {{"iogate.io/randread-iops", "5000"}}));
  l.add(full_node("n2", {}));
  store.replace(std::move(l), "10", t0);
  store.watch_opened(t0);
  const size_t two = store.state(t0).bytes;

  auto wall = *parse_rfc3339_utc("2026-12-06T10:00:07Z");  // 2 s after the newest managedFields time
  store.apply(WatchEvent{WatchEventType::kAdded, full_node("n3", {{"iogate.io/disk-class", "nvme"}}, {}, 11)}, t0,
              wall);
  store.apply(WatchEvent{WatchEventType::kModified, full_node("n1", {{"iogate.io/randread-iops", "9000"}}, {}, 12)}, t0,
              wall);
  store.apply(WatchEvent{WatchEventType::kDeleted, full_node("n2", {}, {}, 13)}, t0, wall);
  store.apply(WatchEvent{WatchEventType::kBookmark, json{{"metadata", {{"resourceVersion", "20"}}}}}, t0, wall);
  CHECK(store.find("n3", t0).answer == A::kFound);
  CHECK(store.find("n2", t0).answer == A::kNotFound);
  CHECK(store.find("n1", t0).node->at("metadata").at("labels").at("iogate.io/randread-iops") == "9000");
  NodeStoreState s = store.state(t0);
  CHECK(s.nodes == 2);
  CHECK(s.events == 3);
  CHECK(s.bookmarks == 1);
  CHECK(s.resource_version == "20");
  CHECK(s.last_event_lag == milliseconds(2000));
  CHECK(s.bytes > two / 2);
  CHECK(s.bytes < two * 2);
  // Deleting everything gives every byte back.
  store.apply(WatchEvent{WatchEventType::kDeleted, full_node("n1", {})}, t0, wall);
  store.apply(WatchEvent{WatchEventType::kDeleted, full_node("n3", {})}, t0, wall);
  CHECK(store.state(t0).bytes == 0);
  CHECK(to_json(store.state(t0))["nodes"] == 0);
}

// --- the informer against a scripted API server -------------------------------------------------

TEST_CASE("informer: LIST in pages, WATCH from the list's version, events applied, reopened from the last one") {
  Harness h;
  h.api->add_list(json::array({full_node("n1", {{"iogate.io/randread-iops", "5000"}}), full_node("n2", {})}), "10",
                  "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTB9+/=");
  h.api->add_list(json::array({full_node("n3", {})}), "10");
  auto w1 = h.api->add_watch();
  auto w2 = h.api->add_watch();
  NodeInformer informer(std::move(h.client), h.store, fast_options());
  REQUIRE(eventually([&] { return h.state().synced && h.state().watching; }));
  CHECK(h.state().nodes == 3);
  CHECK(h.answer("n3") == A::kFound);
  CHECK(h.answer("late") == A::kNotFound);

  w1->event("ADDED", full_node("late", {{"iogate.io/disk-class", "nvme"}}, {}, 11));
  w1->event("MODIFIED", full_node("n1", {{"iogate.io/randread-iops", "9000"}}, {}, 12));
  w1->event("DELETED", full_node("n2", {}, {}, 13));
  w1->event("BOOKMARK", json{{"kind", "Node"}, {"metadata", {{"resourceVersion", "20"}}}});
  REQUIRE(eventually([&] { return h.state().bookmarks == 1; }));
  CHECK(h.state().events == 3);
  CHECK(h.answer("late") == A::kFound);
  CHECK(h.answer("n2") == A::kNotFound);
  CHECK(h.label("n1", "iogate.io/randread-iops") == "9000");

  // The server's timeoutSeconds: the next watch starts at the bookmark's version.
  w1->push(BodyStream::Read::kEnded);
  REQUIRE(eventually([&] { return h.api->count("WATCH") == 2 && h.state().watching; }));
  w2->event("MODIFIED", full_node("n1", {{"iogate.io/randread-iops", "12000"}}, {}, 21));
  REQUIRE(eventually([&] { return h.label("n1", "iogate.io/randread-iops") == "12000"; }));

  std::vector<std::string> log = h.api->requests();
  REQUIRE(log.size() == 4);
  CHECK(log[0] == "GET /api/v1/nodes?limit=100");
  CHECK(log[1] == "GET /api/v1/nodes?limit=100&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTB9%2B%2F%3D");
  CHECK(log[2].rfind("WATCH /api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds=", 0) ==
        0);
  CHECK(log[3].rfind("WATCH /api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=20&timeoutSeconds=", 0) ==
        0);
  int timeout = std::stoi(log[2].substr(log[2].rfind('=') + 1));
  CHECK(timeout >= 150);
  CHECK(timeout <= 300);
  CHECK(h.state().lists == 1);
}

TEST_CASE("informer: 410 Gone lists again, and the new list replaces the old (a node gone meanwhile goes)") {
  Harness h;
  h.api->add_list(json::array({full_node("n1", {}), full_node("n2", {})}), "5");
  auto w1 = h.api->add_watch();
  h.api->add_list(json::array({full_node("n2", {}), full_node("n9", {})}), "30");
  auto w2 = h.api->add_watch();
  NodeInformer informer(std::move(h.client), h.store, fast_options());
  REQUIRE(eventually([&] { return h.state().watching; }));
  w1->event("ERROR", json{{"kind", "Status"},
                          {"status", "Failure"},
                          {"message", "too old resource version: 5 (25)"},
                          {"reason", "Expired"},
                          {"code", 410}});
  REQUIRE(eventually([&] { return h.state().lists == 2 && h.state().watching; }));
  CHECK(h.answer("n1") == A::kNotFound);
  CHECK(h.answer("n9") == A::kFound);
  CHECK(informer.state().expired == 1);
  std::vector<std::string> log = h.api->requests();
  REQUIRE(log.size() == 4);
  CHECK(log[2] == "GET /api/v1/nodes?limit=100");
  CHECK(log[3].find("resourceVersion=30&") != std::string::npos);
}

TEST_CASE("informer: a watch silent past the limit is taken for dead and reopened, without a relist") {
  Harness h;
  h.api->add_list(json::array({full_node("n1", {})}), "5");
  h.api->add_watch();  // says nothing
  auto w2 = h.api->add_watch();
  NodeInformerOptions o = fast_options();
  o.silence_limit = milliseconds(200);
  NodeInformer informer(std::move(h.client), h.store, o);
  REQUIRE(eventually([&] { return h.api->count("WATCH") >= 2; }));
  w2->event("BOOKMARK", json{{"metadata", {{"resourceVersion", "6"}}}});
  REQUIRE(eventually([&] { return h.state().bookmarks == 1; }));
  CHECK(h.api->count("GET") == 1);
  CHECK(h.state().current);
}

TEST_CASE("a broken watch: answered from memory within the lag bound, by GET after it, from memory once healed") {
  Harness h(milliseconds(300));
  h.api->add_list(json::array({full_node("n1", {{"iogate.io/randread-iops", "5000"}})}), "5");
  auto w1 = h.api->add_watch();
  int gets = 0;
  NodeCache fallback(
      [&](const std::string& name) -> ApiResult<json> {
        ++gets;
        return decision_view(full_node(name, {{"iogate.io/randread-iops", "7777"}}));
      },
      milliseconds(0), milliseconds(0));
  NodeSource source(&h.store, fallback);
  NodeInformer informer(std::move(h.client), h.store, fast_options());
  REQUIRE(eventually([&] { return h.state().watching; }));
  NodeView v = source.lookup("n1");
  CHECK(v.found);
  CHECK(v.node["metadata"]["labels"]["iogate.io/randread-iops"] == "5000");
  CHECK(source.lookup("ghost").found == false);
  CHECK(gets == 0);

  // The connection breaks; reopening and listing fail (503) from now on.
  w1->push(BodyStream::Read::kFailed);
  REQUIRE(eventually([&] { return !h.state().watching; }));
  REQUIRE(eventually([&] { return !h.state().current; }));
  v = source.lookup("n1");
  CHECK(v.found);
  CHECK(v.node["metadata"]["labels"]["iogate.io/randread-iops"] == "7777");
  CHECK(gets == 1);
  CHECK(source.counters().from_get == 1);
  CHECK(source.counters().from_watch == 2);
  CHECK(informer.state().list_failures + informer.state().watches >= 1);
  CHECK_FALSE(informer.state().last_error.empty());

  // The API is back: a list, a watch, and look-ups from memory again.
  h.api->add_list(json::array({full_node("n1", {{"iogate.io/randread-iops", "8000"}})}), "40");
  h.api->add_watch();
  REQUIRE(eventually([&] { return h.state().current && h.state().lists == 2; }));
  v = source.lookup("n1");
  CHECK(v.node["metadata"]["labels"]["iogate.io/randread-iops"] == "8000");
  CHECK(gets == 1);
}

TEST_CASE("informer: a ClusterRole without list (an older chart): forbidden, every look-up by GET") {
  Harness h;
  h.api->add_list_answer(403, kForbidden);
  int gets = 0;
  NodeCache fallback(
      [&](const std::string& name) -> ApiResult<json> {
        ++gets;
        return decision_view(full_node(name, {}));
      },
      seconds(5), seconds(5));
  NodeSource source(&h.store, fallback);
  NodeInformer informer(std::move(h.client), h.store, fast_options());
  REQUIRE(eventually([&] { return informer.state().forbidden; }));
  CHECK(informer.state().last_error.find("403") != std::string::npos);
  CHECK_FALSE(h.state().synced);
  CHECK(source.lookup("n1").found);
  CHECK(source.lookup("n1").found);  // the GET cache's TTL
  CHECK(gets == 1);
  CHECK(source.counters().from_get == 2);
  CHECK(source.counters().gets == 1);
  // It does not hammer the API: one LIST, then a retry minutes later.
  std::this_thread::sleep_for(milliseconds(200));
  CHECK(h.api->count("GET") == 1);
  CHECK(h.api->count("WATCH") == 0);
  json j = to_json(informer.state());
  CHECK(j["forbidden"] == true);
}

}  // namespace iogate
