#include "cli/probe_command.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/program_options.hpp>

#include "base/clock.h"
#include "base/exit_codes.h"
#include "base/quote.h"
#include "base/units.h"
#include "cli/command_line.h"
#include "cli/dataset_command.h"
#include "cli/dataset_flags.h"
#include "cli/signals.h"
#include "device/storage_stack.h"
#include "policy/policy.h"
#include "probe/probe.h"
#include "report/checkpoint_report.h"
#include "report/report_human.h"
#include "report/report_json.h"

namespace iogate {
namespace po = boost::program_options;

namespace {

// The flag of a workload field: its policy key with dashes ("iodepth-batch").
std::string flag_name(WorkloadField f) { return flag_spelling(f).substr(2); }

// The workload's flags come from its field table, with Workload{}'s defaults (bench/workload.h).
po::options_description probe_flags() {
  const Workload w;
  po::options_description d("probe options (fio's names and defaults where fio has them)");
  for (const WorkloadFieldInfo& f : workload_fields()) {
    auto* value = po::value<std::string>();
    if (auto text = workload_field_text(w, f.field)) value->default_value(*text);
    if (f.syntax == FieldSyntax::kBool) value->implicit_value("1");
    d.add_options()(flag_name(f.field).c_str(), value, std::string(f.help).c_str());
  }
  d.add_options()("keep-file", po::bool_switch(), "keep the test file so the next run with the same --size reuses it")(
      "early-stop", po::bool_switch(),
      "stop once the mean IOPS is settled (or clearly beside --min-iops); --runtime is the limit")(
      "tolerance", po::value<std::string>()->default_value("3%"),
      "early stop when the 95% interval is within ± this of the mean")(
      "min-iops", po::value<std::string>(), "with --early-stop: also stop once IOPS are clearly above or below this")(
      "root", po::value<std::string>()->default_value("/"), "read DIR/proc and DIR/sys (the host's, in a container)");
  add_closing_flags(d, "human | json", "warn");
  return d;
}

std::string format_progress(const ProbeProgress& p) {
  if (p.preparing) return "iogate: writing the test file…";
  return fmt::format("iogate: {:5.1f}s / {:.1f}s  {:>8} IOPS{}", double(p.elapsed_ns) / 1e9, double(p.total_ns) / 1e9,
                     format_count(p.current_iops), p.ramping ? "  (ramp)" : "");
}

// --mode checkpoint: --numjobs, --size, --runtime and --seed keep fio's meaning (jobs, each job's
// file size, the time limit); the other block-I/O flags and the dataset flags do not apply.
Result<ProbeOptions> parse_checkpoint_args(const po::variables_map& vm, ProbeOptions o) {
  for (const char* k : {"workers", "scan-time", "scan-entries", "scan-files", "sample", "target-samples-per-s",
                        "min-samples-per-s", "workload", "accelerator", "gpus", "min-iops"}) {
    if (vm.count(k) && !vm[k].defaulted()) return usage_error(fmt::format("--{}: not with --mode checkpoint", k));
  }
  for (const char* k : {"keep-file", "early-stop", "no-limit"}) {
    if (vm[k].as<bool>()) return usage_error(fmt::format("--{}: not with --mode checkpoint", k));
  }
  Workload w;
  w.size = uint64_t{1} << 30;
  for (const WorkloadFieldInfo& f : workload_fields()) {
    const std::string flag = flag_name(f.field);
    if (!vm.count(flag) || vm[flag].defaulted()) continue;
    const bool applies = f.field == WorkloadField::kNumjobs || f.field == WorkloadField::kSize ||
                         f.field == WorkloadField::kRuntime || f.field == WorkloadField::kSeed;
    if (!applies) return usage_error(fmt::format("--{}: not with --mode checkpoint (it writes whole files)", flag));
    if (Status s = set_workload_field(w, f.field, vm[flag].as<std::string>()); !s.ok()) return s.error();
  }
  CheckpointRequest req;
  req.directory = o.path;
  req.ranks = w.numjobs;
  req.max_rank_bytes = w.size;
  req.runtime = vm["runtime"].defaulted() ? CheckpointRequest{}.runtime : w.runtime;
  req.seed = w.seed.value_or(std::random_device{}());
  o.checkpoint = req;
  auto json = apply_closing_flags(vm);
  if (!json.ok()) return json.error();
  o.json = *json;
  return o;
}

int run_checkpoint_command(const ProbeOptions& o) {
  StopSignals signals;
  const std::string time = rfc3339_utc_now();
  auto stack = detect_storage_stack(o.checkpoint->directory, DetectOptions{o.root});
  if (isatty(STDERR_FILENO)) {
    std::fprintf(stderr, "\r\033[Kiogate: saving a checkpoint from %d rank%s…", o.checkpoint->ranks,
                 o.checkpoint->ranks == 1 ? "" : "s");
  }
  auto result = run_checkpoint_probe(*o.checkpoint, signals.stop());
  if (isatty(STDERR_FILENO)) std::fputs("\r\033[K", stderr);
  if (!result.ok()) {
    std::fprintf(stderr, "iogate probe: %s\n", result.error().message.c_str());
    return exit_code_for(result.error());
  }
  const StorageStack* storage = stack.ok() ? &*stack : nullptr;
  if (o.json) {
    std::cout << checkpoint_probe_to_json(*result, storage, time).dump(2) << "\n";
  } else {
    std::cout << render_checkpoint_human(*result, storage);
  }
  std::cout.flush();
  if (result->stop_reason == StopReason::kSignal) {
    std::fprintf(stderr, "iogate probe: interrupted by signal %d; checkpoint files removed\n", signals.signal_number());
    return kExitRuntime;
  }
  return kExitOk;
}

}  // namespace

Result<ProbeOptions> parse_probe_args(const std::vector<std::string>& args, std::string* help_text) {
  po::options_description flags = probe_flags();
  flags.add(dataset_flags());
  auto parsed = parse_command_line(args, flags);
  if (!parsed.ok()) return parsed.error();
  const po::variables_map& vm = parsed->flags;
  ProbeOptions o;
  if (vm.count("help")) {
    std::ostringstream out;
    out << "usage: iogate probe PATH [options]\n"
           "       iogate probe --mode dataset PATH [--workers 1,2,4,8] [options]\n"
           "       iogate probe --mode checkpoint PATH [--numjobs RANKS] [--size PER_RANK] [--runtime T]\n\n"
           "Benchmarks the storage under PATH (a directory: a test file is written there, or the largest\n"
           "files are read if it is read-only; a file: that file is read). With --mode dataset, walks the\n"
           "dataset under PATH and reads sampled files whole, as a DataLoader does, in samples/s; it never\n"
           "writes. With --mode checkpoint, saves a checkpoint as training ranks do: --numjobs writers, each\n"
           "its own file, buffered, ending with fsync, all at once, in rounds up to --size a rank within\n"
           "--runtime; then reads them back cold (the restore). The files are removed.\n\n"
        << flags;
    *help_text = out.str();
    return o;
  }
  const std::vector<std::string>& paths = parsed->paths;
  if (paths.empty()) return usage_error("PATH: missing; usage: iogate probe PATH [options]");
  if (paths.size() > 1)
    return usage_error(fmt::format("PATH: expected one, got {} ({}, …)", paths.size(), quote_value(paths[1])));
  o.path = paths[0];

  auto str = [&](const char* k) { return vm[k].as<std::string>(); };
  o.root = str("root");
  if (Status s = check_root_flag(o.root); !s.ok()) return s.error();
  const std::string mode = str("mode");
  if (mode == "dataset") {
    auto json = apply_closing_flags(vm);
    if (!json.ok()) return json.error();
    o.json = *json;
    auto request = dataset_request_from_flags(vm, o.path, o.root);
    if (!request.ok()) return request.error();
    o.dataset = std::move(*request);
    WorkloadFlags w = workload_flags(vm);
    if (!w.workload.empty() || !w.accelerator.empty()) {
      Policy demand_only;  // one demand rule for apply_named_workload to aim
      demand_only.source = "--workload";
      demand_only.rules.push_back(Rule{});
      demand_only.rules.back().demand = Demand{};
      if (Status s = apply_named_workload(demand_only, w.workload, w.accelerator); !s.ok()) return s.error();
      o.demand = demand_only.rules.back().demand;
    }
    if (vm.count("gpus")) {
      if (!o.demand) return usage_error("--gpus: only with --workload and --accelerator");
      auto gpus = parse_integer(str("gpus"), "--gpus", 1, 4096);
      if (!gpus.ok()) return gpus.error();
      o.gpus = static_cast<int>(*gpus);
    }
    if (o.demand && !o.dataset->target_samples_per_s)
      o.dataset->target_samples_per_s = verdict_flip_samples_per_s(*o.demand, o.gpus);
    return o;
  }
  if (mode == "checkpoint") return parse_checkpoint_args(vm, std::move(o));
  if (mode != "io")
    return usage_error(fmt::format("--mode: expected io, dataset or checkpoint, got {}", quote_value(mode)));
  for (const char* k : {"workers", "scan-time", "scan-entries", "scan-files", "sample", "target-samples-per-s",
                        "min-samples-per-s", "workload", "accelerator", "gpus"}) {
    if (vm.count(k) && !vm[k].defaulted()) return usage_error(fmt::format("--{}: only with --mode dataset", k));
  }
  if (vm["no-limit"].as<bool>()) return usage_error("--no-limit: only with --mode dataset");
  Workload& w = o.workload;
  for (const WorkloadFieldInfo& f : workload_fields()) {
    const std::string flag = flag_name(f.field);
    if (!vm.count(flag)) continue;
    if (Status s = set_workload_field(w, f.field, str(flag.c_str())); !s.ok()) return s.error();
  }
  w.keep_test_file = vm["keep-file"].as<bool>();
  o.early_stop.enabled = vm["early-stop"].as<bool>();
  auto tolerance = parse_fraction(str("tolerance"), "--tolerance");
  if (!tolerance.ok()) return tolerance.error();
  o.early_stop.tolerance = *tolerance;
  if (vm.count("min-iops")) {
    if (!o.early_stop.enabled) return usage_error("--min-iops: only with --early-stop (it is a reason to stop early)");
    auto floor = parse_integer(str("min-iops"), "--min-iops", 1, int64_t{1} << 50);
    if (!floor.ok()) return floor.error();
    o.early_stop.threshold_iops = static_cast<double>(*floor);
  }
  if (Status s = validate_early_stop(o.early_stop); !s.ok()) return s.error();
  auto json = apply_closing_flags(vm);
  if (!json.ok()) return json.error();
  o.json = *json;
  return o;  // run_probe validates the workload across its fields
}

int run_probe_command(const std::vector<std::string>& args) {
  std::string help;
  auto options = parse_probe_args(args, &help);
  if (auto done = parsing_exit("probe", options, help)) return *done;
  if (options->dataset)
    return run_dataset_probe_command(*options->dataset, options->demand, options->gpus, options->json);
  if (options->checkpoint) return run_checkpoint_command(*options);
  StopSignals signals;
  const bool tty = isatty(STDERR_FILENO);
  ProgressCallback progress;
  if (tty) {
    progress = [](const ProbeProgress& p) { std::fprintf(stderr, "\r\033[K%s", format_progress(p).c_str()); };
  }
  ProbeRequest req{options->path, options->workload, options->root, options->early_stop};
  auto result = run_probe(req, signals.stop(), progress);
  if (tty) std::fputs("\r\033[K", stderr);
  if (!result.ok()) {
    std::fprintf(stderr, "iogate probe: %s\n", result.error().message.c_str());
    return exit_code_for(result.error());
  }
  for (const std::string& w : result->warnings) spdlog::debug("warning: {}", w);
  if (options->json) {
    std::cout << probe_result_to_json(*result).dump(2) << "\n";
  } else {
    std::cout << render_probe_human(*result, isatty(STDOUT_FILENO));
  }
  std::cout.flush();
  if (result->stop_reason == StopReason::kSignal) {
    std::fprintf(stderr, "iogate probe: interrupted by signal %d; test file removed\n", signals.signal_number());
    return kExitRuntime;
  }
  return kExitOk;
}

}  // namespace iogate
