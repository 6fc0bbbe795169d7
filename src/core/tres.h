// Trackable RESources (TRES) as Slurm names, prints and parses them: "cpu=8,mem=8000M,node=1,
// billing=8,gres/gpu=2", and the TRESBillingWeights that turn them into a billing figure.
// Value types and pure functions; thread-compatible.
//
// Names: the built-in types cpu, mem, energy, node, billing, vmem, pages (no name), and the
// named ones fs/NAME (fs/disk), gres/NAME and gres/NAME:TYPE (gres/gpu, gres/gpu:a100),
// license/NAME, bb/NAME and ic/NAME. Types are case-insensitive ("CPU", "GRES/gpu") and stored
// in lower case; what follows the '/' is kept as written.
//
// Units: mem and bb/* count megabytes and print with the largest exact unit ("mem=500G",
// "mem=12048M"); fs/* and ic/* count bytes and print likewise ("fs/disk=10G"); everything else
// is a plain count.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace loom::core {

inline constexpr std::string_view kTresCpu = "cpu";
inline constexpr std::string_view kTresMem = "mem";
inline constexpr std::string_view kTresEnergy = "energy";
inline constexpr std::string_view kTresNode = "node";
inline constexpr std::string_view kTresBilling = "billing";
inline constexpr std::string_view kTresGpu = "gres/gpu";

// Returns the canonical spelling of a TRES name ("GRES/gpu" -> "gres/gpu", "Mem" -> "mem"), or
// an error that lists the valid forms.
StatusOr<std::string> CanonicalTresName(std::string_view name);

// A set of TRES counts: a small map from canonical name to count, kept in Slurm's print order
// (cpu, mem, energy, node, billing, fs/disk, vmem, pages, then gres/*, license/*, bb/*, fs/*,
// ic/*, each group by name). Counts of zero are not stored. Copying copies a short vector.
class TresVector {
 public:
  using Entry = std::pair<std::string, int64_t>;

  TresVector() = default;

  // The count for a canonical name; 0 when absent.
  int64_t Get(std::string_view name) const;
  // Sets the count for a canonical name (CHECK-free: the caller passes names from
  // CanonicalTresName or the kTres* constants); 0 removes it.
  void Set(std::string_view name, int64_t count);
  // Adds `delta` (which may be negative) to the count for a canonical name.
  void Add(std::string_view name, int64_t delta);

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  const std::vector<Entry>& entries() const { return entries_; }

  TresVector& operator+=(const TresVector& other);
  TresVector& operator-=(const TresVector& other);
  // Every count multiplied by `factor` (e.g. a per-node request times the node count).
  TresVector operator*(int64_t factor) const;
  friend TresVector operator+(TresVector a, const TresVector& b) { return a += b; }
  friend TresVector operator-(TresVector a, const TresVector& b) { return a -= b; }
  bool operator==(const TresVector& other) const = default;

  // True when no count exceeds the same count in `capacity` (absent counts are 0).
  bool FitsIn(const TresVector& capacity) const;
  // The names whose count exceeds `capacity`'s, in print order (empty when FitsIn).
  std::vector<std::string> Exceeding(const TresVector& capacity) const;
  // True when no count is negative.
  bool IsNonNegative() const;

  // Slurm's form, as FormatTres.
  std::string ToString() const;

 private:
  std::vector<Entry> entries_;
};

// Parses "cpu=4,mem=16G,gres/gpu:a100=2". Counts are non-negative integers; those of mem and
// bb/* (megabytes) and of fs/* and ic/* (bytes) may carry a K, M, G, T or P suffix (powers of
// 1024). Each name may appear once. An empty string is an empty vector.
StatusOr<TresVector> ParseTres(std::string_view text);

// One TRES cap: a canonical name ("cpu", "mem", "node", "billing", "gres/gpu",
// "gres/gpu:a100") and its maximum (0 allowed: none of it).
struct TresCap {
  std::string name;
  int64_t max = 0;
  friend bool operator==(const TresCap&, const TresCap&) = default;
};

// Parses sacctmgr's form, "cpu=16,gres/gpu=4,mem=64G"; a cap of -1 means none (and is
// dropped). InvalidArgument naming the item otherwise.
StatusOr<std::vector<TresCap>> ParseTresCaps(std::string_view text);

// Slurm's printed form: "cpu=8,mem=8000M,node=1,billing=8,gres/gpu=2"; "" when empty.
std::string FormatTres(const TresVector& tres);

// A partition's TRESBillingWeights: "CPU=1.0,Mem=0.25G,GRES/gpu=2.0,gres/gpu:a100=64.0".
// Names are case-insensitive. A weight applies to one unit of the TRES (one megabyte of
// memory); a K, M, G, T or P suffix makes it apply per that unit instead ("Mem=0.25G" is 0.25 per
// gigabyte). Negative weights are allowed, as in Slurm.
class TresBillingWeights {
 public:
  TresBillingWeights() = default;

  // Accepts the value with or without surrounding double quotes; "" means no weights.
  static StatusOr<TresBillingWeights> Parse(std::string_view text);

  bool empty() const { return weights_.empty(); }
  // Each TRES weighted, by lower-cased canonical name.
  const std::vector<std::pair<std::string, double>>& entries() const { return weights_; }
  // Weight per base unit (per megabyte for memory) for a canonical TRES name; 0 if unset.
  double WeightFor(std::string_view name) const;

  // Slurm's billable TRES for an allocation. Without weights: the CPU count. Otherwise the sum
  // of count x weight over every TRES but billing itself; with PriorityFlags=MAX_TRES
  // (`max_tres`), the largest such product among the per-node TRES (cpu, mem, node, gres/*) plus
  // the sum over the others (licenses, ...).
  double Billing(const TresVector& tres, bool max_tres = false) const;

  // The whole number Slurm stores as a job's billing TRES (billing=N): Billing() truncated.
  int64_t BillingCount(const TresVector& tres, bool max_tres = false) const;

 private:
  // Lower-cased canonical names, sorted; weights already scaled to the base unit.
  std::vector<std::pair<std::string, double>> weights_;
};

}  // namespace loom::core
