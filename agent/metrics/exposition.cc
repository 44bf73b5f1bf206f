#include "metrics/exposition.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace iogate {
namespace {

bool name_start(char c, bool colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}

bool name_char(char c, bool colon) { return name_start(c, colon) || (c >= '0' && c <= '9'); }

bool valid_name(std::string_view name, bool colon) {
  if (name.empty() || !name_start(name[0], colon)) return false;
  for (char c : name) {
    if (!name_char(c, colon)) return false;
  }
  return true;
}

void append_sample(std::string& out, const std::string& name, const MetricSample& s) {
  out += name;
  out += s.suffix;
  if (!s.labels.empty()) {
    out += '{';
    for (size_t i = 0; i < s.labels.size(); ++i) {
      if (i > 0) out += ',';
      out += s.labels[i].first;
      out += "=\"";
      out += escape_label_value(s.labels[i].second);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += format_sample_value(s.value);
  out += '\n';
}

}  // namespace

std::string_view metric_type_name(MetricType t) {
  switch (t) {
    case MetricType::kGauge: return "gauge";
    case MetricType::kCounter: return "counter";
    case MetricType::kSummary: return "summary";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

std::string render_exposition(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const MetricFamily& f : families) {
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + f.name + " " + std::string(metric_type_name(f.type)) + "\n";
    for (const MetricSample& s : f.samples) append_sample(out, f.name, s);
  }
  return out;
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// HELP text may hold a double quote as is: the format escapes only what would end the line or
// start an escape.
std::string escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// Go's strconv.FormatFloat(v, 'g', -1, 64), which client_golang prints: the shortest digits that
// read back as v, in exponent form when the decimal exponent is below -4 or at least 6 (so
// 123456 but 1.234567e+06, 0.0001 but 1e-05). std::to_chars gives both shortest forms; its
// scientific one already writes the exponent as Go does (sign, at least two digits).
std::string format_sample_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return "0";  // -0 too, as client_golang writes it
  char buf[64];
  auto sci = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string s(buf, sci.ptr);
  int exponent = std::atoi(s.c_str() + s.find('e') + 1);
  if (exponent < -4 || exponent >= 6) return s;
  auto fixed = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, fixed.ptr);
}

MetricFamily metric_family(std::string name, MetricType type, std::string help) {
  MetricFamily f;
  f.name = std::move(name);
  f.type = type;
  f.help = std::move(help);
  return f;
}

MetricFamily build_info_family(const std::string& version) {
  MetricFamily f;
  f.name = "iogate_build_info";
  f.help = "The iogate version serving these metrics; always 1.";
  f.samples.push_back({{{"version", version}}, 1});
  return f;
}

bool valid_metric_name(std::string_view name) { return valid_name(name, true); }

// Names starting with __ are Prometheus's own (__name__, __address__).
bool valid_label_name(std::string_view name) { return valid_name(name, false) && name.substr(0, 2) != "__"; }

}  // namespace iogate
