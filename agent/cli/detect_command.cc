#include "cli/detect_command.h"

#include <cstdio>
#include <iostream>

#include <boost/program_options.hpp>

#include "base/exit_codes.h"
#include "cli/command_line.h"
#include "device/storage_stack.h"
#include "report/storage_report.h"

namespace iogate {
namespace po = boost::program_options;

int run_detect_command(const std::vector<std::string>& args) {
  po::options_description flags("detect options");
  flags.add_options()(
      "root", po::value<std::string>()->default_value("/"),
      "read DIR/proc and DIR/sys (like lsblk --sysroot); PATH is then resolved in that tree's mount table");
  add_closing_flags(flags, "human | json", "warn");
  auto parsed = parse_command_line(args, flags);
  if (!parsed.ok()) {
    std::fprintf(stderr, "iogate detect: %s\n", parsed.error().message.c_str());
    return kExitUsage;
  }
  const po::variables_map& vm = parsed->flags;
  if (vm.count("help")) {
    std::cout << "usage: iogate detect PATH [options]\n\n"
                 "Tells what storage PATH is on, from /proc and /sys only: mount, device stack, class.\n\n"
              << flags;
    return kExitOk;
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr, "iogate detect: %s\n", msg.c_str());
    return kExitUsage;
  };
  const std::vector<std::string>& paths = parsed->paths;
  if (paths.size() != 1)
    return usage(paths.empty() ? "PATH: missing; usage: iogate detect PATH [options]" : "PATH: expected one");
  auto json = apply_closing_flags(vm);
  if (!json.ok()) return usage(json.error().message);
  DetectOptions options;
  options.root = vm["root"].as<std::string>();
  if (Status s = check_root_flag(options.root); !s.ok()) return usage(s.error().message);
  auto stack = detect_storage_stack(paths[0], options);
  if (!stack.ok()) {
    std::fprintf(stderr, "iogate detect: %s\n", stack.error().message.c_str());
    return exit_code_for(stack.error());
  }
  if (*json) {
    std::cout << detect_report_to_json(*stack).dump(2) << "\n";
  } else {
    std::cout << render_storage_human(*stack);
  }
  return kExitOk;
}

}  // namespace iogate
