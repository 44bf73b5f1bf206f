// ByteBudget: what it lets through at once, in what order, and when it refuses. Waits that must
// end are bounded polls; a wait that must run out is given a short one.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "http/byte_budget.h"

using namespace iogate;
using namespace std::chrono_literals;

namespace {

bool eventually(const std::function<bool()>& done) {
  for (auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return done();
}

}  // namespace

TEST_CASE("byte budget: shares up to the capacity at once; more waits for a share to come back") {
  ByteBudget budget(100);
  ByteBudget::Lease a = budget.acquire(60, 0ms);
  REQUIRE(a.held());
  CHECK(a.bytes() == 60);
  ByteBudget::Lease b = budget.acquire(40, 0ms);
  REQUIRE(b.held());
  CHECK(budget.in_use() == 100);
  CHECK_FALSE(budget.acquire(1, 20ms).held());  // full: the wait runs out

  std::atomic<bool> got{false};
  std::thread waiter([&] {
    ByteBudget::Lease c = budget.acquire(50, 10s);
    got = c.held();
  });
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(got);
  a.reset();  // 60 back: room for 50
  waiter.join();
  CHECK(got);
  CHECK(budget.in_use() == 40);  // c went with its thread
}

TEST_CASE("byte budget: more than the capacity is refused at once; nothing is held at once") {
  ByteBudget budget(100);
  CHECK_FALSE(budget.acquire(101, 1h).held());  // at once: a wait would hold the test for an hour
  CHECK(budget.waiting() == 0);
  ByteBudget::Lease all = budget.acquire(100, 0ms);
  REQUIRE(all.held());
  ByteBudget::Lease none = budget.acquire(0, 0ms);
  CHECK(none.held());
  CHECK(none.bytes() == 0);
}

TEST_CASE("byte budget: leases move, and give their share back once") {
  ByteBudget budget(100);
  ByteBudget::Lease a = budget.acquire(30, 0ms);
  ByteBudget::Lease b = std::move(a);
  CHECK_FALSE(a.held());
  CHECK(b.held());
  CHECK(budget.in_use() == 30);
  {
    ByteBudget::Lease c = budget.acquire(20, 0ms);
    c = std::move(b);  // c's 20 back, b's 30 now c's
    CHECK(budget.in_use() == 30);
  }
  CHECK(budget.in_use() == 0);
}

TEST_CASE("byte budget: first come, first served; a small request does not overtake a large one") {
  ByteBudget budget(10);
  ByteBudget::Lease held = budget.acquire(6, 0ms);
  std::vector<int> order;
  std::mutex mu;
  std::thread large([&] {
    ByteBudget::Lease l = budget.acquire(8, 10s);
    CHECK(l.held());
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(8);
  });
  REQUIRE(eventually([&] { return budget.waiting() == 1; }));  // the large one first in line
  std::atomic<bool> small_done{false};
  std::thread small([&] {
    // 6 + 3 fits, but the large one is ahead; 8 + 3 does not, so the small one's turn comes only
    // once the large one, having recorded itself, lets go: the order below is the grant order.
    ByteBudget::Lease s = budget.acquire(3, 10s);
    CHECK(s.held());
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(3);
    small_done = true;
  });
  REQUIRE(eventually([&] { return budget.waiting() == 2; }));
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(small_done);
  held.reset();
  large.join();
  small.join();
  CHECK(order == std::vector<int>{8, 3});
}

TEST_CASE("byte budget: a request whose wait runs out leaves the line to the next") {
  ByteBudget budget(10);
  ByteBudget::Lease held = budget.acquire(5, 0ms);
  std::atomic<bool> gave_up{false}, small_got{false};
  std::thread large([&] { gave_up = !budget.acquire(10, 300ms).held(); });
  REQUIRE(eventually([&] { return budget.waiting() == 1; }));
  std::thread small([&] { small_got = budget.acquire(5, 10s).held(); });
  large.join();
  CHECK(gave_up);
  small.join();  // it fitted all along; it went once the large one left the head of the line
  CHECK(small_got);
}
