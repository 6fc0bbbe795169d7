// Slurm hostlist expressions ("gpu-[01-04,07]", "rack[1-2]-node[01-03]"): parsing, expansion
// and the ranged form Slurm prints, with Slurm 22.05's observable behaviour (the reference
// outputs are in tests/data/). Value types and pure functions; thread-compatible: a const
// Hostlist may be read from several threads at once.
//
// What Slurm does, and so do we:
//  - Expansion keeps input order and duplicates: "n1,n3,n1" -> n1 n3 n1.
//  - Separators are ',', ' ' and '\t' (not '\n'); empty tokens are skipped. Inside brackets
//    they do not split ("n[1, 2]").
//  - A range takes its zero padding from the text of its start: "n[009-11]" -> n009 n010 n011,
//    "n[1-03]" -> n1 n2 n3.
//  - Several brackets expand as a product ("rack[1-2]-node[01-03]"), but only the last bracket
//    may end the token: "n[1-3]-ib" is rejected.
//  - Lenient corners: "n[1-]" -> n1; "n[" -> "n]"; "[abc" -> "abc".
//  - Compression keeps order and duplicates and folds only the trailing number of each name:
//    "n3,n1" -> "n[3,1]", "n0,n00,n000" -> "n[0,00,000]", "n98,...,n102" -> "n[98-102]".
//
// Where Slurm 22.05 misbehaves we deliberately do not follow it:
//  - A number too large for 64 bits is rejected in a bracket, and a host name ending in such a
//    number is kept verbatim (Slurm silently renames both to ...18446744073709551615).
//  - Host name prefixes are equal only when byte-for-byte equal (Slurm's natural comparison
//    treats "a\rb" and "ab" as one prefix and renames hosts).
//  - One expression may name at most kMaxHostlistHosts hosts (Slurm tries to build any product,
//    "a[0-65535]b[0-65535]c[0-65535]", until memory runs out).
//  - The sort compares numbers exactly (Slurm truncates their difference to 32 bits).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace loom::core {

// Slurm's limits: hosts in one range ("n[1-65536]"), ranges in one bracket (more is fatal to a
// Slurm command), and values in a bracket that is followed by another bracket.
inline constexpr int64_t kMaxHostsPerRange = 65536;
inline constexpr int64_t kMaxRangesPerBracket = 262144;
inline constexpr int64_t kMaxPrefixValues = 65536;
// Our own bound on the hosts one expression may name (see above).
inline constexpr int64_t kMaxHostlistHosts = int64_t{1} << 22;

// An ordered list of host names, stored as ranges of numbered hosts the way Slurm's hostlist_t
// stores them: appending "n4" after "n[1-3]" extends the range; nothing is ever deduplicated.
// Cheap for large contiguous lists (one range per run), so the controller can hold node lists of
// any size without expanding them.
class Hostlist {
 public:
  Hostlist() = default;

  // Parses an expression; fails (InvalidArgument, naming the offending part) on anything Slurm
  // rejects, and also where Slurm would accept the expression but silently drop hosts from it
  // (an invalid range in a bracket that is neither the last nor next to last).
  static StatusOr<Hostlist> Parse(std::string_view expr, int64_t max_hosts = kMaxHostlistHosts);

  // A list of the given names, in order.
  static Hostlist FromHosts(const std::vector<std::string>& hosts);

  // Appends one host name as is (no bracket parsing).
  void PushHost(std::string_view host);

  // Sorts as Slurm's hostlist_sort does (`scontrol show hostlistsorted`): by prefix in natural
  // order, then by number, numbers of a wider zero-padded width after narrower ones ("n9" <
  // "n09"); overlapping ranges are split so duplicates sit next to each other.
  void Sort();

  // Number of hosts, duplicates included.
  int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Every host name, in order.
  std::vector<std::string> Expand() const;

  // The ranged form Slurm prints: "n[1-3,5],gpu-[01-02],login".
  std::string ToString() const;

 private:
  friend class SlurmHostlistParser;

  struct Range {
    std::string prefix;  // the whole name when `single`
    uint64_t lo = 0;
    uint64_t hi = 0;
    int width = 0;        // digits to zero-pad numbers to
    bool single = false;  // a name without a numeric suffix
    uint64_t count() const { return single ? 1 : hi - lo + 1; }
  };

  // Appends a range, extending the last one when it continues it (same prefix, next number,
  // compatible padding).
  void PushRange(Range r);

  std::vector<Range> ranges_;
  int64_t size_ = 0;
};

// The outcome of parsing an expression exactly as Slurm 22.05's hostlist_create does; used where
// Slurm's messages must be reproduced (scontrol). Prefer Hostlist::Parse elsewhere.
struct SlurmHostlistParse {
  // Empty when Slurm rejects the expression ("Invalid hostlist: ...").
  std::optional<Hostlist> hostlist;
  // The lines Slurm logs while parsing, in order, without the "<program>: error: " prefix, e.g.
  // "_parse_single_range: Invalid range: `3-1'". Slurm may log and still accept (see `lossy`).
  std::vector<std::string> slurm_errors;
  // True when Slurm accepts the expression but drops the hosts of a part it could not parse.
  bool lossy = false;
  // True when Slurm gives up on the whole command: slurm_errors.back() is then logged with
  // fatal() ("<program>: fatal: ...") and the command exits with status 1.
  bool fatal = false;
  // True when the expression is rejected by one of our own limits (kMaxHostlistHosts, nesting
  // depth) that Slurm does not have; `reason` says which.
  bool over_limit = false;
  // Why the expression is rejected or lossy, for people: "invalid range `3-1'". Empty if clean.
  std::string reason;
};
SlurmHostlistParse ParseHostlistLikeSlurm(std::string_view expr,
                                          int64_t max_hosts = kMaxHostlistHosts);

// Expands an expression into host names, in input order, keeping duplicates (`scontrol show
// hostnames`). Errors as Hostlist::Parse.
StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view expr);

// Slurm's ranged form of the names, keeping their order and duplicates (`scontrol show
// hostlist`): {"n1","n2","n3","n5"} -> "n[1-3,5]".
std::string CompressHostlist(const std::vector<std::string>& hosts);

// The same after sorting as Hostlist::Sort (`scontrol show hostlistsorted`); keeps duplicates.
std::string CompressHostlistSorted(std::vector<std::string> hosts);

// Slurm's natural-order string comparison (strnatcmp): runs of digits compare by value, except
// that a run starting with '0' compares digit by digit; whitespace is skipped. Returns <0, 0, >0.
int NaturalCompare(std::string_view a, std::string_view b);

}  // namespace loom::core
