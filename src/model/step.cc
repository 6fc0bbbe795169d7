#include "model/step.h"

#include <string.h>
#include <sys/wait.h>

#include <algorithm>
#include <climits>

namespace loom::model {

std::vector<int32_t> TaskCounts(const TaskRequest& request,
                                const std::vector<int32_t>& cpus_per_node) {
  const size_t n = cpus_per_node.size();
  if (request.ntasks_per_node) return std::vector<int32_t>(n, *request.ntasks_per_node);
  if (!request.ntasks || n == 0) return std::vector<int32_t>(n, 1);

  std::vector<int32_t> tasks(n, 0);
  const int32_t per_task = std::max(1, request.cpus_per_task.value_or(1));
  auto capacity = [&](size_t i) {
    return cpus_per_node[i] > 0 ? std::max(1, cpus_per_node[i] / per_task) : INT32_MAX;
  };
  int32_t left = std::max(0, *request.ntasks);
  bool placed = true;
  while (left > 0 && placed) {
    placed = false;
    for (size_t i = 0; i < n && left > 0; ++i) {
      if (tasks[i] < capacity(i)) {
        ++tasks[i];
        --left;
        placed = true;
      }
    }
  }
  for (size_t i = 0; left > 0; i = (i + 1) % n, --left) ++tasks[i];  // overcommitted
  return tasks;
}

int32_t FirstTask(const std::vector<int32_t>& counts, size_t node) {
  int32_t first = 0;
  for (size_t i = 0; i < node && i < counts.size(); ++i) first += counts[i];
  return first;
}

int32_t TaskTotal(const std::vector<int32_t>& counts) { return FirstTask(counts, counts.size()); }

std::optional<Distribution> ParseDistribution(std::string_view text) {
  const std::string_view node_level = text.substr(0, text.find(':'));
  if (node_level == "block") return Distribution::kBlock;
  if (node_level == "cyclic") return Distribution::kCyclic;
  return std::nullopt;
}

const char* DistributionName(Distribution d) {
  return d == Distribution::kCyclic ? "cyclic" : "block";
}

std::vector<std::vector<int32_t>> TaskIds(const std::vector<int32_t>& counts, Distribution d) {
  std::vector<std::vector<int32_t>> ids(counts.size());
  const int32_t total = TaskTotal(counts);
  if (d == Distribution::kBlock) {
    int32_t next = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      for (int32_t k = 0; k < counts[i]; ++k) ids[i].push_back(next++);
    }
    return ids;
  }
  for (int32_t next = 0; next < total;) {
    for (size_t i = 0; i < counts.size() && next < total; ++i) {
      if (static_cast<int32_t>(ids[i].size()) < counts[i]) ids[i].push_back(next++);
    }
  }
  return ids;
}

void StepStatus::Add(int32_t wait_status) {
  if (WIFEXITED(wait_status)) {
    if (!status_ || !WIFEXITED(*status_) || WEXITSTATUS(wait_status) > WEXITSTATUS(*status_)) {
      status_ = wait_status;
    }
  } else if (WIFSIGNALED(wait_status) && !status_) {
    status_ = wait_status;
  }
}

int StepStatus::ExitCode() const {
  if (!status_) return 0;
  if (WIFEXITED(*status_)) return WEXITSTATUS(*status_);
  if (WIFSIGNALED(*status_)) return 128 + WTERMSIG(*status_);
  return 1;
}

std::string DescribeTaskEnd(int32_t wait_status) {
  if (WIFEXITED(wait_status)) {
    const int code = WEXITSTATUS(wait_status);
    return code == 0 ? "" : "Exited with exit code " + std::to_string(code);
  }
  if (WIFSIGNALED(wait_status)) {
    const char* name = sigdescr_np(WTERMSIG(wait_status));
    std::string text = name ? name : "Signal " + std::to_string(WTERMSIG(wait_status));
    if (WCOREDUMP(wait_status)) text += " (core dumped)";
    return text;
  }
  return "Unknown status " + std::to_string(wait_status);
}

std::string CompressCounts(const std::vector<int32_t>& counts) {
  std::string out;
  for (size_t i = 0; i < counts.size();) {
    size_t j = i;
    while (j + 1 < counts.size() && counts[j + 1] == counts[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(counts[i]);
    if (j > i) {
      out += "(x";
      out += std::to_string(j - i + 1);
      out += ')';
    }
    i = j + 1;
  }
  return out;
}

}  // namespace loom::model
