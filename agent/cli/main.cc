// iogate: one binary, one subcommand per mode.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/exit_codes.h"
#include "base/version.h"
#include "cli/audit_command.h"
#include "cli/detect_command.h"
#include "cli/node_command.h"
#include "cli/policy_command.h"
#include "cli/preflight_command.h"
#include "cli/probe_command.h"
#include "cli/webhook_command.h"

namespace {

constexpr const char kUsage[] =
    "usage: iogate <command> [options]\n"
    "\n"
    "commands:\n"
    "  probe PATH     benchmark the storage under PATH (libaio, 4k randread by default)\n"
    "  detect PATH    tell what storage PATH is on: mount, device stack, class\n"
    "  preflight PATH...  gate a pod on its dataset volume (the initContainer; predicted AU for its GPUs)\n"
    "  node --path P...   the DaemonSet agent: label, taint and monitor this node's data disks\n"
    "  node prune     remove every iogate.io/ label, annotation, taint and condition (after uninstall)\n"
    "  node check     pass when the node agent has labelled a Node (helm test)\n"
    "  webhook --tls-cert F --tls-key F   the admission webhook that keeps GPU pods off slow storage\n"
    "  webhook check  prove the API server can call the webhook: a dry-run pod (helm test)\n"
    "  policy check FILE|profile:NAME   validate a storage policy; policy profiles lists the built-ins\n"
    "  audit          what enforce mode would block in the cluster, from what iogate recorded (read-only)\n"
    "\n"
    "--policy defaults to profile:image-training, whose mode is warn: it records and blocks nothing.\n"
    "  version        print the version\n"
    "\n"
    "iogate <command> --help shows a command's options.\n"
    "exit codes: 0 ok, 1 below policy, 2 usage or configuration error, 3 I/O or runtime error\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return iogate::kExitUsage;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "--version" || command == "version") {
    std::printf("iogate %s\n", iogate::kVersion);
    return iogate::kExitOk;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return iogate::kExitOk;
  }
  if (command == "probe") return iogate::run_probe_command(args);
  if (command == "detect") return iogate::run_detect_command(args);
  if (command == "policy") return iogate::run_policy_command(args);
  if (command == "preflight") return iogate::run_preflight_command(args);
  if (command == "node") return iogate::run_node_command(args);
  if (command == "webhook") return iogate::run_webhook_command(args);
  if (command == "audit") return iogate::run_audit_command(args);
  std::fprintf(stderr, "iogate: unknown command \"%s\" (iogate --help lists the commands)\n", command.c_str());
  return iogate::kExitUsage;
}
