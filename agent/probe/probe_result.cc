#include "probe/probe_result.h"

#include <algorithm>

namespace iogate {

void merge_job_result(JobResult& into, const JobResult& from) {
  into.runtime_ns = std::max(into.runtime_ns, from.runtime_ns);
  for (auto [dst, src] : {std::pair{&into.read, &from.read}, std::pair{&into.write, &from.write}}) {
    dst->total_ios += src->total_ios;
    dst->io_bytes += src->io_bytes;
    dst->clat.merge(src->clat);
  }
  if (into.iops_per_second.size() < from.iops_per_second.size())
    into.iops_per_second.resize(from.iops_per_second.size());
  for (size_t s = 0; s < from.iops_per_second.size(); ++s) into.iops_per_second[s] += from.iops_per_second[s];
  into.submit_calls += from.submit_calls;
  into.reap_calls += from.reap_calls;
  into.refill_wait_ns += from.refill_wait_ns;
  into.submit_ns += from.submit_ns;
}

double mean_in_flight(const JobResult& j) {
  double latency_ns =
      j.read.clat.mean() * double(j.read.clat.count()) + j.write.clat.mean() * double(j.write.clat.count());
  return j.runtime_ns ? latency_ns / double(j.runtime_ns) : 0.0;
}

double mean_awaiting_refill(const JobResult& j) {
  return j.runtime_ns ? double(j.refill_wait_ns) / double(j.runtime_ns) : 0.0;
}

JobResult ProbeResult::aggregate() const {
  JobResult all;
  all.job_id = -1;
  for (const JobResult& j : jobs) merge_job_result(all, j);
  return all;
}

uint64_t ProbeResult::total_ios() const {
  uint64_t n = 0;
  for (const JobResult& j : jobs) n += j.read.total_ios + j.write.total_ios;
  return n;
}

double submit_share_of_latency(const JobResult& j) {
  uint64_t n = j.read.clat.count() + j.write.clat.count();
  if (j.submit_calls == 0 || n == 0) return 0;
  double clat =
      (j.read.clat.mean() * double(j.read.clat.count()) + j.write.clat.mean() * double(j.write.clat.count())) /
      double(n);
  return clat > 0 ? double(j.submit_ns) / double(j.submit_calls) / clat : 0;
}

}  // namespace iogate
