#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "metrics/exposition.h"

namespace iogate {
namespace {

TEST_CASE("exposition: label values escape backslash, double quote and newline, nothing else") {
  CHECK(escape_label_value("plain /mnt/nvme-0") == "plain /mnt/nvme-0");
  CHECK(escape_label_value(R"(C:\disk)") == R"(C:\\disk)");
  CHECK(escape_label_value(R"(say "hi")") == R"(say \"hi\")");
  CHECK(escape_label_value("two\nlines") == R"(two\nlines)");
  CHECK(escape_label_value("\\\"\n") == R"(\\\"\n)");
  CHECK(escape_label_value("tab\there, µs") == "tab\there, µs");
  CHECK(escape_label_value("") == "");
}

TEST_CASE("exposition: HELP escapes backslash and newline but keeps double quotes") {
  CHECK(escape_help(R"(a "quoted" word)") == R"(a "quoted" word)");
  CHECK(escape_help(R"(back\slash)") == R"(back\\slash)");
  CHECK(escape_help("first\nsecond") == R"(first\nsecond)");
}

TEST_CASE("exposition: sample values as Go's strconv.FormatFloat(v, 'g', -1, 64)") {
  CHECK(format_sample_value(0) == "0");
  CHECK(format_sample_value(-0.0) == "0");
  CHECK(format_sample_value(1) == "1");
  CHECK(format_sample_value(-1) == "-1");
  CHECK(format_sample_value(12345) == "12345");
  CHECK(format_sample_value(123456) == "123456");
  CHECK(format_sample_value(40000) == "40000");
  CHECK(format_sample_value(0.5) == "0.5");
  CHECK(format_sample_value(-2.5) == "-2.5");
  CHECK(format_sample_value(10.5) == "10.5");
  CHECK(format_sample_value(0.1 + 0.2) == "0.30000000000000004");
  CHECK(format_sample_value(0.0001) == "0.0001");
  CHECK(format_sample_value(0.00025) == "0.00025");
  // From a decimal exponent of 6 up and below -4, the exponent form with at least two digits.
  CHECK(format_sample_value(1e6) == "1e+06");
  CHECK(format_sample_value(1234567) == "1.234567e+06");
  CHECK(format_sample_value(999999) == "999999");
  CHECK(format_sample_value(1717171717) == "1.717171717e+09");
  CHECK(format_sample_value(1717171720.5) == "1.7171717205e+09");
  CHECK(format_sample_value(static_cast<double>(UINT64_MAX)) == "1.8446744073709552e+19");
  CHECK(format_sample_value(1e100) == "1e+100");
  CHECK(format_sample_value(0.00001) == "1e-05");
  CHECK(format_sample_value(1.5e-7) == "1.5e-07");
  CHECK(format_sample_value(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
  CHECK(format_sample_value(std::numeric_limits<double>::denorm_min()) == "5e-324");
  CHECK(format_sample_value(std::nan("")) == "NaN");
  CHECK(format_sample_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(format_sample_value(-std::numeric_limits<double>::infinity()) == "-Inf");
}

TEST_CASE("exposition: every finite value reads back exactly") {
  for (double v : {1e-300, 3.14159, 2.0 / 3, 123456.789, 9007199254740993.0, 6.02214076e23, -1e-5}) {
    std::string s = format_sample_value(v);
    INFO(s);
    CHECK(std::strtod(s.c_str(), nullptr) == v);
  }
}

TEST_CASE("exposition: metric and label names") {
  CHECK(valid_metric_name("iogate_probe_iops"));
  CHECK(valid_metric_name("job:iogate_probe_iops:sum"));
  CHECK(valid_metric_name("_private"));
  CHECK(valid_metric_name("a1"));
  CHECK_FALSE(valid_metric_name(""));
  CHECK_FALSE(valid_metric_name("1abc"));
  CHECK_FALSE(valid_metric_name("iogate-probe"));
  CHECK_FALSE(valid_metric_name("iogate probe"));
  CHECK_FALSE(valid_metric_name("iogate.probe"));

  CHECK(valid_label_name("node"));
  CHECK(valid_label_name("device_class"));
  CHECK(valid_label_name("_x"));
  CHECK(valid_label_name("a1"));
  CHECK_FALSE(valid_label_name(""));
  CHECK_FALSE(valid_label_name("__name__"));
  CHECK_FALSE(valid_label_name("__"));
  CHECK_FALSE(valid_label_name("a:b"));
  CHECK_FALSE(valid_label_name("9lives"));
  CHECK_FALSE(valid_label_name("device-class"));
}

TEST_CASE("exposition: type names") {
  CHECK(metric_type_name(MetricType::kGauge) == "gauge");
  CHECK(metric_type_name(MetricType::kCounter) == "counter");
  CHECK(metric_type_name(MetricType::kSummary) == "summary");
}

TEST_CASE("exposition: families in order, HELP and TYPE first, labels in the given order") {
  MetricFamily up;
  up.name = "x_up";
  up.help = "Whether \\ it is up,\nsays \"x\".";
  up.samples.push_back({{}, 1});
  MetricFamily total;
  total.name = "x_requests_total";
  total.help = "Requests.";
  total.type = MetricType::kCounter;
  total.samples.push_back({{{"zone", "b"}, {"code", "200"}}, 1e6});
  total.samples.push_back({{{"zone", "a\"\n"}, {"code", "500"}}, 0.5});
  MetricFamily empty;
  empty.name = "x_latency_seconds";
  empty.help = "Latency.";
  empty.type = MetricType::kSummary;

  CHECK(render_exposition({up, total, empty}) ==
        "# HELP x_up Whether \\\\ it is up,\\nsays \"x\".\n"
        "# TYPE x_up gauge\n"
        "x_up 1\n"
        "# HELP x_requests_total Requests.\n"
        "# TYPE x_requests_total counter\n"
        "x_requests_total{zone=\"b\",code=\"200\"} 1e+06\n"
        "x_requests_total{zone=\"a\\\"\\n\",code=\"500\"} 0.5\n"
        "# HELP x_latency_seconds Latency.\n"
        "# TYPE x_latency_seconds summary\n");
  CHECK(render_exposition({}) == "");
}

}  // namespace
}  // namespace iogate
