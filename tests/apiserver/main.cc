// iogate-test-apiserver --cert-dir DIR --token TOKEN [--port 0] [--seed FILE.json]
// Serves the test API server until SIGTERM or SIGINT. Prints "listening on https://127.0.0.1:PORT"
// once it accepts connections, so a test can start it with port 0 and read the port.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "test_apiserver.h"

using iogate::apiserver::TestApiServer;
using iogate::apiserver::TestApiServerOptions;

namespace {

int usage(const std::string& message) {
  std::cerr << "iogate-test-apiserver: " << message << "\n"
            << "usage: iogate-test-apiserver --cert-dir DIR --token TOKEN [--port N] [--seed FILE.json]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  TestApiServerOptions options;
  std::string seed_path;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return usage("help"), 0;
    if (i + 1 >= argc) return usage(flag + ": missing value");
    std::string value = argv[++i];
    if (flag == "--cert-dir") options.cert_dir = value;
    else if (flag == "--token") options.token = value;
    else if (flag == "--seed") seed_path = value;
    else if (flag == "--port") {
      char* end = nullptr;
      long port = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || port < 0 || port > 65535) return usage("--port: expected 0..65535, got " + value);
      options.port = static_cast<int>(port);
    } else {
      return usage("unknown flag " + flag);
    }
  }
  if (options.cert_dir.empty()) return usage("--cert-dir is required");
  if (options.token.empty()) return usage("--token is required");

  // Block the stop signals before any thread starts, so only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto server = TestApiServer::start(options);
  if (!server.ok()) {
    std::cerr << "iogate-test-apiserver: " << server.error().message << "\n";
    return 3;
  }
  if (!seed_path.empty()) {
    std::ifstream in(seed_path);
    std::stringstream text;
    text << in.rdbuf();
    auto seed = nlohmann::json::parse(text.str(), nullptr, false);
    if (!in || seed.is_discarded()) return usage("--seed " + seed_path + ": not a readable JSON file");
    std::vector<nlohmann::json> items;
    if (seed.is_array()) items = seed.get<std::vector<nlohmann::json>>();
    else if (seed.contains("items")) items = seed["items"].get<std::vector<nlohmann::json>>();
    else items = {seed};
    for (auto& item : items) {
      auto stored = (*server)->seed(item);
      if (!stored.ok()) return usage("--seed " + seed_path + ": " + stored.error().message);
    }
  }
  std::cout << "listening on " << (*server)->url() << std::endl;

  int sig = 0;
  sigwait(&stop_signals, &sig);
  (*server)->stop();
  return 0;
}
