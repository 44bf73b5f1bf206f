// SIGINT/SIGTERM become a stop flag instead of killing the process, so every mode can end its
// work, remove its temporary files and report. Construct before starting any thread: the signals
// are blocked in the constructing thread and so inherited blocked by every thread it starts;
// one watcher thread takes them with sigtimedwait.
#pragma once

#include <atomic>
#include <thread>

namespace iogate {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  const std::atomic<bool>& stop() const { return stop_; }
  int signal_number() const { return signal_.load(); }  // 0 if none arrived

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::atomic<int> signal_{0};
  std::thread watcher_;
};

}  // namespace iogate
