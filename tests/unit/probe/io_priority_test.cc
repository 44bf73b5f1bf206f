#include "probe/io_priority.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>

using namespace iogate;

namespace {

bool same(IoPriority a, IoPriority b) { return a.cls == b.cls && a.level == b.level; }

struct SeenOnThreads {
  Status set = ok_status();
  Result<IoPriority> child = runtime_error("not read");
  Result<IoPriority> grandchild = runtime_error("not read");
};

// Sets `p` on a fresh thread (never on the test runner's own thread, which other tests share),
// reads it back there, and reads it again in a thread that thread creates afterwards.
SeenOnThreads set_and_inherit(IoPriority p) {
  SeenOnThreads seen;
  std::thread child([&] {
    seen.set = set_thread_io_priority(p);
    seen.child = thread_io_priority();
    std::thread grandchild([&] { seen.grandchild = thread_io_priority(); });
    grandchild.join();
  });
  child.join();
  return seen;
}

void check_set_and_inherited(IoPriority p) {
  SeenOnThreads seen = set_and_inherit(p);
  REQUIRE_MESSAGE(seen.set.ok(), (seen.set.ok() ? "" : seen.set.error().message));
  REQUIRE(seen.child.ok());
  REQUIRE(seen.grandchild.ok());
  CHECK(io_priority_name(*seen.child) == io_priority_name(p));
  CHECK(same(*seen.child, p));
  CHECK(io_priority_name(*seen.grandchild) == io_priority_name(p));
  CHECK(same(*seen.grandchild, p));
}

}  // namespace

TEST_CASE("io priority names round-trip as ionice prints them") {
  for (const char* name : {"idle", "none", "best-effort/0", "best-effort/4", "best-effort/7", "realtime/0"}) {
    auto p = parse_io_priority(name, "--io-priority");
    REQUIRE(p.ok());
    CHECK(io_priority_name(*p) == name);
  }
  auto be = parse_io_priority("be/7", "--io-priority");
  REQUIRE(be.ok());
  CHECK(be->cls == IoPriorityClass::kBestEffort);
  CHECK(be->level == 7);
  auto bare = parse_io_priority("best-effort", "--io-priority");
  REQUIRE(bare.ok());
  CHECK(bare->cls == IoPriorityClass::kBestEffort);
  CHECK(bare->level == 4);  // ionice's default level
  auto idle = parse_io_priority("idle", "--io-priority");
  REQUIRE(idle.ok());
  CHECK(idle->cls == IoPriorityClass::kIdle);
  CHECK(idle->level == 0);
  CHECK(io_priority_name({IoPriorityClass::kIdle, 0}) == "idle");
  CHECK(io_priority_name({}) == "none");
}

TEST_CASE("io priority parse errors are usage errors that name the field and the text") {
  for (const char* text : {"", "lazy", "best-effort/8", "be/-1", "be/", "be/x", "idle/3", "none/0", "Idle"}) {
    auto p = parse_io_priority(text, "node.ioPriority");
    REQUIRE_FALSE_MESSAGE(p.ok(), text);
    CHECK(p.error().kind == ErrorKind::kUsage);
    CHECK(p.error().message.rfind("node.ioPriority: ", 0) == 0);
    CHECK(p.error().message.find(std::string("\"") + text + "\"") != std::string::npos);
  }
}

TEST_CASE("idle set on a thread reads back, and a thread it creates afterwards inherits it") {
  check_set_and_inherited({IoPriorityClass::kIdle, 0});
}

TEST_CASE("best-effort/7 set on a thread reads back, and a thread it creates afterwards inherits it") {
  check_set_and_inherited({IoPriorityClass::kBestEffort, 7});
}

TEST_CASE("setting a thread's priority leaves the others alone") {
  auto before = thread_io_priority();
  REQUIRE(before.ok());
  SeenOnThreads seen = set_and_inherit({IoPriorityClass::kIdle, 0});
  REQUIRE(seen.set.ok());
  auto after = thread_io_priority();
  REQUIRE(after.ok());
  CHECK(same(*after, *before));
}

TEST_CASE("an out-of-range level is refused before the kernel sees it") {
  Status s = ok_status();
  std::thread t([&] { s = set_thread_io_priority({IoPriorityClass::kBestEffort, 8}); });
  t.join();
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().kind == ErrorKind::kUsage);
}

TEST_CASE("which schedulers honour I/O priority classes") {
  CHECK(scheduler_honours_io_priority("bfq"));
  CHECK(scheduler_honours_io_priority("mq-deadline"));
  CHECK_FALSE(scheduler_honours_io_priority("none"));
  CHECK_FALSE(scheduler_honours_io_priority("kyber"));
  CHECK_FALSE(scheduler_honours_io_priority(""));
}
