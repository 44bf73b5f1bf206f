// Throwaway certificates for the C++ tests, made by the shell tests' own tests/lib/pki.sh (the
// openssl CLI), in a scratch directory of this process removed when it exits:
//   pki(name)         DIR with ca.crt/ca.key (the test CA), server.crt/server.key (CN
//                     iogate-test-server, SAN IP:127.0.0.1 and DNS:localhost) and client.crt/
//                     client.key (CN iogate-test, O system:masters); made once per name and process
//   issue(dir, cn)    DIR/<cn>.crt and DIR/<cn>.key: another server pair, a key of its own, the
//                     same SANs, signed by DIR's CA; made once per process
//   slurp(path)       a file's text
//   serial_of(file)   `openssl x509 -serial` of a PEM file, to check against what a peer presents
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "source_tree.h"
#include "temp_tree.h"

namespace iogate::testing {

inline void run_shell(const std::string& command) {
  INFO(command);
  REQUIRE(std::system(command.c_str()) == 0);
}

// Runs `calls` (pki.sh functions) in bash with pki.sh sourced.
inline void run_pki_sh(const std::string& calls) {
  run_shell("bash -euc 'source \"$0\"; " + calls + "' '" + source_path("tests/lib/pki.sh").string() + "'");
}

inline const TempTree& pki_root() {
  static const TempTree root;
  return root;
}

inline std::string pki(const std::string& name) {
  const std::string dir = pki_root().path(name);
  if (!std::filesystem::exists(dir + "/client.key")) {
    run_pki_sh("d=" + dir + "; pki_ca $d iogate-test-ca; " +
               "pki_sign $d server /CN=iogate-test-server \"$(pki_server_ext IP:127.0.0.1,DNS:localhost)\"; " +
               "pki_sign $d client /O=system:masters/CN=iogate-test \"$(pki_client_ext)\"");
  }
  return dir;
}

inline void issue(const std::string& dir, const std::string& cn) {
  if (std::filesystem::exists(dir + "/" + cn + ".key")) return;
  run_pki_sh("pki_sign " + dir + " " + cn + " /CN=" + cn + " \"$(pki_server_ext IP:127.0.0.1,DNS:localhost)\"");
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

}  // namespace iogate::testing
