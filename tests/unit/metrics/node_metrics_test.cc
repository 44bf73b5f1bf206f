#include <doctest/doctest.h>

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "metrics/exposition.h"
#include "metrics/node_metrics.h"
#include "metrics/promtool_check.h"
#include "temp_tree.h"

namespace iogate {
namespace {

// A node with one path probed (and judged) and one that has not had a successful probe yet.
NodeMetrics two_paths() {
  NodeMetrics m;
  m.node = "gpu-node-1";
  m.version = "0.1.0";
  PathMetrics nvme;
  nvme.path = "/mnt/nvme";
  nvme.name = "scratch";
  nvme.device = "nvme0n1";
  nvme.device_class = "nvme";
  nvme.model = "Samsung SSD 980 PRO 1TB";
  nvme.transport = "nvme";
  nvme.fs_type = "ext4";
  nvme.measured = true;
  nvme.rw = "randread";
  nvme.bs = "4k";
  nvme.iops = 123456;
  nvme.bandwidth_bytes_per_s = 123456.0 * 4096;
  nvme.p50_s = 0.00025;
  nvme.p90_s = 0.0005;
  nvme.p99_s = 0.0012;
  nvme.p999_s = 0.004;
  nvme.probe_duration_s = 10.5;
  nvme.last_success_unix_s = 1717171717;
  nvme.verdict = "pass";
  nvme.min_iops = 40000;
  nvme.probes_total = 12;
  nvme.errors_total = 1;
  nvme.busy_skips_total = 3;
  PathMetrics data;
  data.path = "/data";
  data.device = "sda";
  data.device_class = "hdd";
  data.transport = "sata";
  data.fs_type = "xfs";
  data.errors_total = 2;
  m.paths = {nvme, data};
  m.below_policy = false;
  m.api_sync_errors_total = 4;
  m.api_sync_pending = true;
  m.api_last_sync_unix_s = 1717171720.5;
  return m;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// HELP wording is checked on its own; here only that each family has one, where it belongs.
std::string without_help_text(const std::string& line) {
  if (line.rfind("# HELP ", 0) != 0) return line;
  return line.substr(0, line.find(' ', 7));
}

const MetricFamily& family(const std::vector<MetricFamily>& fs, const std::string& name) {
  for (const MetricFamily& f : fs) {
    if (f.name == name) return f;
  }
  FAIL("no family " << name);
  return fs.front();
}

std::vector<std::string> keys(const MetricLabels& labels) {
  std::vector<std::string> out;
  for (const auto& [k, v] : labels) out.push_back(k);
  return out;
}

TEST_CASE("node metrics: a measured and an unmeasured path, rendered line by line") {
  const std::string p = R"(node="gpu-node-1",path="/mnt/nvme",name="scratch")";
  const std::string d = R"(node="gpu-node-1",path="/data",name="")";
  const std::string w = p + R"(,rw="randread",bs="4k")";
  const std::vector<std::string> want = {
      "# HELP iogate_build_info",
      "# TYPE iogate_build_info gauge",
      R"(iogate_build_info{version="0.1.0"} 1)",
      "# HELP iogate_probe_iops",
      "# TYPE iogate_probe_iops gauge",
      "iogate_probe_iops{" + w + "} 123456",
      "# HELP iogate_probe_bandwidth_bytes_per_second",
      "# TYPE iogate_probe_bandwidth_bytes_per_second gauge",
      "iogate_probe_bandwidth_bytes_per_second{" + w + "} 5.05675776e+08",
      "# HELP iogate_probe_latency_seconds",
      "# TYPE iogate_probe_latency_seconds summary",
      "iogate_probe_latency_seconds{" + w + R"(,quantile="0.5"} 0.00025)",
      "iogate_probe_latency_seconds{" + w + R"(,quantile="0.9"} 0.0005)",
      "iogate_probe_latency_seconds{" + w + R"(,quantile="0.99"} 0.0012)",
      "iogate_probe_latency_seconds{" + w + R"(,quantile="0.999"} 0.004)",
      "# HELP iogate_probe_duration_seconds",
      "# TYPE iogate_probe_duration_seconds gauge",
      "iogate_probe_duration_seconds{" + p + "} 10.5",
      "# HELP iogate_probe_last_success_timestamp_seconds",
      "# TYPE iogate_probe_last_success_timestamp_seconds gauge",
      "iogate_probe_last_success_timestamp_seconds{" + p + "} 1.717171717e+09",
      "# HELP iogate_probes_total",
      "# TYPE iogate_probes_total counter",
      "iogate_probes_total{" + p + "} 12",
      "iogate_probes_total{" + d + "} 0",
      "# HELP iogate_probe_errors_total",
      "# TYPE iogate_probe_errors_total counter",
      "iogate_probe_errors_total{" + p + "} 1",
      "iogate_probe_errors_total{" + d + "} 2",
      "# HELP iogate_probe_skips_total",
      "# TYPE iogate_probe_skips_total counter",
      "iogate_probe_skips_total{" + p + R"(,reason="busy"} 3)",
      "iogate_probe_skips_total{" + d + R"(,reason="busy"} 0)",
      "# HELP iogate_policy_min_iops",
      "# TYPE iogate_policy_min_iops gauge",
      "iogate_policy_min_iops{" + p + "} 40000",
      "# HELP iogate_policy_verdict",
      "# TYPE iogate_policy_verdict gauge",
      "iogate_policy_verdict{" + p + R"(,verdict="pass"} 1)",
      "iogate_policy_verdict{" + p + R"(,verdict="fail"} 0)",
      "iogate_policy_verdict{" + p + R"(,verdict="warn"} 0)",
      "iogate_policy_verdict{" + p + R"(,verdict="off"} 0)",
      "# HELP iogate_probe_samples_per_second",
      "# TYPE iogate_probe_samples_per_second gauge",
      "# HELP iogate_node_accelerators_sustained",
      "# TYPE iogate_node_accelerators_sustained gauge",
      "# HELP iogate_node_below_policy",
      "# TYPE iogate_node_below_policy gauge",
      R"(iogate_node_below_policy{node="gpu-node-1"} 0)",
      "# HELP iogate_device_info",
      "# TYPE iogate_device_info gauge",
      "iogate_device_info{" + p +
          R"(,device="nvme0n1",device_class="nvme",model="Samsung SSD 980 PRO 1TB",transport="nvme",fstype="ext4"} 1)",
      "iogate_device_info{" + d + R"(,device="sda",device_class="hdd",model="",transport="sata",fstype="xfs"} 1)",
      "# HELP iogate_api_sync_errors_total",
      "# TYPE iogate_api_sync_errors_total counter",
      R"(iogate_api_sync_errors_total{node="gpu-node-1"} 4)",
      "# HELP iogate_api_sync_pending",
      "# TYPE iogate_api_sync_pending gauge",
      R"(iogate_api_sync_pending{node="gpu-node-1"} 1)",
      "# HELP iogate_api_last_sync_timestamp_seconds",
      "# TYPE iogate_api_last_sync_timestamp_seconds gauge",
      R"(iogate_api_last_sync_timestamp_seconds{node="gpu-node-1"} 1.7171717205e+09)",
  };
  std::string text = render_exposition(node_metric_families(two_paths()));
  REQUIRE(text.back() == '\n');
  std::vector<std::string> got = lines_of(text);
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    INFO("line ", i + 1, ": ", got[i]);
    CHECK(without_help_text(got[i]) == want[i]);
  }
  CHECK(got.size() == want.size());
}

TEST_CASE("node metrics: the families of the header's table, in its order, each with a useful HELP") {
  const std::vector<std::string> names = {"iogate_build_info",
                                          "iogate_probe_iops",
                                          "iogate_probe_bandwidth_bytes_per_second",
                                          "iogate_probe_latency_seconds",
                                          "iogate_probe_duration_seconds",
                                          "iogate_probe_last_success_timestamp_seconds",
                                          "iogate_probes_total",
                                          "iogate_probe_errors_total",
                                          "iogate_probe_skips_total",
                                          "iogate_policy_min_iops",
                                          "iogate_policy_verdict",
                                          "iogate_probe_samples_per_second",
                                          "iogate_node_accelerators_sustained",
                                          "iogate_node_below_policy",
                                          "iogate_device_info",
                                          "iogate_api_sync_errors_total",
                                          "iogate_api_sync_pending",
                                          "iogate_api_last_sync_timestamp_seconds"};
  // An empty node too: the set of families does not depend on what was measured.
  for (const NodeMetrics& m : {two_paths(), NodeMetrics{}}) {
    std::vector<MetricFamily> fs = node_metric_families(m);
    REQUIRE(fs.size() == names.size());
    for (size_t i = 0; i < fs.size(); ++i) {
      const MetricFamily& f = fs[i];
      INFO(f.name, ": ", f.help);
      CHECK(f.name == names[i]);
      CHECK(valid_metric_name(f.name));
      CHECK(f.help.size() > 20);
      CHECK(f.help.find('\n') == std::string::npos);
      bool counter = f.name.ends_with("_total");
      CHECK((f.type == MetricType::kCounter) == counter);
      if (f.name.ends_with("_seconds")) CHECK(f.help.find("seconds") != std::string::npos);
      if (f.name.find("bytes") != std::string::npos) CHECK(f.help.find("Bytes") != std::string::npos);
      for (const MetricSample& s : f.samples) {
        std::set<std::string> seen;
        for (const auto& [k, v] : s.labels) {
          CHECK(valid_label_name(k));
          CHECK(seen.insert(k).second);
        }
      }
    }
  }
}

TEST_CASE("node metrics: label order as in the header's table") {
  std::vector<MetricFamily> fs = node_metric_families(two_paths());
  using Keys = std::vector<std::string>;
  const Keys path = {"node", "path", "name"};
  const Keys workload = {"node", "path", "name", "rw", "bs"};
  CHECK(keys(family(fs, "iogate_build_info").samples.at(0).labels) == Keys{"version"});
  CHECK(keys(family(fs, "iogate_probe_iops").samples.at(0).labels) == workload);
  CHECK(keys(family(fs, "iogate_probe_bandwidth_bytes_per_second").samples.at(0).labels) == workload);
  CHECK(keys(family(fs, "iogate_probe_latency_seconds").samples.at(0).labels) ==
        Keys{"node", "path", "name", "rw", "bs", "quantile"});
  for (const char* name : {"iogate_probe_duration_seconds", "iogate_probe_last_success_timestamp_seconds",
                           "iogate_probes_total", "iogate_probe_errors_total", "iogate_policy_min_iops"}) {
    INFO(name);
    CHECK(keys(family(fs, name).samples.at(0).labels) == path);
  }
  CHECK(keys(family(fs, "iogate_probe_skips_total").samples.at(0).labels) == Keys{"node", "path", "name", "reason"});
  CHECK(keys(family(fs, "iogate_policy_verdict").samples.at(0).labels) == Keys{"node", "path", "name", "verdict"});
  CHECK(keys(family(fs, "iogate_device_info").samples.at(0).labels) ==
        Keys{"node", "path", "name", "device", "device_class", "model", "transport", "fstype"});
  for (const char* name : {"iogate_node_below_policy", "iogate_api_sync_errors_total", "iogate_api_sync_pending",
                           "iogate_api_last_sync_timestamp_seconds"}) {
    INFO(name);
    CHECK(keys(family(fs, name).samples.at(0).labels) == Keys{"node"});
  }
}

TEST_CASE("node metrics: before anything is known, measured series are absent, not zero") {
  NodeMetrics m;
  m.node = "n1";
  m.version = "0.1.0";
  PathMetrics fresh;
  fresh.path = "/mnt/a";
  fresh.device_class = "ssd";
  fresh.verdict = "fail";  // ignored without a successful probe: the policy judged no measurement
  m.paths = {fresh};
  std::vector<MetricFamily> fs = node_metric_families(m);

  for (const char* name :
       {"iogate_probe_iops", "iogate_probe_bandwidth_bytes_per_second", "iogate_probe_latency_seconds",
        "iogate_probe_duration_seconds", "iogate_probe_last_success_timestamp_seconds", "iogate_policy_min_iops",
        "iogate_policy_verdict", "iogate_node_below_policy", "iogate_api_last_sync_timestamp_seconds"}) {
    INFO(name);
    CHECK(family(fs, name).samples.empty());
  }
  for (const char* name :
       {"iogate_build_info", "iogate_probes_total", "iogate_probe_errors_total", "iogate_probe_skips_total",
        "iogate_device_info", "iogate_api_sync_errors_total", "iogate_api_sync_pending"}) {
    INFO(name);
    CHECK(family(fs, name).samples.size() == 1);
  }
  CHECK(family(fs, "iogate_api_sync_pending").samples[0].value == 0);
  // The family still names itself, so a scrape shows what the agent could report.
  std::string text = render_exposition(fs);
  CHECK(text.find("# TYPE iogate_node_below_policy gauge\n# HELP iogate_device_info") != std::string::npos);

  m.below_policy = true;
  fs = node_metric_families(m);
  REQUIRE(family(fs, "iogate_node_below_policy").samples.size() == 1);
  CHECK(family(fs, "iogate_node_below_policy").samples[0].value == 1);
}

TEST_CASE("node metrics: the verdict as four samples, 1 for the current one") {
  for (const std::string current : {"pass", "fail", "warn", "off"}) {
    NodeMetrics m = two_paths();
    m.paths[0].verdict = current;
    std::vector<MetricFamily> fs = node_metric_families(m);
    const MetricFamily& f = family(fs, "iogate_policy_verdict");
    REQUIRE(f.samples.size() == 4);
    std::vector<std::string> order;
    for (const MetricSample& s : f.samples) {
      const std::string& v = s.labels.back().second;
      order.push_back(v);
      INFO(current, " sample ", v);
      CHECK(s.value == (v == current ? 1 : 0));
    }
    CHECK(order == std::vector<std::string>{"pass", "fail", "warn", "off"});
  }
  for (const std::string unknown : {"", "error"}) {
    NodeMetrics m = two_paths();
    m.paths[0].verdict = unknown;
    INFO("verdict '", unknown, "'");
    CHECK(family(node_metric_families(m), "iogate_policy_verdict").samples.empty());
  }
}

TEST_CASE("node metrics: label values from the outside are escaped") {
  NodeMetrics m = two_paths();
  m.paths[1].path = "/mnt/odd \"dir\"\\x";
  m.paths[1].model = "two\nlines";
  std::string text = render_exposition(node_metric_families(m));
  CHECK(text.find(R"(path="/mnt/odd \"dir\"\\x")") != std::string::npos);
  CHECK(text.find(R"(model="two\nlines")") != std::string::npos);
  CHECK(text.find("two\nlines") == std::string::npos);
}

TEST_CASE("node metrics: promtool check metrics accepts the output without a lint problem") {
  NodeMetrics m = two_paths();
  PathMetrics third = m.paths[0];
  third.path = "/mnt/slow";
  third.name = "";
  third.iops = 812.5;
  third.verdict = "fail";
  third.min_iops = 0;
  m.paths.push_back(third);
  m.below_policy = true;

  testing::check_promtool_accepts(render_exposition(node_metric_families(m)));
}

TEST_CASE("node metrics: a samples-mode path's samples/s, its 4k headline and each rule's accelerators sustained") {
  NodeMetrics m = two_paths();
  m.paths[0].rw = "randread";
  m.paths[0].bs = "112k";
  m.paths[0].samples_per_s = 5454;
  m.paths[0].headline_iops = 41000;
  m.sustained = {{"feed-gpus", "", 2}, {"resnet", "resnet50", 3}};
  std::vector<MetricFamily> fs = node_metric_families(m);
  const MetricFamily& iops = family(fs, "iogate_probe_iops");
  int headline = 0;
  for (const MetricSample& s : iops.samples) {
    if (s.labels.back() == std::pair<std::string, std::string>{"bs", "4k"} && s.value == 41000) ++headline;
  }
  CHECK(headline == 1);
  REQUIRE(family(fs, "iogate_probe_samples_per_second").samples.size() == 1);
  CHECK(family(fs, "iogate_probe_samples_per_second").samples[0].value == 5454);
  const MetricFamily& sustained = family(fs, "iogate_node_accelerators_sustained");
  REQUIRE(sustained.samples.size() == 2);
  CHECK(sustained.samples[1].labels ==
        MetricLabels{{"node", "gpu-node-1"}, {"rule", "resnet"}, {"workload", "resnet50"}});
  CHECK(sustained.samples[1].value == 3);
  // Samples that were themselves 4 KiB random reads: the headline is not a second, equal series.
  m.paths[0].bs = "4k";
  CHECK(family(node_metric_families(m), "iogate_probe_iops").samples.size() == iops.samples.size() - 1);
}

}  // namespace
}  // namespace iogate
