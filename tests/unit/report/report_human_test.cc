#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "base/units.h"
#include "report/report_human.h"
#include "sample_probe_result.h"

using namespace iogate;
using namespace iogate::testing;

namespace {

// Code points, not bytes, and nothing inside an ANSI escape: what a terminal shows.
size_t columns(const std::string& line) {
  size_t w = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\033') {
      while (i < line.size() && line[i] != 'm') ++i;
      continue;
    }
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++w;
  }
  return w;
}

// The code points of a UTF-8 string, one string each.
std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) out.emplace_back();
    out.back() += s[i];
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int level(const std::string& block) {
  static const std::vector<std::string> kLevels = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  for (size_t i = 0; i < kLevels.size(); ++i) {
    if (kLevels[i] == block) return static_cast<int>(i);
  }
  return -1;
}

const std::string* line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const std::string& l : lines) {
    if (l.rfind(prefix, 0) == 0) return &l;
  }
  return nullptr;
}

void check_width(const std::string& text) {
  for (const std::string& line : lines_of(text)) {
    INFO("line: ", line);
    CHECK(columns(line) <= 100);
  }
}

}  // namespace

TEST_CASE("sparkline: one block per value, rising with the values") {
  std::vector<uint64_t> rising = {10, 20, 30, 40, 50, 60, 70, 80};
  std::vector<std::string> blocks = code_points(render_sparkline(rising, 60));
  REQUIRE(blocks.size() == rising.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    INFO("column ", i);
    REQUIRE(level(blocks[i]) >= 0);
    if (i > 0) CHECK(level(blocks[i]) >= level(blocks[i - 1]));
  }
  CHECK(level(blocks.front()) < level(blocks.back()));
  CHECK(blocks.back() == "█");
  // Heights are proportional to the value: a 5% dip stays near the top, a stall hits the floor.
  std::vector<std::string> steady = code_points(render_sparkline({1000, 950, 1000, 0}, 60));
  CHECK(level(steady[1]) >= 6);
  CHECK(steady[3] == "▁");
  CHECK(render_sparkline({}, 60).empty());
  CHECK(render_sparkline({0, 0, 0}, 60) == "▁▁▁");
}

TEST_CASE("sparkline: more values than columns are averaged down") {
  std::vector<uint64_t> values(150);
  for (size_t i = 0; i < values.size(); ++i) values[i] = i;
  std::vector<std::string> blocks = code_points(render_sparkline(values, 60));
  CHECK(sparkline_values_per_column(150, 60) == 3);
  CHECK(blocks.size() == 50);  // ceil(150 / 3)
  CHECK(blocks.size() <= 60);
  CHECK(level(blocks.front()) == 0);
  CHECK(blocks.back() == "█");
  // Averaging, not sampling: a one-second spike in a column of two is half height.
  CHECK(render_sparkline({0, 800, 800, 800}, 2) == "▅█");
}

TEST_CASE("latency chart: few rows, round boundaries, bars scaled to the fullest row") {
  Sample s = make_sample();
  const LatencyHistogram& h = s.result.jobs[0].read.clat;
  std::string chart = render_latency_histogram(h, 12, 40);
  std::vector<std::string> rows = lines_of(chart);
  REQUIRE(rows.size() >= 3);
  CHECK(rows.size() <= 12);
  double percent_sum = 0;
  size_t longest_bar = 0;
  for (const std::string& row : rows) {
    INFO("row: ", row);
    CHECK(row.find(" – ") != std::string::npos);
    CHECK(row.back() == '%');
    size_t bar = 0;
    for (const std::string& cp : code_points(row)) {
      if (cp == "█" || cp == "▏" || cp == "▎" || cp == "▍" || cp == "▌" || cp == "▋" || cp == "▊" || cp == "▉") ++bar;
    }
    CHECK(bar <= 40);
    longest_bar = std::max(longest_bar, bar);
    size_t pct_at = row.find_last_of(' ') + 1;
    if (row[pct_at] != '<') percent_sum += std::stod(row.substr(pct_at));
  }
  CHECK(longest_bar == 40);
  CHECK(percent_sum == doctest::Approx(100.0).epsilon(0.01));
  // The median (250 µs) falls in a row whose bounds print as round numbers.
  CHECK(chart.find("200 µs – 500 µs") != std::string::npos);
  CHECK(render_latency_histogram(LatencyHistogram{}, 12, 40).empty());
}

TEST_CASE("latency chart: a wide spread is coarsened to fit, gaps between modes are kept") {
  LatencyHistogram h;
  for (int i = 0; i < 1000; ++i) h.record(100'000);    // 100 µs
  for (int i = 0; i < 10; ++i) h.record(800'000'000);  // 800 ms, a rare stall
  std::vector<std::string> rows = lines_of(render_latency_histogram(h, 10, 20));
  REQUIRE(rows.size() >= 3);
  CHECK(rows.size() <= 10);
  CHECK(rows.back().find("1.0%") != std::string::npos);
  CHECK(rows.front().find("99.0%") != std::string::npos);
  CHECK(rows[1].find("0.0%") != std::string::npos);  // an empty row between the two modes
  LatencyHistogram one;
  one.record(1);
  one.record(uint64_t{1} << 60);  // more decades than rows: neighbours merge
  CHECK(lines_of(render_latency_histogram(one, 3, 20)).size() <= 3);
}

TEST_CASE("human report: headline numbers and the run's description") {
  Sample s = make_sample();
  std::string text = render_probe_human(s.result, false);
  std::vector<std::string> lines = lines_of(text);
  INFO(text);
  REQUIRE(!lines.empty());
  CHECK(lines[0] == "iogate probe /data");
  REQUIRE(lines.size() > 1);
  CHECK(lines[1] == "run      randread 4k  QD32 × 2 jobs  10 s (+1 s ramp)  libaio direct  seed 2246800662264969608");
  const std::string* target = line_starting(lines, "target   ");
  REQUIRE(target);
  CHECK(target->find("ext4 on /dev/vda (253:0)") != std::string::npos);
  CHECK(target->find("mounted at /") != std::string::npos);
  CHECK(target->find("test file 1.00 GiB (created)") != std::string::npos);

  JobResult all = s.result.aggregate();
  const std::string* read = line_starting(lines, "read     ");
  REQUIRE(read);
  double iops = 70000 / 10.0;
  CHECK(read->find(format_count(iops) + " IOPS") != std::string::npos);
  CHECK(read->find(format_rate_bytes(iops * 4096)) != std::string::npos);
  CHECK(read->find("p99 " + format_duration_ns(static_cast<double>(all.read.clat.percentile(99)))) !=
        std::string::npos);
  CHECK(read->find("p50 " + format_duration_ns(static_cast<double>(all.read.clat.percentile(50)))) !=
        std::string::npos);
  CHECK(read->find("max " + format_duration_ns(static_cast<double>(all.read.clat.max()))) != std::string::npos);
  CHECK(line_starting(lines, "write") == nullptr);  // a randread did no writes

  const std::string* timeline = line_starting(lines, "IOPS/s   ");
  REQUIRE(timeline);
  CHECK(timeline->find("min 6.0k") != std::string::npos);
  CHECK(timeline->find("max 7.8k") != std::string::npos);
  CHECK(line_starting(lines, "latency  "));
  const std::string* device = line_starting(lines, "device   vda");
  REQUIRE(device);
  CHECK(device->find("util 98.2%") != std::string::npos);
  CHECK(device->find("aqu-sz 31.2") != std::string::npos);
  CHECK(device->find("r_await 280 µs") != std::string::npos);
  const std::string* cpu = line_starting(lines, "cpu      ");
  REQUIRE(cpu);
  CHECK(cpu->find("sys 1.20 s") != std::string::npos);
  CHECK(cpu->find(format_duration_ns(1.61e9 / 70000) + " per I/O") != std::string::npos);
  const std::string* warning = line_starting(lines, "warning  the test file was written with zeros");
  CHECK(warning);
}

TEST_CASE("human report: the timeline has one block per second") {
  Sample s = make_sample();
  std::vector<std::string> lines = lines_of(render_probe_human(s.result, false));
  const std::string* timeline = line_starting(lines, "IOPS/s   ");
  REQUIRE(timeline);
  std::string spark = timeline->substr(9, timeline->find("  min") - 9);
  std::vector<std::string> blocks = code_points(spark);
  CHECK(blocks.size() == 10);
  CHECK(level(blocks.front()) <= level(blocks.back()));  // the sample's IOPS rise every second
}

TEST_CASE("human report: mixed workloads get a line and a chart per direction") {
  Sample s = make_sample(true);
  std::string text = render_probe_human(s.result, false);
  std::vector<std::string> lines = lines_of(text);
  INFO(text);
  CHECK(lines[1].find("randrw 4k 70/30") != std::string::npos);
  CHECK(lines[1].find("seed 2246800662264969608") != std::string::npos);  // still one line
  REQUIRE(line_starting(lines, "write    "));
  CHECK(line_starting(lines, "write    ")->find(format_count(35000 / 10.0) + " IOPS") != std::string::npos);
  CHECK(line_starting(lines, "r lat    "));
  CHECK(line_starting(lines, "w lat    "));
  CHECK(line_starting(lines, "device   vda")->find("w_await 910 µs") != std::string::npos);
  check_width(text);
}

TEST_CASE("human report: no statistics, no I/O, interrupted, long timelines") {
  Sample s = make_sample();
  s.result.diskstats = {};
  s.result.target.fs_type = "tmpfs";
  s.result.stop_reason = StopReason::kSignal;
  s.result.measured_ns = 3'210'000'000;
  std::vector<uint64_t>& timeline = s.result.jobs[0].iops_per_second;
  timeline.assign(300, 5000);
  std::vector<std::string> lines = lines_of(render_probe_human(s.result, false));
  CHECK(line_starting(lines, "device   no block device statistics (tmpfs)"));
  CHECK(lines[0].find("stopped by signal after 3.21 s") != std::string::npos);
  const std::string* spark = line_starting(lines, "IOPS/5s  ");  // 300 s in 60 columns
  REQUIRE(spark);
  CHECK(code_points(spark->substr(9, spark->find("  min") - 9)).size() == 60);

  ProbeResult empty;
  std::string text = render_probe_human(empty, false);
  CHECK(text.find("result   no I/O completed") != std::string::npos);
  CHECK(text.find("per I/O") == std::string::npos);
}

namespace {
// The "95% CI" field with its continuation lines, joined by spaces.
std::string interval_text(const ProbeResult& r) {
  std::vector<std::string> lines = lines_of(render_probe_human(r, false));
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("95% CI   ", 0) != 0) continue;
    out = lines[i];
    while (i + 1 < lines.size() && lines[i + 1].rfind(std::string(9, ' '), 0) == 0) {
      out += ' ';
      out += lines[++i].substr(9);
    }
  }
  return out;
}
}  // namespace

TEST_CASE("human report: the interval line says how settled the mean is and why the run stopped") {
  Sample s = make_sample();
  std::vector<std::string> lines = lines_of(render_probe_human(s.result, false));
  const std::string* ci = line_starting(lines, "95% CI   ");
  REQUIRE(ci);
  CHECK(ci->find("±2.0% of 7.0k IOPS") != std::string::npos);
  CHECK(ci->find("100 samples, 33 batches of 3") != std::string::npos);
  CHECK(ci->find("stopped") == std::string::npos);  // early stop off: ran its runtime

  ProbeResult& r = s.result;
  r.convergence.early_stop.enabled = true;
  r.stop_reason = StopReason::kSettled;
  r.measured_ns = 2'400'000'000;
  CHECK(lines_of(render_probe_human(r, false))[0] == "iogate probe /data");  // not "stopped by settled"
  INFO(interval_text(r));
  CHECK(interval_text(r).find("stopped early: settled within ±3% after 2.40 s") != std::string::npos);

  r.convergence.early_stop.threshold_iops = 10000;
  r.stop_reason = StopReason::kBelowThreshold;
  CHECK(interval_text(r).find("stopped early: clearly below 10.0k IOPS after 2.40 s") != std::string::npos);

  r.stop_reason = StopReason::kRuntime;
  r.convergence.ci.trusted = false;
  r.convergence.ci.batch_lag1 = 0.61;
  CHECK(interval_text(r).find("not trusted: batch means correlated (r 0.61)") != std::string::npos);
  CHECK(interval_text(r).find("not settled within ±3%") != std::string::npos);
}

TEST_CASE("human report: escape codes only with color, bold numbers and yellow warnings") {
  Sample s = make_sample();
  std::string plain = render_probe_human(s.result, false);
  CHECK(plain.find('\033') == std::string::npos);
  std::string colored = render_probe_human(s.result, true);
  CHECK(colored.find("\033[1m" + format_count(7000) + "\033[0m IOPS") != std::string::npos);
  CHECK(colored.find("\033[33mwarning  the test file") != std::string::npos);
  check_width(colored);
}

TEST_CASE("human report: no line is wider than 100 columns, even with long paths and warnings") {
  Sample s = make_sample();
  s.result.target.path = "/var/lib/kubelet/pods/" + std::string(120, 'p') + "/volumes/kubernetes.io~csi/µdata";
  s.result.target.mount_point = s.result.target.path;
  s.result.warnings.push_back(
      "a long warning that goes on and on about page caches, compression, deduplication, thin provisioning and "
      "all the other reasons a number might be too good to be true — µs and ms and ×, in UTF-8 throughout");
  // Slow latencies make the widest numbers.
  s.result.jobs[0].read.clat.record(987'654'321);
  for (bool color : {false, true}) {
    std::string text = render_probe_human(s.result, color);
    INFO(text);
    check_width(text);
    // The long path is wrapped, not lost.
    std::string joined;
    for (const std::string& line : lines_of(text)) joined += line.substr(std::min<size_t>(line.size(), 9));
    CHECK(joined.find(std::string(80, 'p')) != std::string::npos);
    CHECK(text.find("true — µs and ms") != std::string::npos);
  }
}
