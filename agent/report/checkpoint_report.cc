#include "report/checkpoint_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/text_layout.h"
#include "base/units.h"
#include "base/version.h"
#include "report/report_json.h"
#include "report/storage_report.h"

namespace iogate {
namespace {

double finite(double x) { return std::isfinite(x) ? x : 0.0; }

double rate(const CheckpointRound& r) { return r.seconds > 0 ? double(r.rank_bytes) / r.seconds : 0; }

nlohmann::json rounds_json(const std::vector<CheckpointRound>& rounds) {
  nlohmann::json out = nlohmann::json::array();
  for (const CheckpointRound& r : rounds) {
    out.push_back(
        {{"rank_bytes", r.rank_bytes}, {"seconds", finite(r.seconds)}, {"rank_bytes_per_s", finite(rate(r))}});
  }
  return out;
}

nlohmann::json line_json(const FittedLine& l, int ranks) {
  return {{"fixed_seconds", finite(l.fixed_s)},
          {"rank_bytes_per_s", finite(l.bytes_per_s)},
          {"bytes_per_s", finite(l.bytes_per_s * ranks)}};
}

std::string line_text(const FittedLine& l, int ranks) {
  if (l.bytes_per_s <= 0) return "not measured";
  std::string out = fmt::format("{} a rank, {} in all", format_bandwidth_decimal(l.bytes_per_s),
                                format_bandwidth_decimal(l.bytes_per_s * ranks));
  if (l.fixed_s > 0) out += fmt::format(", + {} a save", format_duration_ns(l.fixed_s * 1e9));
  return out;
}

}  // namespace

nlohmann::json checkpoint_probe_to_json(const CheckpointProbeResult& r, const StorageStack* storage,
                                        const std::string& time) {
  return {{"schema", kReportSchema},
          {"iogate_version", kVersion},
          {"time", time},
          {"mode", "checkpoint"},
          {"target", {{"path", utf8_or_replacement(r.directory)}}},
          {"storage", storage ? storage_stack_to_json(*storage) : nlohmann::json(nullptr)},
          {"ranks", r.ranks},
          {"saves", rounds_json(r.saves)},
          {"restores", rounds_json(r.restores)},
          {"save", line_json(r.save, r.ranks)},
          {"restore", line_json(r.restore, r.ranks)},
          {"bytes_written", r.bytes_written},
          {"bytes_read", r.bytes_read},
          {"round_bytes_limit", r.round_bytes_limit},
          {"measured_ns", static_cast<uint64_t>(std::llround(r.measured_s * 1e9))},
          {"stop_reason", stop_reason_name(r.stop_reason)}};
}

std::string render_checkpoint_human(const CheckpointProbeResult& r, const StorageStack* storage) {
  std::string out = fmt::format("checkpoint  {} rank{} on {}", r.ranks, r.ranks == 1 ? "" : "s", r.directory);
  if (storage) out += fmt::format(" ({}, {})", storage->mount.fs_type, device_class_name(storage->device_class));
  out += "\n";
  std::vector<std::vector<std::string>> rows = {{"ROUND", "A RANK", "SAVE (SLOWEST RANK)", "A RANK/S"}};
  for (size_t i = 0; i < r.saves.size(); ++i) {
    const CheckpointRound& s = r.saves[i];
    rows.push_back({fmt::format("save {}", i + 1), format_bytes(double(s.rank_bytes)),
                    format_duration_ns(s.seconds * 1e9), format_bandwidth_decimal(rate(s))});
  }
  for (size_t i = 0; i < r.restores.size(); ++i) {
    const CheckpointRound& s = r.restores[i];
    rows.push_back({fmt::format("restore {}", i + 1), format_bytes(double(s.rank_bytes)),
                    format_duration_ns(s.seconds * 1e9), format_bandwidth_decimal(rate(s))});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  }
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i) line += i + 1 < row.size() ? pad_right(row[i], widths[i] + 3) : row[i];
    out += line + "\n";
  }
  out += fmt::format("save        {}\n", line_text(r.save, r.ranks));
  out += fmt::format("restore     {}\n", line_text(r.restore, r.ranks));
  out += fmt::format("wrote       {} in {:.1f} s ({}); a round at most {} in all (memory, free space)\n",
                     format_bytes(double(r.bytes_written)), r.measured_s, stop_reason_name(r.stop_reason),
                     format_bytes(double(r.round_bytes_limit)));
  return out;
}

}  // namespace iogate
