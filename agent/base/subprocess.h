// Runs a helper program to completion and captures what it prints: kubeconfig exec credential
// plugins (kube/exec_plugin.h). The child's stdin is /dev/null (never interactive), its stdout
// and stderr come back bounded in size, and it is killed (SIGKILL) and reaped when it outlives
// its timeout: no zombie, no leaked pipe, whatever path the caller leaves by.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"

namespace iogate {

struct SubprocessSpec {
  std::string command;            // a path, or a name looked up in PATH (execvp's rules)
  std::vector<std::string> args;  // after argv[0] (the command itself)
  std::vector<std::string> env;   // "NAME=value", the child's whole environment
  std::chrono::milliseconds timeout{30000};
  size_t max_output = 1 << 20;  // per stream; more is cut off, the rest is drained and dropped
};

struct SubprocessResult {
  int exit_status = -1;    // the exit code when it exited, -1 when killed by a signal
  int signal = 0;          // the signal that ended it, 0 when it exited
  bool timed_out = false;  // killed by us at the timeout
  std::string out;
  std::string err;
};

// An error only when the child could not be started (message names the command and the errno's
// text; os_errno is set: ENOENT for a command not found). A child that fails is a result.
Result<SubprocessResult> run_subprocess(const SubprocessSpec& spec);

// The process's own environment as "NAME=value" strings, in order.
std::vector<std::string> process_environment();

}  // namespace iogate
