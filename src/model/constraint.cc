#include "model/constraint.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"

namespace loom::model {

// Recursive-descent parser producing disjunctive normal form.
//   expr := term ('|' term)*      term := factor ('&' factor)*
//   factor := NAME | '(' expr ')' | '[' expr ']'
class FeatureParser {
 public:
  using Dnf = std::vector<std::vector<std::string>>;
  explicit FeatureParser(std::string_view text) : text_(text) {}

  StatusOr<Dnf> Run() {
    ASSIGN_OR_RETURN(Dnf d, Expr());
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected character");
    return d;
  }

 private:
  Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(core::StrCat(
        "invalid constraint '", text_, "': ", what, " at position ", pos_ + 1,
        " (expected feature names joined by & and |, with parentheses)"));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  StatusOr<Dnf> Expr() {
    ASSIGN_OR_RETURN(Dnf left, Term());
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '|') return left;
      ++pos_;
      ASSIGN_OR_RETURN(Dnf right, Term());
      left.insert(left.end(), right.begin(), right.end());
    }
  }
  StatusOr<Dnf> Term() {
    ASSIGN_OR_RETURN(Dnf left, Factor());
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '&') return left;
      ++pos_;
      ASSIGN_OR_RETURN(Dnf right, Factor());
      Dnf product;
      for (const auto& a : left) {
        for (const auto& b : right) {
          std::vector<std::string> t = a;
          t.insert(t.end(), b.begin(), b.end());
          product.push_back(std::move(t));
        }
      }
      if (product.size() > 4096) return Error("expression too large");
      left = std::move(product);
    }
  }
  StatusOr<Dnf> Factor() {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("missing feature name");
    char c = text_[pos_];
    if (c == '(' || c == '[') {
      char close = c == '(' ? ')' : ']';
      ++pos_;
      if (++depth_ > 64) return Error("nesting too deep");
      ASSIGN_OR_RETURN(Dnf inner, Expr());
      --depth_;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != close) return Error("unbalanced bracket");
      ++pos_;
      return inner;
    }
    size_t start = pos_;
    while (pos_ < text_.size()) {
      char ch = text_[pos_];
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.' ||
          ch == ':' || ch == '+' || ch == '=') {
        ++pos_;
      } else {
        break;
      }
    }
    if (pos_ < text_.size() && text_[pos_] == '*') {
      return Error("feature counts (name*N) are not supported yet");
    }
    if (start == pos_) return Error("missing feature name");
    return Dnf{{std::string(text_.substr(start, pos_ - start))}};
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

StatusOr<FeatureExpr> FeatureExpr::Parse(std::string_view text) {
  FeatureExpr e;
  if (core::Trim(text).empty()) return e;
  ASSIGN_OR_RETURN(e.terms_, FeatureParser(text).Run());
  return e;
}

bool FeatureExpr::Matches(std::span<const std::string> features) const {
  if (terms_.empty()) return true;
  for (const auto& term : terms_) {
    bool all = std::all_of(term.begin(), term.end(), [&](const std::string& f) {
      return std::find(features.begin(), features.end(), f) != features.end();
    });
    if (all) return true;
  }
  return false;
}

}  // namespace loom::model
