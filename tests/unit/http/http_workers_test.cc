// HttpWorkers on real loopback TCP connections: when a connection gets a thread, how many threads
// there are, and what happens at each bound. Waits are bounded polls of counts(), never a figure
// for how fast something must happen.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/unique_fd.h"
#include "http/http_workers.h"

using namespace iogate;
using namespace std::chrono_literals;

namespace {

// A listening socket on 127.0.0.1; connect() gives the client's end and the server's, as accept(2)
// returns it (the server's end is a plain fd: HttpWorkers takes it).
struct Loopback {
  UniqueFd listener{socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  sockaddr_in addr{};
  Loopback() {
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    REQUIRE(bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(listener.get(), 64) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  }
  std::pair<UniqueFd, int> connect() {
    UniqueFd client(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(::connect(client.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    int server = accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
    REQUIRE(server >= 0);
    return {std::move(client), server};
  }
};

// Polls `done` every millisecond for up to 10 s: long enough for any machine, and the test goes on
// as soon as it holds.
bool eventually(const std::function<bool()>& done) {
  for (auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return done();
}

// The server has closed this client's connection (EOF or reset waits on it).
bool closed(const UniqueFd& client) {
  pollfd p{client.get(), POLLIN, 0};
  if (poll(&p, 1, 0) != 1) return false;
  char c;
  return recv(client.get(), &c, 1, MSG_DONTWAIT) <= 0;
}

// A serve function that reads one byte, records it, and closes; optionally blocking until opened.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  bool gate_open = true;
  std::vector<char> bytes;
  std::atomic<int> served{0};
  HttpWorkers::Serve serve() {
    return [this](int fd) {
      char c = 0;
      if (read(fd, &c, 1) != 1) c = '?';
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return gate_open; });
        bytes.push_back(c);
      }
      close(fd);
      ++served;
    };
  }
  void hold() {
    std::lock_guard<std::mutex> lock(mu);
    gate_open = false;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      gate_open = true;
    }
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE("http workers: a connection gets a thread only once its first bytes arrive") {
  Loopback net;
  Recorder r;
  HttpWorkerLimits limits;
  limits.first_bytes_timeout = 60s;
  HttpWorkers workers(limits, r.serve());
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 20; ++i) {
    auto [client, server] = net.connect();
    workers.admit(server);
    silent.push_back(std::move(client));
  }
  auto [client, server] = net.connect();
  workers.admit(server);
  REQUIRE(eventually([&] { return workers.counts().waiting == 21; }));
  CHECK(workers.counts().workers == 0);  // 21 connections, no thread

  REQUIRE(write(client.get(), "x", 1) == 1);
  REQUIRE(eventually([&] { return r.served == 1; }));
  CHECK(r.bytes == std::vector<char>{'x'});
  auto c = workers.counts();
  CHECK(c.workers == 1);
  CHECK(c.waiting == 20);
  for (const auto& s : silent) CHECK_FALSE(closed(s));
}

TEST_CASE("http workers: a connection silent past first_bytes_timeout is closed unserved") {
  Loopback net;
  Recorder r;
  HttpWorkerLimits limits;
  limits.first_bytes_timeout = 100ms;
  HttpWorkers workers(limits, r.serve());
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 5; ++i) {
    auto [client, server] = net.connect();
    workers.admit(server);
    silent.push_back(std::move(client));
  }
  REQUIRE(eventually([&] { return workers.counts().timed_out == 5; }));
  for (const auto& s : silent) CHECK(closed(s));
  CHECK(r.served == 0);
  CHECK(workers.counts().waiting == 0);
}

TEST_CASE("http workers: past max_waiting the connection silent longest is closed") {
  Loopback net;
  Recorder r;
  HttpWorkerLimits limits;
  limits.max_waiting = 3;
  limits.first_bytes_timeout = 60s;
  HttpWorkers workers(limits, r.serve());
  std::vector<UniqueFd> clients;
  for (int i = 0; i < 4; ++i) {
    auto [client, server] = net.connect();
    workers.admit(server);
    clients.push_back(std::move(client));
  }
  REQUIRE(eventually([&] { return closed(clients[0]); }));
  auto c = workers.counts();
  CHECK(c.evicted == 1);
  CHECK(c.waiting == 3);
  for (int i = 1; i < 4; ++i) CHECK_FALSE(closed(clients[i]));
  REQUIRE(write(clients[3].get(), "z", 1) == 1);  // the newest is served as usual
  REQUIRE(eventually([&] { return r.served == 1; }));
  CHECK(r.bytes == std::vector<char>{'z'});
}

TEST_CASE("http workers: threads grow to max_workers; more ready connections wait for one; idle ones exit") {
  Loopback net;
  Recorder r;
  r.hold();
  HttpWorkerLimits limits;
  limits.max_workers = 2;
  limits.first_bytes_timeout = 60s;
  limits.worker_idle_exit = 50ms;
  HttpWorkers workers(limits, r.serve());
  std::vector<UniqueFd> clients;
  for (int i = 0; i < 3; ++i) {
    auto [client, server] = net.connect();
    REQUIRE(write(client.get(), &"abc"[i], 1) == 1);
    workers.admit(server);
    clients.push_back(std::move(client));
  }
  REQUIRE(eventually([&] {
    auto c = workers.counts();
    return c.busy == 2 && c.ready == 1;
  }));
  CHECK(workers.counts().workers == 2);
  r.release();
  REQUIRE(eventually([&] { return r.served == 3; }));
  CHECK(eventually([&] { return workers.counts().workers == 0; }));  // after worker_idle_exit

  auto [client, server] = net.connect();  // and a new one starts again
  REQUIRE(write(client.get(), "d", 1) == 1);
  workers.admit(server);
  REQUIRE(eventually([&] { return r.served == 4; }));
}

TEST_CASE("http workers: the destructor closes the waiting connections and waits for the served ones") {
  Loopback net;
  Recorder r;
  r.hold();
  std::vector<UniqueFd> clients;
  std::thread release;
  {
    HttpWorkerLimits limits;
    limits.first_bytes_timeout = 60s;
    HttpWorkers workers(limits, r.serve());
    for (int i = 0; i < 2; ++i) {
      auto [client, server] = net.connect();
      workers.admit(server);
      clients.push_back(std::move(client));
    }
    REQUIRE(write(clients[1].get(), "s", 1) == 1);
    REQUIRE(eventually([&] { return workers.counts().busy == 1; }));
    release = std::thread([&] {
      std::this_thread::sleep_for(50ms);
      r.release();
    });
  }
  release.join();
  CHECK(r.served == 1);  // the destructor waited for it
  CHECK(closed(clients[0]));
  CHECK(closed(clients[1]));
}
