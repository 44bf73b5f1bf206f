#include "cli/probe_command.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/program_options.hpp>

#include "base/exit_codes.h"
#include "base/quote.h"
#include "base/units.h"
#include "bench/probe.h"
#include "cli/command_line.h"
#include "cli/dataset_command.h"
#include "cli/dataset_flags.h"
#include "cli/logging.h"
#include "cli/signals.h"
#include "device/storage_stack.h"
#include "report/report_human.h"
#include "report/report_json.h"

namespace iogate {
namespace po = boost::program_options;

namespace {

// The workload's flags take their defaults from Workload{} (bench/workload.h).
po::options_description probe_flags() {
  const Workload w;
  auto text = [](auto v) { return po::value<std::string>()->default_value(fmt::format("{}", v)); };
  auto size = [](uint64_t v) { return po::value<std::string>()->default_value(format_size_compact(v)); };
  auto duration = [](std::chrono::nanoseconds v) {
    return po::value<std::string>()->default_value(format_duration_compact(v.count()));
  };
  po::options_description d("probe options (fio's names and defaults where fio has them)");
  d.add_options()("rw", text(rw_mode_name(w.rw)), "randread | randwrite | read | write | randrw")(
      "rwmixread", text(w.rwmixread), "percent reads in randrw")(
      "bs", size(w.block_size), "block size (k/m/g suffixes, binary)")("iodepth", text(w.iodepth),
                                                                       "I/Os in flight per job")(
      "iodepth-batch", text(w.iodepth_batch),
      "I/Os per io_submit (fio's iodepth_batch_submit); more saves CPU, costs IOPS")(
      "numjobs", text(w.numjobs), "jobs: one thread and one aio context each")(
      "runtime", duration(w.runtime), "measured time (s/m/ms)")("ramp", duration(w.ramp),
                                                                "warm-up excluded from results (fio's ramp_time)")(
      "size", size(w.size), "size of the test file iogate creates")(
      "direct", po::value<std::string>()->default_value(w.direct ? "1" : "0")->implicit_value("1"),
      "O_DIRECT: 1 or 0 (true or false; 0 for buffered)")(
      "file", po::value<std::string>(), "read this existing file instead of a test file (read workloads only)")(
      "seed", po::value<std::string>(), "seed for random offsets (default: fresh each run, printed)")(
      "keep-file", po::bool_switch(), "keep the test file so the next run with the same --size reuses it")(
      "early-stop", po::bool_switch(),
      "stop once the mean IOPS is settled (or clearly beside --min-iops); --runtime is the limit")(
      "tolerance", po::value<std::string>()->default_value("3%"),
      "early stop when the 95% interval is within ± this of the mean")(
      "min-iops", po::value<std::string>(), "with --early-stop: also stop once IOPS are clearly above or below this")(
      "output-format", po::value<std::string>()->default_value("human"), "human | json")(
      "log-level", po::value<std::string>()->default_value("warn"), "trace | debug | info | warn | error | off")(
      "log-format", po::value<std::string>()->default_value("text"), "text | json")(
      "root", po::value<std::string>()->default_value("/"), "read DIR/proc and DIR/sys (the host's, in a container)")(
      "help,h", "this help");
  return d;
}

std::string format_progress(const ProbeProgress& p) {
  if (p.preparing) return "iogate: writing the test file…";
  return fmt::format("iogate: {:5.1f}s / {:.1f}s  {:>8} IOPS{}", double(p.elapsed_ns) / 1e9, double(p.total_ns) / 1e9,
                     format_count(p.current_iops), p.ramping ? "  (ramp)" : "");
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
           "       iogate probe --mode dataset PATH [--workers 1,2,4,8] [options]\n\n"
           "Benchmarks the storage under PATH (a directory: a test file is written there, or the largest\n"
           "files are read if it is read-only; a file: that file is read). With --mode dataset, walks the\n"
           "dataset under PATH and reads sampled files whole, as a DataLoader does, in samples/s; it never\n"
           "writes.\n\n"
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
    o.output_format = str("output-format");
    if (auto json = parse_output_format_json(o.output_format); !json.ok()) return json.error();
    if (Status s = setup_logging(str("log-level"), str("log-format")); !s.ok()) return s.error();
    auto request = dataset_request_from_flags(vm, o.path, o.root);
    if (!request.ok()) return request.error();
    o.dataset = std::move(*request);
    return o;
  }
  if (mode != "io") return usage_error(fmt::format("--mode: expected io or dataset, got {}", quote_value(mode)));
  for (const char* k : {"workers", "scan-time", "scan-entries", "sample", "target-samples-per-s"}) {
    if (vm.count(k) && !vm[k].defaulted()) return usage_error(fmt::format("--{}: only with --mode dataset", k));
  }
  Workload& w = o.workload;
  auto rw = parse_rw_mode(str("rw"));
  if (!rw.ok()) return rw.error();
  w.rw = *rw;
  auto mix = parse_integer(str("rwmixread"), "--rwmixread", kRwmixreadRange.min, kRwmixreadRange.max);
  if (!mix.ok()) return mix.error();
  w.rwmixread = static_cast<int>(*mix);
  auto bs = parse_size(str("bs"), "--bs");
  if (!bs.ok()) return bs.error();
  w.block_size = *bs;
  auto depth = parse_integer(str("iodepth"), "--iodepth", kIodepthRange.min, kIodepthRange.max);
  if (!depth.ok()) return depth.error();
  w.iodepth = static_cast<int>(*depth);
  auto batch = parse_integer(str("iodepth-batch"), "--iodepth-batch", kIodepthRange.min, kIodepthRange.max);
  if (!batch.ok()) return batch.error();
  w.iodepth_batch = static_cast<int>(*batch);
  auto jobs = parse_integer(str("numjobs"), "--numjobs", kNumjobsRange.min, kNumjobsRange.max);
  if (!jobs.ok()) return jobs.error();
  w.numjobs = static_cast<int>(*jobs);
  auto runtime = parse_duration(str("runtime"), "--runtime");
  if (!runtime.ok()) return runtime.error();
  w.runtime = *runtime;
  auto ramp = parse_duration(str("ramp"), "--ramp");
  if (!ramp.ok()) return ramp.error();
  w.ramp = *ramp;
  auto size = parse_size(str("size"), "--size");
  if (!size.ok()) return size.error();
  w.size = *size;
  auto direct = parse_bool(str("direct"), "--direct");
  if (!direct.ok()) return direct.error();
  w.direct = *direct;
  if (vm.count("file")) w.file = str("file");
  if (vm.count("seed")) {
    auto seed = parse_integer(str("seed"), "--seed", 0, INT64_MAX);
    if (!seed.ok()) return seed.error();
    w.seed = static_cast<uint64_t>(*seed);
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
  o.output_format = str("output-format");
  if (auto json = parse_output_format_json(o.output_format); !json.ok()) return json.error();
  if (Status s = setup_logging(str("log-level"), str("log-format")); !s.ok()) return s.error();
  if (Status s = validate_workload(w); !s.ok()) return s.error();
  return o;
}

int run_probe_command(const std::vector<std::string>& args) {
  std::string help;
  auto options = parse_probe_args(args, &help);
  if (auto done = parsing_exit("probe", options, help)) return *done;
  if (options->dataset) return run_dataset_probe_command(*options->dataset, options->output_format);
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
  if (options->output_format == "json") {
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
