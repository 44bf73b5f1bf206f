// Serving certificates for the webhook's tests, made with the openssl CLI at test time:
//   pki(name)            a throwaway CA + server pair from tests/apiserver/make_certs.sh
//                        (APISERVER_MAKE_CERTS names it under ctest): SAN IP:127.0.0.1, localhost
//   issue(pki, cn)       another server pair with its own key, signed by that pki's CA
//   serial_of(file)      `openssl x509 -serial` of a PEM file, to check against what a client sees
// and the kubelet's Secret-volume layout, whose `..data` link is swapped on every update.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "source_tree.h"
#include "temp_tree.h"

namespace iogate::testing {

inline std::filesystem::path tls_scratch_root() {
  static const std::filesystem::path root = [] {
    auto dir = std::filesystem::temp_directory_path() / ("iogate-webhook-test-" + std::to_string(getpid()));
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(
          std::filesystem::temp_directory_path() / ("iogate-webhook-test-" + std::to_string(getpid())), ec);
    });
    return dir;
  }();
  return root;
}

inline void run_shell(const std::string& command) {
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
}

// DIR/ca.crt, ca.key, server.crt, server.key (and client.*), made once per name and process.
inline std::string pki(const std::string& name) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("APISERVER_MAKE_CERTS");
  std::string script = env ? env : testing::source_path("tests/apiserver/make_certs.sh").string();
  fs::path dir = tls_scratch_root() / name;
  if (!fs::exists(dir / "server.key")) run_shell("bash '" + script + "' '" + dir.string() + "'");
  return dir.string();
}

// DIR/<cn>.crt and DIR/<cn>.key: a new EC key and a server certificate for it from DIR's CA;
// made once per process.
inline void issue(const std::string& dir, const std::string& cn) {
  if (std::filesystem::exists(dir + "/" + cn + ".crt")) return;
  run_shell(
      "cd '" + dir + "' && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + cn +
      ".key 2>/dev/null && openssl req -new -key " + cn + ".key -subj /CN=" + cn + " -out " + cn +
      ".csr 2>/dev/null && printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth\\n' >" + cn +
      ".ext && openssl x509 -req -in " + cn + ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile " + cn +
      ".ext -out " + cn + ".crt 2>/dev/null && rm -f " + cn + ".csr " + cn + ".ext");
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// "5A3F..." as `openssl x509 -noout -serial` prints it, without "serial=".
inline std::string serial_of(const std::string& cert_file) {
  std::string out;
  FILE* p = popen(("openssl x509 -noout -serial -in '" + cert_file + "'").c_str(), "r");
  REQUIRE(p);
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  REQUIRE(pclose(p) == 0);
  REQUIRE(out.rfind("serial=", 0) == 0);
  out = out.substr(7);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// A Secret mounted the kubelet's way:
//   DIR/..2026_01_01_00_00_00.N/{tls.crt,tls.key}   one generation of the Secret's data
//   DIR/..data -> ..2026_...N                        renamed over atomically on update
//   DIR/tls.crt -> ..data/tls.crt, DIR/tls.key -> ..data/tls.key
struct SecretVolume {
  const TempTree& dir;
  int generation = 0;

  explicit SecretVolume(const TempTree& d) : dir(d) {}

  std::string cert_path() const { return dir.path("tls.crt"); }
  std::string key_path() const { return dir.path("tls.key"); }

  void publish(const std::string& cert_pem, const std::string& key_pem) {
    namespace fs = std::filesystem;
    std::string old_gen = generation ? "..2026_01_01_00_00_00." + std::to_string(generation) : "";
    std::string gen = "..2026_01_01_00_00_00." + std::to_string(++generation);
    dir.write(gen + "/tls.crt", cert_pem);
    dir.write(gen + "/tls.key", key_pem);
    fs::create_symlink(gen, dir.root / "..data_tmp");
    fs::rename(dir.root / "..data_tmp", dir.root / "..data");
    for (const char* f : {"tls.crt", "tls.key"}) {
      if (!fs::is_symlink(dir.root / f)) fs::create_symlink(std::string("..data/") + f, dir.root / f);
    }
    if (!old_gen.empty()) fs::remove_all(dir.root / old_gen);  // as the kubelet does
  }
  void publish_files(const std::string& cert_file, const std::string& key_file) {
    publish(slurp(cert_file), slurp(key_file));
  }
};

}  // namespace iogate::testing
