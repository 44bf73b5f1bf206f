// A small, fast PRNG for offsets and fill data: wyrand (Wang Yi), one multiply per draw,
// passes BigCrush/PractRand. Not for secrets.
#pragma once

#include <cstdint>

namespace iogate {

class FastRng {
 public:
  explicit FastRng(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    state_ += 0xa0761d6478bd642fULL;
    __uint128_t m = static_cast<__uint128_t>(state_) * (state_ ^ 0xe7037ed1a0b428dbULL);
    return static_cast<uint64_t>(m >> 64) ^ static_cast<uint64_t>(m);
  }

  // Uniform in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-64 * n, negligible here).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<__uint128_t>(next()) * n) >> 64); }

  // Uniform in [0, 100).
  unsigned percent() { return static_cast<unsigned>(below(100)); }

 private:
  uint64_t state_;
};

// Derives independent per-job seeds from the run's seed.
inline uint64_t mix_seed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace iogate
