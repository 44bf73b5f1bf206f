// posix_spawnp rather than fork: safe in a multi-threaded process (the webhook's informer), and
// glibc reports a failed exec (command not found) as the spawn's own error.
#include "base/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "base/unique_fd.h"

extern char** environ;

namespace iogate {
namespace {

// The child until it is reaped: the destructor kills and reaps one still running, so every early
// return leaves no process behind.
class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  void kill() { ::kill(pid_, SIGKILL); }
  // Reaps it when it has ended; false while it runs.
  bool try_wait(int* status) {
    if (::waitpid(pid_, status, WNOHANG) != pid_) return false;
    pid_ = -1;
    return true;
  }
  // Blocks until it ends; its wait status.
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_;
};

// posix_spawn's own objects, destroyed on every path.
struct SpawnActions {
  posix_spawn_file_actions_t a;
  SpawnActions() { posix_spawn_file_actions_init(&a); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&a); }
};

Result<std::pair<UniqueFd, UniqueFd>> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    Error e = runtime_error(fmt::format("pipe: {}", strerror(errno)));
    e.os_errno = errno;
    return e;
  }
  return std::make_pair(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

}  // namespace

std::vector<std::string> process_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return env;
}

Result<SubprocessResult> run_subprocess(const SubprocessSpec& spec) {
  auto out_pipe = make_pipe();
  if (!out_pipe.ok()) return out_pipe.error();
  auto err_pipe = make_pipe();
  if (!err_pipe.ok()) return err_pipe.error();

  SpawnActions actions;
  posix_spawn_file_actions_addopen(&actions.a, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions.a, out_pipe->second.get(), 1);
  posix_spawn_file_actions_adddup2(&actions.a, err_pipe->second.get(), 2);

  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(spec.command.c_str()));
  for (const std::string& a : spec.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // posix_spawnp searches the PATH of the caller's environment, as Go's exec.Command does.
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, spec.command.c_str(), &actions.a, nullptr, argv.data(), envp.data());
  if (rc != 0) {
    Error e = runtime_error(fmt::format("cannot run {}: {}", spec.command, strerror(rc)));
    e.os_errno = rc;
    return e;
  }
  Child child(pid);
  out_pipe->second.reset();  // the child holds the write ends now: EOF when it exits
  err_pipe->second.reset();

  SubprocessResult result;
  const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
  UniqueFd* fds[2] = {&out_pipe->first, &err_pipe->first};
  std::string* sinks[2] = {&result.out, &result.err};
  char buf[8192];
  int status = 0;
  bool exited = false;
  while (fds[0]->valid() || fds[1]->valid()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!exited) exited = child.try_wait(&status);
    if (left.count() <= 0 && !exited) {
      result.timed_out = true;
      child.kill();
      break;
    }
    pollfd p[2];
    nfds_t n = 0;
    int which[2];
    for (int i = 0; i < 2; ++i) {
      if (!fds[i]->valid()) continue;
      p[n] = {fds[i]->get(), POLLIN, 0};
      which[n++] = i;
    }
    // Once the child has exited, what is left is read without waiting: a process it left behind
    // (a daemon it started) may hold the pipes open for ever.
    int ready = ::poll(p, n, exited ? 0 : static_cast<int>(std::clamp<int64_t>(left.count(), 0, 100)));
    if (ready < 0 && errno != EINTR) break;
    if (ready == 0 && exited) break;
    for (nfds_t k = 0; ready > 0 && k < n; ++k) {
      if (!p[k].revents) continue;
      int i = which[k];
      ssize_t got = ::read(fds[i]->get(), buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fds[i]->reset();
        continue;
      }
      std::string& sink = *sinks[i];
      if (sink.size() < spec.max_output) sink.append(buf, std::min<size_t>(got, spec.max_output - sink.size()));
    }
  }
  if (!exited) status = child.wait();
  if (WIFEXITED(status)) {
    result.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace iogate
