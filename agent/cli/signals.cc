#include "cli/signals.h"

#include <pthread.h>
#include <signal.h>

#include <ctime>

namespace iogate {

namespace {
sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
}  // namespace

StopSignals::StopSignals() {
  sigset_t set = stop_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  watcher_ = std::thread([this] {
    sigset_t s = stop_set();
    timespec tick{0, 100'000'000};
    while (!done_.load()) {
      int sig = sigtimedwait(&s, nullptr, &tick);
      if (sig > 0) {
        signal_ = sig;
        stop_ = true;
      }
    }
  });
}

StopSignals::~StopSignals() {
  done_ = true;
  watcher_.join();
  // A signal that arrived after the work ended still ends the process as the sender meant.
  sigset_t set = stop_set();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace iogate
