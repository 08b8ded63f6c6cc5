// Rng: a small seeded random generator whose output is the same on every platform.
//
// std::uniform_*_distribution differ between standard libraries, so replays that must be
// identical everywhere use this instead (SplitMix64 seeding a xoshiro256** state). Not
// thread-safe; give each thread or each simulation its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace airtime {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t Next();
  // Uniform in [0, n); n > 0. Unbiased (rejection).
  uint64_t Below(uint64_t n);
  // Uniform in [0, 1).
  double Uniform();

  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(i)]);
  }

 private:
  uint64_t s_[4];
};

}  // namespace airtime
