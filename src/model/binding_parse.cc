// Parsing of srun's --cpu-bind, --gpu-bind and --distribution values (see binding.h).

#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.h"
#include "model/binding.h"

namespace loom::model {
namespace {

using core::StrCat;

constexpr std::string_view kCpuBindHelp =
    "use none, threads, cores, sockets, ldoms, rank, map_cpu:<list>, mask_cpu:<list>, "
    "map_ldom:<list> or mask_ldom:<list>, optionally with verbose or quiet "
    "(e.g. --cpu-bind=verbose,cores)";
constexpr std::string_view kGpuBindHelp =
    "use none, closest, map_gpu:<list>, mask_gpu:<list>, single:<tasks_per_gpu> or "
    "per_task:<gpus_per_task>, optionally with verbose (e.g. --gpu-bind=verbose,closest)";

std::optional<int> HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return std::nullopt;
}

bool HasHexPrefix(std::string_view s) {
  return s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

// A hexadecimal mask ("0x0f", "f0") as a set of bit positions; nullopt on a bad digit.
std::optional<core::CpuSet> ParseHexMask(std::string_view s) {
  constexpr size_t kMaxDigits = 4096;  // 16384 CPUs
  if (HasHexPrefix(s)) s.remove_prefix(2);
  if (s.empty() || s.size() > kMaxDigits) return std::nullopt;
  core::CpuSet set;
  int32_t bit = 0;
  for (size_t i = s.size(); i-- > 0; bit += 4) {
    std::optional<int> d = HexDigit(s[i]);
    if (!d) return std::nullopt;
    for (int b = 0; b < 4; ++b) {
      if (*d >> b & 1) set.set(bit + b);
    }
  }
  return set;
}

// A decimal id, or hexadecimal with "0x"; nullopt when malformed or negative.
std::optional<int32_t> ParseId(std::string_view s) {
  if (HasHexPrefix(s)) {
    int64_t v = 0;
    for (char c : s.substr(2)) {
      std::optional<int> d = HexDigit(c);
      if (!d || v > (int64_t{1} << 30)) return std::nullopt;
      v = v * 16 + *d;
    }
    return static_cast<int32_t>(v);
  }
  std::optional<int64_t> v = core::ParseInt(s);
  if (!v || *v < 0 || *v > (int64_t{1} << 30)) return std::nullopt;
  return static_cast<int32_t>(*v);
}

enum class EntryKind { kId, kMask };

// A comma-separated list of ids or masks, each optionally "*N" (repeated N times).
std::optional<std::vector<core::CpuSet>> ParseList(const std::vector<std::string_view>& entries,
                                                   EntryKind kind) {
  constexpr size_t kMaxEntries = 1 << 16;  // after repetition
  std::vector<core::CpuSet> out;
  if (entries.empty()) return std::nullopt;
  for (std::string_view e : entries) {
    int64_t repeat = 1;
    if (size_t star = e.find('*'); star != std::string_view::npos) {
      std::optional<int64_t> n = core::ParseInt(e.substr(star + 1));
      if (!n || *n < 1 || *n > static_cast<int64_t>(kMaxEntries)) return std::nullopt;
      repeat = *n;
      e = e.substr(0, star);
    }
    core::CpuSet set;
    if (kind == EntryKind::kId) {
      std::optional<int32_t> id = ParseId(e);
      if (!id) return std::nullopt;
      set.set(*id);
    } else {
      std::optional<core::CpuSet> mask = ParseHexMask(e);
      if (!mask) return std::nullopt;
      set = *mask;
    }
    if (out.size() + static_cast<size_t>(repeat) > kMaxEntries) return std::nullopt;
    for (int64_t i = 0; i < repeat; ++i) out.push_back(set);
  }
  return out;
}

// Splits "verbose,map_cpu:0,1,2" into option words, where a "<name>:<list>" word takes the
// comma-separated pieces that follow it as its list, up to the next known keyword.
struct Word {
  std::string name;                    // lower case, without the ":<list>"
  std::vector<std::string_view> list;  // pieces after the colon
  bool has_list = false;
};

std::vector<Word> SplitWords(std::string_view arg, const std::vector<std::string_view>& keywords) {
  std::vector<Word> words;
  auto is_keyword = [&](std::string_view piece) {
    std::string lower = core::ToLower(piece.substr(0, piece.find(':')));
    for (std::string_view k : keywords) {
      if (lower == k) return true;
    }
    return false;
  };
  for (std::string_view piece : core::Split(arg, ',')) {
    if (!words.empty() && words.back().has_list && !is_keyword(piece)) {
      words.back().list.push_back(piece);
      continue;
    }
    Word w;
    size_t colon = piece.find(':');
    w.name = core::ToLower(piece.substr(0, colon));
    if (colon != std::string_view::npos) {
      w.has_list = true;
      std::string_view rest = piece.substr(colon + 1);
      if (!rest.empty()) w.list.push_back(rest);
    }
    words.push_back(std::move(w));
  }
  return words;
}

Status BadArg(std::string_view option, std::string_view arg, std::string_view help) {
  return absl::InvalidArgumentError(
      StrCat("Invalid --", option, " argument: ", arg, " (", help, ")"));
}

}  // namespace

StatusOr<CpuBind> ParseCpuBind(std::string_view arg) {
  static const std::vector<std::string_view> kKeywords = {
      "q",       "quiet",   "v",        "verbose",  "no",       "none", "thread",
      "threads", "core",    "cores",    "socket",   "sockets",  "ldom", "ldoms",
      "rank",    "map_cpu", "mask_cpu", "map_ldom", "mask_ldom"};
  CpuBind bind;
  bool have_type = false;
  for (const Word& w : SplitWords(arg, kKeywords)) {
    std::optional<CpuBindType> type;
    const std::string& n = w.name;
    if (!w.has_list && (n == "q" || n == "quiet")) {
      bind.verbose = false;
      continue;
    }
    if (!w.has_list && (n == "v" || n == "verbose")) {
      bind.verbose = true;
      continue;
    }
    if (w.has_list) {
      EntryKind kind = EntryKind::kId;
      if (n == "map_cpu") {
        type = CpuBindType::kMapCpu;
      } else if (n == "mask_cpu") {
        type = CpuBindType::kMaskCpu;
        kind = EntryKind::kMask;
      } else if (n == "map_ldom") {
        type = CpuBindType::kMapLdom;
      } else if (n == "mask_ldom") {
        type = CpuBindType::kMaskLdom;
        kind = EntryKind::kMask;
      } else {
        return BadArg("cpu-bind", arg, kCpuBindHelp);
      }
      std::optional<std::vector<core::CpuSet>> list = ParseList(w.list, kind);
      if (!list) {
        return absl::InvalidArgumentError(StrCat(
            "Invalid --cpu-bind argument: ", arg, " (", n, " takes a comma-separated list of ",
            kind == EntryKind::kId ? "ids (decimal, or hexadecimal with 0x)" : "hexadecimal masks",
            ", each optionally followed by *<count>, e.g. ", n,
            kind == EntryKind::kId ? ":0,2*3" : ":0x3,0xc*3", ")"));
      }
      bind.list = std::move(*list);
    } else if (n == "no" || n == "none") {
      type = CpuBindType::kNone;
    } else if (n == "thread" || n == "threads") {
      type = CpuBindType::kThreads;
    } else if (n == "core" || n == "cores") {
      type = CpuBindType::kCores;
    } else if (n == "socket" || n == "sockets") {
      type = CpuBindType::kSockets;
    } else if (n == "ldom" || n == "ldoms") {
      type = CpuBindType::kLdoms;
    } else if (n == "rank") {
      type = CpuBindType::kRank;
    } else {
      return BadArg("cpu-bind", arg, kCpuBindHelp);
    }
    if (have_type) {
      return absl::InvalidArgumentError(StrCat("Invalid --cpu-bind argument: ", arg,
                                               " (give one binding type; ", kCpuBindHelp, ")"));
    }
    have_type = true;
    bind.type = *type;
  }
  return bind;
}

StatusOr<GpuBind> ParseGpuBind(std::string_view arg) {
  static const std::vector<std::string_view> kKeywords = {
      "verbose", "none", "closest", "map_gpu", "mask_gpu", "single", "per_task"};
  GpuBind bind;
  bool have_type = false;
  for (const Word& w : SplitWords(arg, kKeywords)) {
    const std::string& n = w.name;
    if (!w.has_list && n == "verbose") {
      bind.verbose = true;
      continue;
    }
    std::optional<GpuBindType> type;
    if (w.has_list && (n == "map_gpu" || n == "mask_gpu")) {
      const bool map = n == "map_gpu";
      type = map ? GpuBindType::kMapGpu : GpuBindType::kMaskGpu;
      std::optional<std::vector<core::CpuSet>> list =
          ParseList(w.list, map ? EntryKind::kId : EntryKind::kMask);
      bool fits = list.has_value();
      if (fits) {
        for (const core::CpuSet& s : *list) {
          std::vector<int32_t> bits = s.ToVector();
          if (!bits.empty() && bits.back() >= kMaxGpusPerNode) fits = false;
        }
      }
      if (!fits) {
        return absl::InvalidArgumentError(StrCat(
            "Invalid --gpu-bind argument: ", arg, " (", n, " takes a comma-separated list of ",
            map ? "GPU ids" : "hexadecimal GPU masks", " below ", kMaxGpusPerNode,
            ", each optionally followed by *<count>, e.g. ", n, map ? ":0,1*2" : ":0x3,0xc", ")"));
      }
      for (const core::CpuSet& s : *list) {
        GpuMask m = 0;
        for (int32_t b : s.ToVector()) m |= GpuMask{1} << b;
        bind.list.push_back(m);
      }
    } else if (w.has_list && n == "single") {
      type = GpuBindType::kSingle;
      std::optional<int64_t> per = w.list.size() == 1 ? core::ParseInt(w.list[0]) : std::nullopt;
      if (!per || *per < 1 || *per > (1 << 20)) {
        return absl::InvalidArgumentError(
            StrCat("Invalid --gpu-bind argument: ", arg,
                   " (single takes the number of tasks per GPU, a positive integer: single:1)"));
      }
      bind.tasks_per_gpu = static_cast<int32_t>(*per);
    } else if (w.has_list && n == "per_task") {
      type = GpuBindType::kPerTask;
      std::optional<int64_t> per = w.list.size() == 1 ? core::ParseInt(w.list[0]) : std::nullopt;
      if (!per || *per < 1 || *per > kMaxGpusPerNode) {
        return absl::InvalidArgumentError(StrCat(
            "Invalid --gpu-bind argument: ", arg,
            " (per_task takes the number of GPUs per task, from 1 to ", kMaxGpusPerNode,
            ": per_task:1)"));
      }
      bind.gpus_per_task = static_cast<int32_t>(*per);
    } else if (!w.has_list && n == "none") {
      type = GpuBindType::kNone;
    } else if (!w.has_list && n == "closest") {
      type = GpuBindType::kClosest;
    } else {
      return BadArg("gpu-bind", arg, kGpuBindHelp);
    }
    if (have_type) {
      return absl::InvalidArgumentError(StrCat("Invalid --gpu-bind argument: ", arg,
                                               " (give one binding type; ", kGpuBindHelp, ")"));
    }
    have_type = true;
    bind.type = *type;
  }
  return bind;
}

StatusOr<SocketDistribution> ParseSocketDistribution(std::string_view arg) {
  auto bad = [&arg]() {
    return absl::InvalidArgumentError(StrCat(
        "Invalid --distribution specification: ", arg,
        " (use <nodes>[:<sockets>[:<cores>]][,Pack|NoPack] with <nodes> one of *, block, cyclic, "
        "arbitrary, plane=<size> and the others one of *, block, cyclic, fcyclic; "
        "e.g. --distribution=block:cyclic)"));
  };
  std::string_view levels = arg;
  if (size_t comma = arg.find(','); comma != std::string_view::npos) {
    std::string pack = core::ToLower(arg.substr(comma + 1));
    if (pack != "pack" && pack != "nopack") return bad();
    levels = arg.substr(0, comma);
  }
  std::vector<std::string_view> parts = core::Split(levels, ':');
  if (parts.empty() || parts.size() > 3) return bad();
  const std::string first = core::ToLower(parts[0]);
  const bool plane = first.rfind("plane=", 0) == 0;
  if (plane) {
    std::optional<int64_t> size = core::ParseInt(std::string_view(first).substr(6));
    if (!size || *size < 1) return bad();
  } else if (first != "*" && first != "block" && first != "cyclic" && first != "arbitrary") {
    return bad();
  }
  SocketDistribution result = SocketDistribution::kCyclic;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string level = core::ToLower(parts[i]);
    std::optional<SocketDistribution> d;
    if (level == "*") {
      d = i == 1 ? SocketDistribution::kCyclic : result;
    } else if (level == "block") {
      d = SocketDistribution::kBlock;
    } else if (level == "cyclic") {
      d = SocketDistribution::kCyclic;
    } else if (level == "fcyclic") {
      d = SocketDistribution::kFcyclic;
    } else {
      return bad();
    }
    if (i == 1) result = *d;
  }
  return result;
}

}  // namespace loom::model
