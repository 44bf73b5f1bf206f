#include "cli/command_line.h"

namespace iogate {
namespace po = boost::program_options;

Result<ParsedCommandLine> parse_command_line(const std::vector<std::string>& args,
                                             const po::options_description& flags) {
  po::options_description hidden;
  hidden.add_options()("path", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(flags).add(hidden);
  po::positional_options_description pos;
  pos.add("path", -1);
  ParsedCommandLine out;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), out.flags);
    po::notify(out.flags);
  } catch (const po::error& e) {
    return usage_error(e.what());
  }
  if (out.flags.count("path")) out.paths = out.flags["path"].as<std::vector<std::string>>();
  return out;
}

}  // namespace iogate
