#include "cli/detect_command.h"

#include <cstdio>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/exit_codes.h"
#include "cli/logging.h"
#include "device/storage_stack.h"
#include "report/storage_report.h"

namespace iogate {
namespace po = boost::program_options;

int run_detect_command(const std::vector<std::string>& args) {
  po::options_description flags("detect options");
  flags.add_options()
      ("root", po::value<std::string>()->default_value("/"),
       "read DIR/proc and DIR/sys (like lsblk --sysroot); PATH is then resolved in that tree's mount table")
      ("output-format", po::value<std::string>()->default_value("human"), "human | json")
      ("log-level", po::value<std::string>()->default_value("warn"), "trace | debug | info | warn | error | off")
      ("log-format", po::value<std::string>()->default_value("text"), "text | json")
      ("help,h", "this help");
  po::options_description hidden;
  hidden.add_options()("path", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(flags).add(hidden);
  po::positional_options_description pos;
  pos.add("path", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "iogate detect: %s\n", e.what());
    return kExitUsage;
  }
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
  auto paths = vm.count("path") ? vm["path"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (paths.size() != 1) return usage(paths.empty() ? "PATH: missing; usage: iogate detect PATH [options]" : "PATH: expected one");
  const std::string format = vm["output-format"].as<std::string>();
  if (format != "human" && format != "json") return usage("--output-format: expected human or json, got \"" + format + "\"");
  if (Status s = setup_logging(vm["log-level"].as<std::string>(), vm["log-format"].as<std::string>()); !s.ok()) {
    return usage(s.error().message);
  }
  DetectOptions options;
  options.root = vm["root"].as<std::string>();
  auto stack = detect_storage_stack(paths[0], options);
  if (!stack.ok()) {
    std::fprintf(stderr, "iogate detect: %s\n", stack.error().message.c_str());
    return exit_code_for(stack.error());
  }
  if (format == "json") {
    std::cout << detect_report_to_json(*stack).dump(2) << "\n";
  } else {
    std::cout << render_storage_human(*stack);
  }
  return kExitOk;
}

}  // namespace iogate
