// Every unit binary's main: doctest's, after ignoring SIGPIPE as iogate's own main does
// (cli/signals.cc). The kube and webhook code writes to sockets through OpenSSL's write(2), so a
// peer that hangs up mid-exchange (the point of several transport tests) must give EPIPE, which the
// code handles, not kill the test binary.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <csignal>

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  return doctest::Context(argc, argv).run();
}
