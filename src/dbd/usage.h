// What sreport reads: loomdbd's hourly rollups of each cluster's job records (TRES-seconds
// the cluster had and jobs were allocated, per association), and job sizes by account.
// Pure functions over records; the service (service.cc) stores and reads them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "loom/v1/loom.pb.h"

namespace loom::dbd {

inline constexpr int64_t kHour = 3600;
inline int64_t FloorHour(int64_t t) { return t - ((t % kHour) + kHour) % kHour; }

// "cpu=8,mem=8000M,node=1,gres/gpu=2" as counts by TRES name (memory in MB).
std::map<std::string, double> ParseTres(const std::string& tres);

// The store name of `cluster`'s rollup of the hour starting at `hour`: ordered by time.
std::string UsageName(const std::string& cluster, int64_t hour);

// The rollups of the hours [from, to) of a cluster with `capacity` (TRES counts) from the
// jobs in `jobs` (any that may overlap those hours; a job still running counts up to
// `now`) and its nodes' events (down or drained nodes count as down for what they have;
// an event still open up to `now`). What jobs used of a drained node is allocated, not
// down: an hour's down time is at most what jobs left of the capacity.
std::vector<v1::AcctUsageHour> RollUp(const std::vector<v1::AcctJob>& jobs,
                                      const std::vector<v1::AcctEvent>& events,
                                      const std::map<std::string, double>& capacity, int64_t from,
                                      int64_t to, int64_t now);

// The store name of a node event: cluster/node/zero-padded start, ordered by cluster.
std::string EventName(const std::string& cluster, const std::string& node, int64_t start);

// CPU-seconds of the jobs in `jobs` within [from, to), by cluster and account and by the
// size bin of their CPU count: bin 0 holds fewer than grouping[0] CPUs, bin i from
// grouping[i-1], the last grouping.back() and more.
std::vector<v1::AcctSizes> JobSizes(const std::vector<v1::AcctJob>& jobs,
                                    const std::vector<int32_t>& grouping, int64_t from, int64_t to,
                                    int64_t now);

}  // namespace loom::dbd
