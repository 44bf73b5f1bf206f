// Adaptive stopping of a probe: when has the measured IOPS settled enough to stop?
//
// Fed with one throughput sample per interval (completions per second over the last 100 ms,
// after the ramp), it keeps a confidence interval of the mean by the method of batch means and
// says when to stop: when the interval's half-width is within a tolerance of the mean
// ("settled"), or when the run lies clearly on one side of a policy threshold ("above-threshold",
// "below-threshold": the whole trusted interval, or every half-second batch of the window, at
// least threshold_margin beyond it). The probe always stops at its runtime limit anyway.
//
// Why batch means and not the textbook mean ± t·s/√n over the samples: successive 100 ms IOPS
// samples of a real disk are autocorrelated (host caches warm and flush, garbage collection and
// throttling last longer than 100 ms), so s/√n underestimates the standard error of the mean and
// a naive interval is too narrow — it would stop a drifting run "settled". Averaging adjacent
// samples into batches long enough that the batch means are nearly independent restores an honest
// interval; a lag-1 test on the batch means (von Neumann's ratio) checks "long enough", and the
// batches grow while the test finds correlation. With too few batches to check, the interval is
// reported but not trusted, and an untrusted interval never stops a run.
//
// Engine-independent and clock-free: plain numbers in, a decision out, so tests can drive it
// with synthetic streams.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "probe/stop_reason.h"

namespace iogate {

struct EarlyStopConfig {
  bool enabled = false;      // off: the interval is still computed and reported, nothing stops
  double tolerance = 0.03;   // "settled" when the interval's half-width <= tolerance × mean
  double confidence = 0.95;  // of the two-sided interval
  std::chrono::nanoseconds sample_interval = std::chrono::milliseconds(100);
  // Measured time before any stop. 2 s of 100 ms samples is 20 samples: the fewest for
  // EarlyStop::kMinBatches batches, so a t-interval is stable and the lag-1 test has some power
  // (Schmeiser 1982 recommends 10–30 batches), and 1 s ramp + 2 s still leaves room within the
  // 5 s a pod should wait for a verdict.
  std::chrono::nanoseconds min_window = std::chrono::seconds(2);
  // A policy floor. Far from it the verdict cannot flip, so the run may stop before it settles.
  std::optional<double> threshold_iops;
  // "Clearly far": the whole interval is at least this fraction beyond the threshold. The
  // interval covers the noise of this window only, not drift beyond it (burst credits, caches
  // of a longer run), which a settled run keeps within ~5% of a 30 s fio run; the threshold rule
  // stops with a wider interval, so it keeps twice that distance from the threshold.
  double threshold_margin = 0.10;
};

// Checks ranges; errors name the field as a flag would ("--tolerance").
Status validate_early_stop(const EarlyStopConfig& config);

struct ConfidenceInterval {
  double mean = 0;                 // of the samples used (per second)
  double half_width = 0;           // of the interval, same unit
  double relative_half_width = 0;  // half_width / mean; 0 when the mean is 0
  int samples = 0;                 // all samples seen
  int batches = 0;                 // batch means the interval is built on (0: fewer than 2 samples)
  int batch_size = 0;              // samples per batch; the oldest n mod batch_size are left out
  double batch_lag1 = 0;           // von Neumann estimate of the batch means' lag-1 autocorrelation
  bool trusted = false;            // >= kMinBatches batches and no lag-1 correlation detected
  double confidence = 0.95;
};

struct StopDecision {
  bool stop = false;
  StopReason reason = StopReason::kNone;  // kSettled, kAboveThreshold, kBelowThreshold; kNone while running
  ConfidenceInterval ci;
};

class EarlyStop {
 public:
  // Batch counts: at most kMaxBatches (adjacent batches merge as samples grow), and at least
  // kMinBatches for an interval to be trusted. 20 rather than the textbook 10: the lag-1 test's
  // spread under independence is 0.21 at 20 batch means against 0.28 at 10, and in simulation
  // (AR(1), φ 0.5–0.9) 10 batches let 2–4× more correlated runs stop with a too-narrow interval;
  // the t quantile with 19 df is within 7% of the normal's.
  static constexpr int kMaxBatches = 40;
  static constexpr int kMinBatches = 20;

  // The threshold rule looks at half-second batches (5 samples of 100 ms), at least 4 of them.
  static constexpr int kThresholdBatchSamples = 5;
  static constexpr int kThresholdMinBatches = 4;

  explicit EarlyStop(EarlyStopConfig config) : config_(std::move(config)) {}

  void add_sample(double value_per_s) { samples_.push_back(value_per_s); }
  // The interval over all samples so far.
  ConfidenceInterval interval() const;
  // Whether to stop now. Never before min_window's worth of samples, never when the config is
  // disabled; "settled" never on an untrusted interval.
  StopDecision decide() const;

  const EarlyStopConfig& config() const { return config_; }
  const std::vector<double>& samples() const { return samples_; }

 private:
  EarlyStopConfig config_;
  std::vector<double> samples_;
};

// The smallest and largest mean of consecutive batches of `batch_samples` samples (the oldest
// leftover samples dropped): the window's mean lies between them.
struct BatchRange {
  double min = 0, max = 0;
  int batches = 0;
};
BatchRange batch_range(const std::vector<double>& samples, int batch_samples);

// The interval of `samples` by batch means (what EarlyStop::interval uses).
ConfidenceInterval batch_means_interval(const std::vector<double>& samples, double confidence);

// Quantile of Student's t distribution with `df` degrees of freedom (df >= 1, 0 < p < 1),
// inverted from the exact closed-form CDF for integer df (Abramowitz & Stegun 26.7.3–4).
double student_t_quantile(double p, int df);

}  // namespace iogate
