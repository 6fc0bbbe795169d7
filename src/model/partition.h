// A partition: a named set of nodes with limits and priority settings. Pure value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::model {

enum class PartitionState : uint8_t { kUp, kDown, kDrain, kInactive };

struct Partition {
  std::string name;
  std::vector<int32_t> nodes;        // indices into the cluster's node table
  bool is_default = false;
  int64_t max_time_s = INT64_MAX;    // core::kUnlimitedSeconds when unlimited
  int64_t default_time_s = -1;       // -1: not set (MaxTime applies)
  int32_t min_nodes = 1;
  int32_t max_nodes = INT32_MAX;
  uint16_t priority_tier = 1;
  uint16_t priority_job_factor = 1;
  PartitionState state = PartitionState::kUp;
  bool exclusive = false;            // OverSubscribe=EXCLUSIVE
};

}  // namespace loom::model
