// Node feature expressions as written in `sbatch --constraint`: feature names combined with
// `&` (AND), `|` (OR) and parentheses; `&` binds tighter than `|`. Square brackets group
// like parentheses. Immutable after parsing; thread-safe to share.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::model {

class FeatureExpr {
 public:
  // The empty expression matches every node.
  FeatureExpr() = default;
  // Errors say what was wrong and where in the text ("--constraint" is the caller's name).
  static StatusOr<FeatureExpr> Parse(std::string_view text);

  bool empty() const { return terms_.empty(); }
  // True when a node with these features satisfies the expression.
  bool Matches(std::span<const std::string> features) const;

 private:
  // Disjunctive normal form: OR over terms, each an AND over feature names.
  std::vector<std::vector<std::string>> terms_;
  friend class FeatureParser;
};

}  // namespace loom::model
