#include "core/hostlist.h"

#include <algorithm>
#include <list>
#include <utility>

#include "core/strings.h"

namespace loom::core {
namespace {

// Where Slurm's tokenizer splits an expression (outside brackets). Not at newlines: a name
// may contain one.
bool IsSeparator(char c) { return c == ',' || c == ' ' || c == '\t'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// isspace() in the C locale.
bool IsCSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int DigitCount(uint64_t v) {
  int n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// Appends `v` in decimal, zero-padded to `width` digits, as printf("%0*lu") does.
void AppendPadded(std::string* out, uint64_t v, int width) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  if (width > n) out->append(static_cast<size_t>(width - n), '0');
  while (n > 0) out->push_back(digits[--n]);
}

int ZeroPadding(uint64_t v, int width) {
  int digits = DigitCount(v);
  return width > digits ? width - digits : 0;
}

// Slurm's test of whether numbers `n` (padded to *wn) and `m` (padded to *wm) may share one
// padding: they may when the widths are equal, or when one of the two numbers prints the same at
// either width. On success the width that matters less is overwritten with the other, which never
// changes how any number at or above `n` resp. `m` prints.
bool CombineWidths(uint64_t n, int* wn, uint64_t m, int* wm) {
  if (*wn == *wm) return true;
  bool n_changes = ZeroPadding(n, *wn) != ZeroPadding(n, *wm);
  bool m_changes = ZeroPadding(m, *wm) != ZeroPadding(m, *wn);
  if (n_changes && m_changes) return false;
  if (n_changes) {
    *wm = *wn;
  } else {
    *wn = *wm;
  }
  return true;
}

// strtoul(s, &end, 10) on a string that ends at s.size(): leading C whitespace, an optional sign
// ('-' negates modulo 2^64), then digits. `consumed` is 0 when there are no digits.
struct ParsedNumber {
  uint64_t value = 0;
  size_t consumed = 0;
  bool overflow = false;
};
ParsedNumber StrToUl(std::string_view s) {
  ParsedNumber r;
  size_t i = 0;
  while (i < s.size() && IsCSpace(s[i])) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  size_t first_digit = i;
  for (; i < s.size() && IsDigit(s[i]); ++i) {
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (r.value > (UINT64_MAX - d) / 10) {
      r.overflow = true;
    } else {
      r.value = r.value * 10 + d;
    }
  }
  if (i == first_digit) return ParsedNumber{};
  if (negative) r.value = 0 - r.value;
  r.consumed = i;
  return r;
}

char CharAt(std::string_view s, size_t i) { return i < s.size() ? s[i] : '\0'; }

// Two digit runs compared by magnitude: the longer run wins, else the first differing digit.
int CompareRightAligned(std::string_view a, size_t ai, std::string_view b, size_t bi) {
  int bias = 0;
  for (;; ++ai, ++bi) {
    char x = CharAt(a, ai), y = CharAt(b, bi);
    bool dx = IsDigit(x), dy = IsDigit(y);
    if (!dx && !dy) return bias;
    if (!dx) return -1;
    if (!dy) return 1;
    if (bias == 0 && x != y) bias = x < y ? -1 : 1;
  }
}

// Two digit runs compared as fractions: the first differing digit wins, a shorter run is less.
int CompareLeftAligned(std::string_view a, size_t ai, std::string_view b, size_t bi) {
  for (;; ++ai, ++bi) {
    char x = CharAt(a, ai), y = CharAt(b, bi);
    bool dx = IsDigit(x), dy = IsDigit(y);
    if (!dx && !dy) return 0;
    if (!dx) return -1;
    if (!dy) return 1;
    if (x != y) return x < y ? -1 : 1;
  }
}

std::string Abbreviate(std::string_view s) {
  constexpr size_t kMax = 200;
  if (s.size() <= kMax) return std::string(s);
  return StrCat(s.substr(0, kMax), "...");
}

}  // namespace

int NaturalCompare(std::string_view a, std::string_view b) {
  size_t ai = 0, bi = 0;
  while (true) {
    char ca = CharAt(a, ai), cb = CharAt(b, bi);
    while (IsCSpace(ca)) ca = CharAt(a, ++ai);
    while (IsCSpace(cb)) cb = CharAt(b, ++bi);
    if (IsDigit(ca) && IsDigit(cb)) {
      int r = (ca == '0' || cb == '0') ? CompareLeftAligned(a, ai, b, bi)
                                       : CompareRightAligned(a, ai, b, bi);
      if (r != 0) return r;
    }
    if (ca == '\0' && cb == '\0') return 0;
    // Slurm compares plain (signed) chars.
    auto sa = static_cast<signed char>(ca), sb = static_cast<signed char>(cb);
    if (sa != sb) return sa < sb ? -1 : 1;
    ++ai;
    ++bi;
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing, step for step as Slurm's hostlist_create.

class SlurmHostlistParser {
 public:
  SlurmHostlistParser(int64_t max_hosts, SlurmHostlistParse* out)
      : max_hosts_(max_hosts), out_(out) {}

  void Run(std::string_view expr) {
    // Slurm sees a C string.
    expr = expr.substr(0, expr.find('\0'));
    size_t pos = 0;
    std::string_view token;
    while (NextToken(expr, &pos, &token)) {
      if (!ParseToken(token)) {
        if (out_->reason.empty()) out_->reason = "invalid hostlist";
        return;
      }
    }
    out_->hostlist = std::move(list_);
  }

 private:
  struct Spec {
    uint64_t lo = 0;
    uint64_t hi = 0;
    int width = 0;
  };

  // Slurm's tokenizer: a token ends at a separator unless that separator sits between a '[' and
  // the first ']' after it, searching from the token start (or from just past the last bracket
  // pair that closed before the separator).
  static bool NextToken(std::string_view s, size_t* pos, std::string_view* token) {
    size_t p = *pos;
    while (p < s.size() && IsSeparator(s[p])) ++p;
    if (p >= s.size()) {
      *pos = p;
      return false;
    }
    const size_t start = p;
    size_t parse = p;
    size_t end = p;
    while (true) {
      while (end < s.size() && !IsSeparator(s[end])) ++end;
      bool moved = false;
      while (true) {
        // Only up to the token's end: searching the rest of a long list for each token made
        // a list of N plain names cost N^2.
        size_t open = s.substr(0, std::min(end + 1, s.size())).find('[', parse);
        if (open == std::string_view::npos || open > end) break;
        size_t close = s.find(']', parse);
        if (close == std::string_view::npos || close < open) break;
        if (close < end) {
          parse = close + 1;
          continue;
        }
        end = close;
        moved = true;
        break;
      }
      if (!moved) break;
    }
    *token = s.substr(start, end - start);
    while (end < s.size() && IsSeparator(s[end])) ++end;
    *pos = end;
    return true;
  }

  bool ParseToken(std::string_view token) {
    size_t open = token.rfind('[');
    if (open == std::string_view::npos) return PushName(token);
    std::string_view prefix = token.substr(0, open);
    std::string_view rest = token.substr(open + 1);
    size_t close = rest.find(']');
    if (close == std::string_view::npos) {
      // An unclosed bracket: Slurm closes it, or drops it when nothing precedes it.
      return prefix.empty() ? PushName(rest) : PushName(StrCat(prefix, "]"));
    }
    if (close + 1 < rest.size() && rest[close + 1] != ',') {
      SetReason(
          StrCat("`", Abbreviate(token), "': a name may not continue after its last bracket"));
      return false;
    }
    std::vector<Spec> specs;
    if (!ParseRangeList(rest.substr(0, close), &specs)) return false;
    return PushRangeList(prefix, specs, /*depth=*/0);
  }

  // Pushes `prefix` followed by each range. If the prefix holds a bracket of its own, it is
  // expanded first (right to left): a failure in the bracket just before the ranges fails the
  // whole expression; a failure further left only drops those hosts, as in Slurm.
  bool PushRangeList(std::string_view prefix, const std::vector<Spec>& specs, int depth) {
    size_t open = prefix.rfind('[');
    size_t close = open == std::string_view::npos ? open : prefix.rfind(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      for (const Spec& s : specs) {
        if (!Push(prefix, s)) return false;
      }
      return true;
    }
    constexpr int kMaxDepth = 64;
    if (depth >= kMaxDepth) {
      out_->over_limit = true;
      SetReason(StrCat("more than ", kMaxDepth, " brackets in one name"));
      return false;
    }
    std::string_view head = prefix.substr(0, open);
    std::string_view inner = prefix.substr(open + 1, close - open - 1);
    std::string_view tail = prefix.substr(close + 1);
    const bool recurse = head.find('[') != std::string_view::npos;
    std::vector<Spec> values;
    if (!ParseRangeList(inner, &values)) return false;
    uint64_t total = 0;
    std::string name;
    for (const Spec& v : values) {
      total += v.hi - v.lo + 1;
      if (total > static_cast<uint64_t>(kMaxPrefixValues)) {
        SetReason(StrCat("more than ", kMaxPrefixValues, " values in the bracket `[",
                         Abbreviate(inner), "]'"));
        return false;
      }
      for (uint64_t j = v.lo;; ++j) {
        name.assign(head);
        AppendPadded(&name, j, v.width);
        name.append(tail);
        if (recurse) {
          if (!PushRangeList(name, specs, depth + 1)) {
            if (out_->fatal || out_->over_limit) return false;
            out_->lossy = true;
            if (++dropped_parts_ > max_hosts_) return OverLimit();
          }
        } else {
          for (const Spec& s : specs) {
            if (!Push(name, s)) return false;
          }
        }
        if (j == v.hi) break;
      }
    }
    return true;
  }

  bool Push(std::string_view prefix, const Spec& s) {
    // s.hi - s.lo < kMaxHostsPerRange, so this cannot overflow.
    if (list_.size() + static_cast<int64_t>(s.hi - s.lo) >= max_hosts_) return OverLimit();
    Hostlist::Range r;
    r.prefix.assign(prefix);
    r.lo = s.lo;
    r.hi = s.hi;
    r.width = s.width;
    list_.PushRange(std::move(r));
    return true;
  }

  bool PushName(std::string_view name) {
    if (list_.size() >= max_hosts_) return OverLimit();
    list_.PushHost(name);
    return true;
  }

  bool OverLimit() {
    out_->over_limit = true;
    SetReason(StrCat("names more than ", max_hosts_, " hosts"));
    return false;
  }

  // Comma-separated ranges, as Slurm's _parse_range_list.
  bool ParseRangeList(std::string_view s, std::vector<Spec>* out) {
    out->clear();
    size_t start = 0;
    while (true) {
      if (out->size() == static_cast<size_t>(kMaxRangesPerBracket)) {
        out_->fatal = true;
        out_->slurm_errors.push_back(
            "_parse_range_list: Too many ranges, can't process entire list");
        SetReason(StrCat("more than ", kMaxRangesPerBracket, " ranges in one bracket"));
        return false;
      }
      size_t comma = s.find(',', start);
      std::string_view piece =
          s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      Spec spec;
      if (!ParseSingleRange(piece, &spec)) return false;
      out->push_back(spec);
      if (comma == std::string_view::npos) return true;
      start = comma + 1;
    }
  }

  // One "lo" or "lo-hi", as Slurm's _parse_single_range (strtoul and all).
  bool ParseSingleRange(std::string_view s, Spec* out) {
    if (s.find('x') != std::string_view::npos) return InvalidRange(s);
    size_t dash = s.find('-');
    std::string_view lo_text = s.substr(0, dash);
    std::string_view hi_text;
    if (dash != std::string_view::npos) {
      hi_text = s.substr(dash + 1);
      if (!hi_text.empty() && hi_text[0] == '-') return InvalidRange(s);
    }
    out->width = static_cast<int>(std::min<size_t>(lo_text.size(), 1 << 20));
    ParsedNumber lo = StrToUl(lo_text);
    if (lo.consumed == 0) return InvalidRange(s);
    ParsedNumber hi = lo;
    if (!hi_text.empty()) {
      hi = StrToUl(hi_text);
      if (hi.consumed != hi_text.size()) return InvalidRange(s);
    } else if (lo.consumed != lo_text.size()) {
      return InvalidRange(s);
    }
    // Slurm clamps numbers that overflow to ULONG_MAX and so renames hosts; we refuse them.
    if (lo.overflow || hi.overflow) return InvalidRange(s);
    if (lo.value > hi.value) return InvalidRange(s);
    if (hi.value - lo.value >= static_cast<uint64_t>(kMaxHostsPerRange)) {
      out_->slurm_errors.push_back(
          StrCat("_parse_single_range: Too many hosts in range `", s, "'"));
      SetReason(StrCat("too many hosts in range `", Abbreviate(s), "' (at most ", kMaxHostsPerRange,
                       ")"));
      return false;
    }
    out->lo = lo.value;
    out->hi = hi.value;
    return true;
  }

  bool InvalidRange(std::string_view s) {
    out_->slurm_errors.push_back(StrCat("_parse_single_range: Invalid range: `", s, "'"));
    SetReason(StrCat("invalid range `", Abbreviate(s), "'"));
    return false;
  }

  void SetReason(std::string reason) {
    if (out_->reason.empty()) out_->reason = std::move(reason);
  }

  const int64_t max_hosts_;
  SlurmHostlistParse* const out_;
  Hostlist list_;
  int64_t dropped_parts_ = 0;
};

SlurmHostlistParse ParseHostlistLikeSlurm(std::string_view expr, int64_t max_hosts) {
  SlurmHostlistParse result;
  SlurmHostlistParser(max_hosts, &result).Run(expr);
  if (result.fatal || result.over_limit) result.hostlist.reset();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Hostlist

StatusOr<Hostlist> Hostlist::Parse(std::string_view expr, int64_t max_hosts) {
  SlurmHostlistParse r = ParseHostlistLikeSlurm(expr, max_hosts);
  if (!r.hostlist.has_value() || r.lossy) {
    return absl::InvalidArgumentError(
        StrCat("invalid hostlist '", Abbreviate(expr), "': ", r.reason));
  }
  return std::move(*r.hostlist);
}

Hostlist Hostlist::FromHosts(const std::vector<std::string>& hosts) {
  Hostlist list;
  list.ranges_.reserve(hosts.size() / 4 + 1);
  for (const std::string& h : hosts) list.PushHost(h);
  return list;
}

void Hostlist::PushHost(std::string_view host) {
  Range r;
  size_t digits = host.size();
  while (digits > 0 && IsDigit(host[digits - 1])) --digits;
  ParsedNumber n = StrToUl(host.substr(digits));
  if (digits == host.size() || n.overflow) {
    r.prefix.assign(host);
    r.single = true;
  } else {
    r.prefix.assign(host.substr(0, digits));
    r.lo = r.hi = n.value;
    r.width = static_cast<int>(host.size() - digits);
  }
  PushRange(std::move(r));
}

void Hostlist::PushRange(Range r) {
  size_ += static_cast<int64_t>(r.count());
  if (!ranges_.empty() && !r.single) {
    Range& tail = ranges_.back();
    if (!tail.single && tail.hi != UINT64_MAX && tail.hi + 1 == r.lo && tail.prefix == r.prefix &&
        CombineWidths(tail.lo, &tail.width, r.lo, &r.width)) {
      tail.hi = r.hi;
      return;
    }
  }
  ranges_.push_back(std::move(r));
}

std::vector<std::string> Hostlist::Expand() const {
  std::vector<std::string> hosts;
  hosts.reserve(static_cast<size_t>(size_));
  for (const Range& r : ranges_) {
    if (r.single) {
      hosts.push_back(r.prefix);
      continue;
    }
    for (uint64_t v = r.lo;; ++v) {
      std::string& h = hosts.emplace_back();
      h.reserve(r.prefix.size() + static_cast<size_t>(std::max(r.width, 20)));
      h.assign(r.prefix);
      AppendPadded(&h, v, r.width);
      if (v == r.hi) break;
    }
  }
  return hosts;
}

namespace {
template <typename R>
bool SharesBracket(const R& a, const R& b) {
  return !a.single && !b.single && a.prefix == b.prefix;
}
}  // namespace

std::string Hostlist::ToString() const {
  std::string out;
  const size_t n = ranges_.size();
  for (size_t i = 0; i < n;) {
    if (i > 0) out.push_back(',');
    const Range& first = ranges_[i];
    const bool bracket = first.count() > 1 || (i + 1 < n && SharesBracket(first, ranges_[i + 1]));
    out.append(first.prefix);
    if (bracket) out.push_back('[');
    do {
      const Range& r = ranges_[i];
      if (!r.single) {
        AppendPadded(&out, r.lo, r.width);
        if (r.lo < r.hi) {
          out.push_back('-');
          AppendPadded(&out, r.hi, r.width);
        }
      }
      if (bracket) out.push_back(',');
    } while (++i < n && SharesBracket(ranges_[i], ranges_[i - 1]));
    if (bracket) out.back() = ']';
  }
  return out;
}

void Hostlist::Sort() {
  if (ranges_.size() <= 1) return;
  // Slurm's qsort order: prefix (natural order), names without a number first, then the
  // number. Numbers whose paddings cannot be combined order by padded width: this key gives
  // exactly that order, since a range's numbers are at least as wide as its start.
  auto compare = [](const Range& a, const Range& b) {
    int c = NaturalCompare(a.prefix, b.prefix);
    if (c == 0) c = a.prefix.compare(b.prefix);
    if (c != 0) return c < 0;
    if (a.single != b.single) return a.single;
    if (a.single) return false;
    int wa = std::max(a.width, DigitCount(a.lo)), wb = std::max(b.width, DigitCount(b.lo));
    if (wa != wb) return wa < wb;
    return a.lo < b.lo;
  };
  std::stable_sort(ranges_.begin(), ranges_.end(), compare);

  // Split overlapping neighbours so each duplicated number sits twice in a row (Slurm's
  // hostlist_coalesce). Slurm rescans from the end after each split; only the pair after the
  // split can have changed, so resuming there gives the same result in linear time.
  std::list<Range> list(std::make_move_iterator(ranges_.begin()),
                        std::make_move_iterator(ranges_.end()));
  ranges_.clear();
  int64_t budget = 16 * size_ + 1'000'000;  // splits; a guard against pathological inputs
  auto cur = std::prev(list.end());
  while (cur != list.begin() && budget > 0) {
    auto prev = std::prev(cur);
    Range& a = *prev;
    Range& b = *cur;
    // Slurm also splits pairs that have fallen out of order (a.lo > b.lo), which renames and
    // drops hosts ("n[0-30],n[01-05],n[0-37]"); we leave those alone.
    if (a.single || b.single || !(a.hi > b.lo) || a.lo > b.lo || a.prefix != b.prefix ||
        !CombineWidths(a.lo, &a.width, b.lo, &b.width)) {
      cur = prev;
      continue;
    }
    --budget;
    const uint64_t lo = b.lo, hi = std::min(a.hi, b.hi);
    const int width = a.width;
    if (hi < a.hi) b.hi = a.hi;
    a.hi = lo;
    b.lo = hi;
    for (uint64_t v = lo;; ++v) {
      for (int copy = 0; copy < 2; ++copy) {
        if ((copy == 0 && v > a.hi) || (copy == 1 && v < b.lo)) {
          Range single_value;
          single_value.prefix = a.prefix;
          single_value.lo = single_value.hi = v;
          single_value.width = width;
          list.insert(cur, std::move(single_value));
        }
      }
      if (v == hi) break;
    }
    auto next = std::next(cur);
    if (next != list.end()) cur = next;
  }

  // Join neighbours that continue each other (Slurm's hostlist_collapse, which walks backwards).
  std::vector<Range> reversed;
  reversed.reserve(list.size());
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    Range& prev = *it;
    if (!reversed.empty()) {
      Range& next = reversed.back();
      if (SharesBracket(prev, next) && next.lo != 0 && prev.hi == next.lo - 1 &&
          CombineWidths(prev.lo, &prev.width, next.lo, &next.width)) {
        prev.hi = next.hi;
        next = std::move(prev);
        continue;
      }
    }
    reversed.push_back(std::move(prev));
  }
  ranges_.assign(std::make_move_iterator(reversed.rbegin()),
                 std::make_move_iterator(reversed.rend()));
}

// ---------------------------------------------------------------------------------------------

StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view expr) {
  ASSIGN_OR_RETURN(Hostlist list, Hostlist::Parse(expr));
  return list.Expand();
}

std::string CompressHostlist(const std::vector<std::string>& hosts) {
  return Hostlist::FromHosts(hosts).ToString();
}

std::string CompressHostlistSorted(std::vector<std::string> hosts) {
  Hostlist list = Hostlist::FromHosts(hosts);
  list.Sort();
  return list.ToString();
}

}  // namespace loom::core
