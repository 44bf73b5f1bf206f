#include "cli/command_line.h"

namespace iogate {
namespace po = boost::program_options;

Result<ParsedCommandLine> parse_command_line(const std::vector<std::string>& args,
                                             const po::options_description& flags) {
  po::options_description hidden;
  hidden.add_options()("positional-argument", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(flags).add(hidden);
  po::positional_options_description pos;
  pos.add("positional-argument", -1);
  ParsedCommandLine out;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), out.flags);
    po::notify(out.flags);
  } catch (const po::error& e) {
    return usage_error(e.what());
  }
  if (out.flags.count("positional-argument")) out.paths = out.flags["positional-argument"].as<std::vector<std::string>>();
  return out;
}

}  // namespace iogate
