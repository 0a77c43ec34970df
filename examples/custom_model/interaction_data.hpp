// The example's data as a Troupe data source: samples computed from their
// index when a replica asks for them, so no file is read or held in memory.
#pragma once

#include <cstdint>
#include <string>

#include <troupe/data_source.hpp>

/// Serves `rows` samples of 8 features in [-1, 1), each a function of
/// (seed, index) alone, labelled 1 where x0 * x1 > 0: an interaction a
/// linear model cannot learn; six features are noise.
class interaction_data : public troupe::data_source {
public:
  interaction_data(uint32_t rows, uint64_t seed) : rows_(rows), seed_(seed) {}

  size_t size() const override { return rows_; }
  int features() const override { return 8; }
  int classes() const override { return 2; }
  void gather(const uint32_t* indices, size_t count, float* features_out, int32_t* labels_out,
              float* targets_out) const override;
  std::string name() const override;

  /// Writes the samples to a CSV file (x0..x7,label), each float exact.
  bool write_csv(const std::string& path) const;

private:
  uint32_t rows_;
  uint64_t seed_;
};

/// Registers the source as "interaction", with settings "rows=N,seed=S".
void register_interaction_data();
