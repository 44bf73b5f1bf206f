#include "http/http_workers.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include <spdlog/spdlog.h>

namespace iogate {

using std::chrono::steady_clock;

HttpWorkers::HttpWorkers(HttpWorkerLimits limits, Serve serve)
    : limits_(limits), serve_(std::move(serve)), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  poller_ = std::thread([this] { poll_loop(); });
}

HttpWorkers::~HttpWorkers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (const Waiting& w : waiting_) ::close(w.fd);
    waiting_.clear();
    for (int fd : ready_) ::close(fd);
    ready_.clear();
  }
  wake_poller();
  poller_.join();
  work_ready_.notify_all();
  std::list<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(threads_);  // iterators stay valid: a worker ending now still finds itself
  }
  for (std::thread& t : threads) t.join();  // each once its connection has ended
}

void HttpWorkers::admit(int fd) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    if (waiting_.size() + ready_.size() >= static_cast<size_t>(std::max(limits_.max_waiting, 1))) {
      ++evicted_;
      if (waiting_.empty()) {
        ::close(fd);
        return;
      }
      ::close(waiting_.front().fd);
      waiting_.pop_front();
    }
    waiting_.push_back({fd, ++next_id_, steady_clock::now() + limits_.first_bytes_timeout});
  }
  wake_poller();
}

HttpWorkerCounts HttpWorkers::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  HttpWorkerCounts c;
  c.workers = workers_;
  c.busy = busy_;
  c.waiting = waiting_.size();
  c.ready = ready_.size();
  c.timed_out = timed_out_;
  c.evicted = evicted_;
  return c;
}

void HttpWorkers::wake_poller() {
  uint64_t one = 1;
  if (wake_.valid()) (void)!::write(wake_.get(), &one, sizeof one);
}

void HttpWorkers::poll_loop() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;  // ids[i] is the connection of fds[i]; fds[0] is the eventfd
  for (;;) {
    int timeout_ms = wake_.valid() ? -1 : 50;  // without an eventfd, admit() is seen within 50 ms
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      fds.assign(1, pollfd{wake_.get(), POLLIN, 0});
      ids.assign(1, 0);
      auto now = steady_clock::now();
      for (const Waiting& w : waiting_) {
        fds.push_back(pollfd{w.fd, POLLIN, 0});
        ids.push_back(w.id);
        auto left = std::chrono::ceil<std::chrono::milliseconds>(w.deadline - now).count();
        int left_ms = static_cast<int>(std::clamp<long long>(left, 0, 60'000));
        timeout_ms = timeout_ms < 0 ? left_ms : std::min(timeout_ms, left_ms);
      }
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      spdlog::warn("http: poll: {}", std::system_category().message(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      (void)!::read(wake_.get(), &count, sizeof count);
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    auto now = steady_clock::now();
    // waiting_ and the snapshot are both in id order; entries evicted since are simply absent, new
    // ones (ids past the snapshot) were not polled and stay.
    size_t k = 1;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      while (k < ids.size() && ids[k] < it->id) ++k;
      bool polled = k < ids.size() && ids[k] == it->id;
      if (polled && fds[k].revents != 0) {  // bytes, or EOF or an error the worker will find at once
        make_ready(it->fd);
        it = waiting_.erase(it);
      } else if (it->deadline <= now) {
        ::close(it->fd);
        ++timed_out_;
        it = waiting_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void HttpWorkers::make_ready(int fd) {
  ready_.push_back(fd);
  size_t idle = workers_ - busy_;
  if (ready_.size() > idle && workers_ < static_cast<size_t>(std::max(limits_.max_workers, 1))) {
    for (auto t : exited_) {
      t->join();  // it has left work(): nothing of it needs mu_ any more
      threads_.erase(t);
    }
    exited_.clear();
    try {
      auto self = threads_.emplace(threads_.end());
      *self = std::thread([this, self] { work(self); });  // mu_ is held: work() starts once *self is set
      ++workers_;
    } catch (const std::system_error& e) {
      threads_.pop_back();
      spdlog::warn("http: no new worker thread ({}); {} busy", e.what(), busy_);
    }
  }
  work_ready_.notify_one();
}

void HttpWorkers::work(std::list<std::thread>::iterator self) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!ready_.empty()) {
      int fd = ready_.front();
      ready_.pop_front();
      ++busy_;
      lock.unlock();
      try {
        serve_(fd);
      } catch (const std::exception& e) {
        spdlog::error("http: serving a connection failed: {}", e.what());
      }
      lock.lock();
      --busy_;
      continue;
    }
    if (stopping_) break;
    if (!work_ready_.wait_for(lock, limits_.worker_idle_exit, [&] { return !ready_.empty() || stopping_; })) break;
  }
  --workers_;
  exited_.push_back(self);
}

}  // namespace iogate
