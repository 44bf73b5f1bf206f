#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "webhook/node_cache.h"

using namespace iogate;
using namespace std::chrono_literals;

namespace {

struct FakeApi {
  std::atomic<int> calls{0};
  bool down = false;
  ApiResult<nlohmann::json> get(const std::string& name) {
    ++calls;
    if (down) return ApiError{"GET /api/v1/nodes/" + name, 503, "ServiceUnavailable", "down"};
    if (name == "gone") return ApiError{"GET /api/v1/nodes/gone", 404, "NotFound", "nodes \"gone\" not found"};
    return nlohmann::json{{"metadata", {{"name", name}}}};
  }
};

}  // namespace

TEST_CASE("a node is fetched once per ttl; a missing one once per negative ttl; failures are not kept") {
  FakeApi api;
  NodeCache::Clock::time_point now{};
  NodeCache cache([&](const std::string& n) { return api.get(n); }, 30s, 5s, [&] { return now; });
  CachedNode a = cache.get("gpu-1");
  CHECK(a.found);
  CHECK_FALSE(a.from_cache);
  CHECK(a.node["metadata"]["name"] == "gpu-1");
  CHECK(cache.get("gpu-1").from_cache);
  now += 29s;
  CHECK(cache.get("gpu-1").from_cache);
  now += 2s;
  CHECK_FALSE(cache.get("gpu-1").from_cache);
  CHECK(api.calls == 2);

  CachedNode gone = cache.get("gone");
  CHECK_FALSE(gone.found);
  CHECK(gone.error.empty());
  CHECK(cache.get("gone").from_cache);
  now += 6s;
  CHECK_FALSE(cache.get("gone").from_cache);

  api.down = true;
  CachedNode failed = cache.get("gpu-2");
  CHECK_FALSE(failed.found);
  CHECK(failed.error.find("503") != std::string::npos);
  CHECK_FALSE(cache.get("gpu-2").from_cache);  // tried again
  CHECK(cache.fetches() == 6);
}

TEST_CASE("concurrent requests for one node share one fetch") {
  FakeApi api;
  NodeCache cache(
      [&](const std::string& n) {
        std::this_thread::sleep_for(50ms);
        return api.get(n);
      },
      30s, 5s);
  std::vector<std::thread> threads;
  std::atomic<int> found{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] { found += cache.get("gpu-1").found ? 1 : 0; });
  }
  for (auto& t : threads) t.join();
  CHECK(found == 8);
  CHECK(api.calls == 1);
}
