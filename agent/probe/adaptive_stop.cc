#include "probe/adaptive_stop.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

namespace iogate {
namespace {

// One-sided 10% level of the lag-1 test (z of 0.90). Fishman's LBATCH tests at 0.10 too: a
// missed correlation costs a too-narrow interval, a false alarm only a larger batch.
constexpr double kLag1TestZ = 1.2815515655446004;

// P(|T| <= t) for T ~ Student t with df degrees of freedom, as a function of
// theta = atan(t / sqrt(df)) (Abramowitz & Stegun 26.7.3 and 26.7.4: exact for integer df).
double t_two_sided_cdf(double theta, int df) {
  double s = std::sin(theta), c = std::cos(theta), c2 = c * c;
  if (df % 2 == 1) {
    if (df == 1) return 2 * theta / std::numbers::pi;
    double term = 1, sum = 1;
    for (int k = 2; k <= df - 3; k += 2) {
      term *= c2 * k / (k + 1);
      sum += term;
    }
    return 2 / std::numbers::pi * (theta + s * c * sum);
  }
  double term = 1, sum = 1;
  for (int k = 1; k <= df - 3; k += 2) {
    term *= c2 * k / (k + 1);
    sum += term;
  }
  return s * sum;
}

struct Batches {
  int size = 0;
  std::vector<double> means;
};

// Means of the most recent samples in batches of `size`: the oldest n mod size samples, those
// nearest the ramp and so the likeliest to be transient, are the ones left out.
Batches make_batches(const std::vector<double>& x, int size) {
  Batches b{size, {}};
  size_t k = x.size() / size_t(size);
  size_t first = x.size() - k * size_t(size);
  for (size_t i = 0; i < k; ++i) {
    double sum = 0;
    for (size_t j = 0; j < size_t(size); ++j) sum += x[first + i * size_t(size) + j];
    b.means.push_back(sum / size);
  }
  return b;
}

double mean_of(const std::vector<double>& y) {
  double sum = 0;
  for (double v : y) sum += v;
  return y.empty() ? 0 : sum / double(y.size());
}

// von Neumann's ratio as an estimate of lag-1 autocorrelation: C = 1 - Σ(Y[i+1]-Y[i])² / 2Σ(Y-Ȳ)².
// Under independence it is about normal with mean 0 and variance (k-2)/(k²-1) even for small k,
// which is why it is preferred over the plain lag-1 correlation for 10–40 batch means.
double von_neumann_c(const std::vector<double>& y) {
  double m = mean_of(y), ss = 0, diffs = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    ss += (y[i] - m) * (y[i] - m);
    if (i + 1 < y.size()) diffs += (y[i + 1] - y[i]) * (y[i + 1] - y[i]);
  }
  if (ss <= 0) return 0;  // all equal: nothing to be correlated
  return 1 - diffs / (2 * ss);
}

bool lag1_correlated(double c, size_t k) {
  if (k < 3) return true;
  double kd = double(k);
  return c / std::sqrt((kd - 2) / (kd * kd - 1)) > kLag1TestZ;
}

}  // namespace

Status validate_early_stop(const EarlyStopConfig& c) {
  if (!(c.tolerance > 0 && c.tolerance <= 0.5)) {
    return usage_error(fmt::format("--tolerance: expected more than 0% and at most 50%, got {:g}%", c.tolerance * 100));
  }
  if (!(c.confidence >= 0.5 && c.confidence < 1)) {
    return usage_error(fmt::format("confidence: expected at least 50% and below 100%, got {:g}%", c.confidence * 100));
  }
  if (c.sample_interval < std::chrono::milliseconds(10) || c.sample_interval > std::chrono::seconds(1)) {
    return usage_error("sample_interval: expected 10 ms to 1 s");
  }
  if (c.min_window.count() < 0) return usage_error("min_window: must not be negative");
  if (c.threshold_iops && !(*c.threshold_iops > 0 && std::isfinite(*c.threshold_iops))) {
    return usage_error(fmt::format("--min-iops: expected a positive number, got {:g}", *c.threshold_iops));
  }
  if (!(c.threshold_margin >= 0 && c.threshold_margin < 1)) {
    return usage_error(fmt::format("threshold_margin: expected 0% to below 100%, got {:g}%", c.threshold_margin * 100));
  }
  return ok_status();
}

double student_t_quantile(double p, int df) {
  if (df < 1 || !(p > 0 && p < 1)) return std::nan("");
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  double target = 2 * p - 1;  // P(|T| <= t)
  double lo = 0, hi = std::numbers::pi / 2;
  for (int i = 0; i < 100 && hi - lo > 1e-15; ++i) {
    double mid = (lo + hi) / 2;
    (t_two_sided_cdf(mid, df) < target ? lo : hi) = mid;
  }
  return std::sqrt(double(df)) * std::tan((lo + hi) / 2);
}

ConfidenceInterval batch_means_interval(const std::vector<double>& x, double confidence) {
  ConfidenceInterval ci;
  ci.confidence = confidence;
  ci.samples = int(x.size());
  if (x.empty()) return ci;
  const int n = int(x.size());
  // Start from the smallest batch that keeps the count at or under kMaxBatches (merging
  // adjacent batches as samples grow), then double it while the batch means look correlated
  // and enough batches remain to look again.
  int size = std::max(1, (n + EarlyStop::kMaxBatches - 1) / EarlyStop::kMaxBatches);
  Batches b = make_batches(x, size);
  bool correlated = lag1_correlated(von_neumann_c(b.means), b.means.size());
  while (correlated && n / (size * 2) >= EarlyStop::kMinBatches) {
    size *= 2;
    b = make_batches(x, size);
    correlated = lag1_correlated(von_neumann_c(b.means), b.means.size());
  }
  const size_t k = b.means.size();
  ci.batch_size = b.size;
  ci.mean = mean_of(b.means);
  if (k < 2) {
    ci.mean = mean_of(x);
    return ci;
  }
  double ss = 0;
  for (double y : b.means) ss += (y - ci.mean) * (y - ci.mean);
  ci.batches = int(k);
  ci.batch_lag1 = von_neumann_c(b.means);
  // The test cannot rule out a mild positive correlation among 20–40 batch means, and even a
  // mild one makes s²/k too small: scale the variance by the AR(1) factor (1+r)/(1-r) for the
  // estimated r, as for an effective sample size. Costs independent samples little (r ≈ 0).
  double r = std::clamp(ci.batch_lag1, 0.0, 0.9);
  double std_error = std::sqrt(ss / double(k - 1) / double(k) * (1 + r) / (1 - r));
  ci.half_width = student_t_quantile((1 + confidence) / 2, int(k) - 1) * std_error;
  ci.relative_half_width = ci.mean > 0 ? ci.half_width / ci.mean : 0;
  ci.trusted = int(k) >= EarlyStop::kMinBatches && !correlated;
  return ci;
}

ConfidenceInterval EarlyStop::interval() const { return batch_means_interval(samples_, config_.confidence); }

BatchRange batch_range(const std::vector<double>& samples, int batch_samples) {
  BatchRange r;
  const size_t n = samples.size() / size_t(batch_samples) * size_t(batch_samples);
  const size_t skip = samples.size() - n;  // the oldest leftovers, as the interval drops them
  for (size_t i = skip; i < samples.size(); i += size_t(batch_samples)) {
    double sum = 0;
    for (size_t j = i; j < i + size_t(batch_samples); ++j) sum += samples[j];
    const double mean = sum / batch_samples;
    r.min = r.batches == 0 ? mean : std::min(r.min, mean);
    r.max = r.batches == 0 ? mean : std::max(r.max, mean);
    ++r.batches;
  }
  return r;
}

StopDecision EarlyStop::decide() const {
  StopDecision d;
  d.ci = interval();
  if (!config_.enabled) return d;
  if (double(samples_.size()) * double(config_.sample_interval.count()) < double(config_.min_window.count())) return d;
  if (config_.threshold_iops) {
    // Far from the threshold no interval is needed: when every half second of the window lies
    // beyond it by the margin, so does the window's mean, however correlated the samples are.
    // This is what lets a disk whose IOPS wander ±15% (an untrusted interval, for seconds) still
    // get a quick verdict against a floor it beats ten times over.
    const BatchRange r = batch_range(samples_, kThresholdBatchSamples);
    const double t = *config_.threshold_iops;
    if (r.batches >= kThresholdMinBatches && r.min >= t * (1 + config_.threshold_margin))
      d.reason = StopReason::kAboveThreshold;
    if (r.batches >= kThresholdMinBatches && r.max <= t * (1 - config_.threshold_margin))
      d.reason = StopReason::kBelowThreshold;
    if (d.reason != StopReason::kNone) {
      d.stop = true;
      return d;
    }
  }
  if (!d.ci.trusted) return d;
  const double low = d.ci.mean - d.ci.half_width, high = d.ci.mean + d.ci.half_width;
  if (config_.threshold_iops) {
    const double t = *config_.threshold_iops;
    if (low >= t * (1 + config_.threshold_margin)) d.reason = StopReason::kAboveThreshold;
    if (high <= t * (1 - config_.threshold_margin)) d.reason = StopReason::kBelowThreshold;
  }
  // A mean of zero is not "settled": a stalled device may resume; only the threshold rule (a
  // floor it is far below) may stop such a run early.
  if (d.reason == StopReason::kNone && d.ci.mean > 0 && d.ci.relative_half_width <= config_.tolerance) {
    d.reason = StopReason::kSettled;
  }
  d.stop = d.reason != StopReason::kNone;
  return d;
}

}  // namespace iogate
