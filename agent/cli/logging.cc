#include "cli/logging.h"

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "base/quote.h"

namespace iogate {
namespace {

// %J: the message as a JSON string body, so a quote or newline in a message cannot break a line.
class JsonEscapedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    for (char c : std::string_view(msg.payload.data(), msg.payload.size())) {
      switch (c) {
        case '"': dest.append(std::string_view("\\\"")); break;
        case '\\': dest.append(std::string_view("\\\\")); break;
        case '\n': dest.append(std::string_view("\\n")); break;
        case '\t': dest.append(std::string_view("\\t")); break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            fmt::format_to(std::back_inserter(dest), "\\u{:04x}", static_cast<unsigned>(c));
          } else {
            dest.push_back(c);
          }
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonEscapedMessage>(); }
};

}  // namespace

Status setup_logging(std::string_view level, std::string_view format) {
  auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") {
    return usage_error(
        fmt::format("--log-level: unknown level {} (trace, debug, info, warn, error, off)", quote_value(level)));
  }
  auto logger = spdlog::stderr_logger_mt("iogate");
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonEscapedMessage>('J').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n","msg":"%J"})");
    logger->set_formatter(std::move(formatter));
  } else if (format == "text") {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  } else {
    return usage_error(fmt::format("--log-format: expected text or json, got {}", quote_value(format)));
  }
  logger->set_level(lvl);
  spdlog::set_default_logger(logger);
  return ok_status();
}

}  // namespace iogate
