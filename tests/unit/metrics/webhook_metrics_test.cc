#include <doctest/doctest.h>

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "metrics/exposition.h"
#include "metrics/histogram.h"
#include "metrics/promtool_check.h"
#include "metrics/webhook_metrics.h"
#include "temp_tree.h"

namespace iogate {
namespace {

WebhookMetrics sample() {
  WebhookMetrics m;
  m.version = "0.1.0";
  m.requests = {{"mutate", "CREATE", "mutated", 7}, {"validate", "UPDATE", "denied", 2}};
  m.errors = {{"validate", "node_lookup", 3}};
  Histogram h = make_histogram({0.001, 0.01, 0.1});
  observe(h, 0.0005);
  observe(h, 0.001);  // le is "less or equal": counted in the 0.001 bucket
  observe(h, 0.05);
  observe(h, 2);
  m.latency = {{"mutate", h}};
  m.certificate_not_after_unix_s = 1893456000;
  m.node_watch = NodeWatchMetrics{true, true, 12, 1717171720.5};
  return m;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) != 0) out.push_back(line);
  }
  return out;
}

TEST_CASE("histogram: cumulative buckets with le as Prometheus reads it, then _sum and _count") {
  Histogram h = make_histogram({0.001, 0.01, 0.1});
  for (double v : {0.0005, 0.001, 0.05, 2.0}) observe(h, v);
  CHECK(h.count == 4);
  CHECK(h.sum == doctest::Approx(2.0515));
  std::vector<MetricSample> s = histogram_samples(h, {{"webhook", "mutate"}});
  REQUIRE(s.size() == 6);
  std::vector<std::pair<std::string, double>> buckets;
  for (size_t i = 0; i < 4; ++i) {
    CHECK(s[i].suffix == "_bucket");
    REQUIRE(s[i].labels.size() == 2);
    CHECK(s[i].labels[0] == std::pair<std::string, std::string>{"webhook", "mutate"});
    CHECK(s[i].labels[1].first == "le");
    buckets.emplace_back(s[i].labels[1].second, s[i].value);
  }
  CHECK(buckets == std::vector<std::pair<std::string, double>>{{"0.001", 2}, {"0.01", 2}, {"0.1", 3}, {"+Inf", 4}});
  CHECK(s[4].suffix == "_sum");
  CHECK(s[4].value == doctest::Approx(2.0515));
  CHECK(s[5].suffix == "_count");
  CHECK(s[5].value == 4);
}

TEST_CASE("webhook metrics: every family in the header's order, rendered line by line") {
  std::string text = render_exposition(webhook_metric_families(sample()));
  std::vector<std::string> expected = {
      "# TYPE iogate_build_info gauge",
      "iogate_build_info{version=\"0.1.0\"} 1",
      "# TYPE iogate_webhook_admission_requests_total counter",
      "iogate_webhook_admission_requests_total{webhook=\"mutate\",operation=\"CREATE\",decision=\"mutated\"} 7",
      "iogate_webhook_admission_requests_total{webhook=\"validate\",operation=\"UPDATE\",decision=\"denied\"} 2",
      "# TYPE iogate_webhook_admission_duration_seconds histogram",
      "iogate_webhook_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"0.001\"} 2",
      "iogate_webhook_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"0.01\"} 2",
      "iogate_webhook_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"0.1\"} 3",
      "iogate_webhook_admission_duration_seconds_bucket{webhook=\"mutate\",le=\"+Inf\"} 4",
      "iogate_webhook_admission_duration_seconds_sum{webhook=\"mutate\"} 2.0515",
      "iogate_webhook_admission_duration_seconds_count{webhook=\"mutate\"} 4",
      "# TYPE iogate_webhook_admission_errors_total counter",
      "iogate_webhook_admission_errors_total{webhook=\"validate\",kind=\"node_lookup\"} 3",
      "# TYPE iogate_webhook_certificate_not_after_timestamp_seconds gauge",
      "iogate_webhook_certificate_not_after_timestamp_seconds 1.893456e+09",  // Go's %g, as client_golang
      "# TYPE iogate_webhook_node_watch_synced gauge",
      "iogate_webhook_node_watch_synced 1",
      "# TYPE iogate_webhook_node_watch_current gauge",
      "iogate_webhook_node_watch_current 1",
      "# TYPE iogate_webhook_node_watch_nodes gauge",
      "iogate_webhook_node_watch_nodes 12",
      "# TYPE iogate_webhook_node_watch_last_contact_timestamp_seconds gauge",
      "iogate_webhook_node_watch_last_contact_timestamp_seconds 1.7171717205e+09",
  };
  CHECK(lines_of(text) == expected);
}

TEST_CASE("webhook metrics: without a watch or a certificate those series are absent, their families still typed") {
  WebhookMetrics m;
  m.version = "0.1.0";
  std::string text = render_exposition(webhook_metric_families(m));
  for (const char* name : {"iogate_webhook_certificate_not_after_timestamp_seconds", "iogate_webhook_node_watch_synced",
                           "iogate_webhook_node_watch_last_contact_timestamp_seconds"}) {
    CAPTURE(name);
    CHECK(text.find(std::string("# TYPE ") + name + " gauge\n") != std::string::npos);
    CHECK(text.find(std::string("\n") + name + " ") == std::string::npos);
  }
  m.node_watch = NodeWatchMetrics{false, false, 0, std::nullopt};  // watching, not listed yet
  text = render_exposition(webhook_metric_families(m));
  CHECK(text.find("\niogate_webhook_node_watch_synced 0\n") != std::string::npos);
  CHECK(text.find("\niogate_webhook_node_watch_last_contact_timestamp_seconds ") == std::string::npos);
}

// promtool lints as client_golang's promlint does (units, _total, histogram suffixes, HELP);
// silence is the pass.
TEST_CASE("webhook metrics: promtool check metrics accepts the output without a lint problem") {
  testing::check_promtool_accepts(render_exposition(webhook_metric_families(sample())));
}

}  // namespace
}  // namespace iogate
