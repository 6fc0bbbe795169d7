// sprio: the factors of each pending job's multifactor priority, weighted (default) or as
// they are (-n), and the weights themselves (-w), in Slurm 22.05's layout. Held jobs and jobs
// whose begin time is ahead are not listed, as in Slurm.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/text.h"
#include "cli/slurm_help.h"
#include "core/strings.h"
#include "core/tres.h"

namespace loom::cli {
namespace {

using core::StrCat;

enum class Opt {
  kClusters,
  kFormat,
  kHelp,
  kJobs,
  kLong,
  kNoHeader,
  kNorm,
  kPartition,
  kSort,
  kUsage,
  kUser,
  kVerbose,
  kVersion,
  kWeights,
};

constexpr OptionSpec<Opt> kOptions[] = {
    {"clusters", 'M', kArg, Opt::kClusters}, {"format", 'o', kArg, Opt::kFormat},
    {"help", 0, kNoArg, Opt::kHelp},         {"jobs", 'j', kArg, Opt::kJobs},
    {"long", 'l', kNoArg, Opt::kLong},       {"noheader", 'h', kNoArg, Opt::kNoHeader},
    {"norm", 'n', kNoArg, Opt::kNorm},       {"partition", 'p', kArg, Opt::kPartition},
    {"sort", 'S', kArg, Opt::kSort},         {"usage", 0, kNoArg, Opt::kUsage},
    {"user", 'u', kArg, Opt::kUser},         {"verbose", 'v', kNoArg, Opt::kVerbose},
    {"version", 'V', kNoArg, Opt::kVersion}, {"weights", 'w', kNoArg, Opt::kWeights},
};

constexpr CommandText kText{"sprio", kSprioHelp, kSprioUsage};

// The layouts Slurm's sprio prints without -o.
constexpr std::string_view kDefault = "%.15i %9r %.10Y %.10S %.10A %.10F %.10J %.10P %.10Q";
constexpr std::string_view kDefaultUser =
    "%.15i %9r %.8u %.10Y %.10S %.10A %.10F %.10J %.10P %.10Q";
constexpr std::string_view kLong =
    "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T";
constexpr std::string_view kNormal = "%.15i %9r %-10y %-10a %-10f %-10j %-10p %-10q";
constexpr std::string_view kNormalLong =
    "%.15i %9r %.8u %-10y %-10a %-10b %-10f %-10j %-10p %-10q %-11N %-20T";

struct Column {
  char letter = 0;  // 0: literal text only
  int width = 0;
  bool right = false;
  std::string suffix;
};

constexpr std::string_view kLetters = "aAbBfFiIjJNpPqQrSTtuyY";

StatusOr<std::vector<Column>> ParseFormat(std::string_view fmt) {
  std::vector<Column> cols;
  size_t i = fmt.find('%');
  cols.push_back(Column{0, 0, false, std::string(fmt.substr(0, i))});
  while (i < fmt.size()) {
    Column c;
    size_t j = i + 1;
    if (j < fmt.size() && fmt[j] == '.') {
      c.right = true;
      ++j;
    } else if (j < fmt.size() && fmt[j] == '-') {
      ++j;
    }
    while (j < fmt.size() && fmt[j] >= '0' && fmt[j] <= '9')
      c.width = c.width * 10 + (fmt[j++] - '0');
    if (j >= fmt.size() || kLetters.find(fmt[j]) == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat("Invalid job format specification: ",
                                               fmt.substr(i, std::min(fmt.size(), j + 1) - i)));
    }
    c.letter = fmt[j];
    const size_t next = fmt.find('%', j + 1);
    c.suffix = std::string(fmt.substr(j + 1, next == std::string_view::npos ? next : next - j - 1));
    cols.push_back(std::move(c));
    i = next == std::string_view::npos ? fmt.size() : next;
  }
  return cols;
}

std::string_view Title(char letter) {
  switch (letter) {
    case 'a':
    case 'A':
      return "AGE";
    case 'b':
    case 'B':
      return "ASSOC";
    case 'f':
    case 'F':
      return "FAIRSHARE";
    case 'i':
      return "JOBID";
    case 'I':
      return "SITE";
    case 'j':
    case 'J':
      return "JOBSIZE";
    case 'N':
      return "NICE";
    case 'p':
    case 'P':
      return "PARTITION";
    case 'q':
    case 'Q':
      return "QOS";
    case 'r':
      return "PARTITION";
    case 'S':
      return "SITE";
    case 't':
    case 'T':
      return "TRES";
    case 'u':
      return "USER";
    case 'y':
    case 'Y':
      return "PRIORITY";
    default:
      return "";
  }
}

std::string Weighted(int64_t weight, double factor) {
  return StrCat(static_cast<int64_t>(std::llround(static_cast<double>(weight) * factor)));
}

std::string Normal(double factor) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7f", factor);
  return buf;
}

// PriorityWeightTRES's factors, "cpu=0.500000,mem=0.250000": each as its weighted whole
// number ("cpu=500,mem=500"), or as the factor.
std::string TresFactors(const v1::PriorityRow& r, const v1::PrioritiesReply& w, bool weighted) {
  if (r.tres().empty()) return "";
  auto weights = core::TresBillingWeights::Parse(w.weight_tres());
  std::string out;
  for (std::string_view item : core::Split(r.tres(), ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string name(item.substr(0, eq));
    const double factor = std::strtod(std::string(item.substr(eq + 1)).c_str(), nullptr);
    const double weight = weights.ok() ? weights->WeightFor(name) : 0;
    out += StrCat(
        out.empty() ? "" : ",", name, "=",
        weighted ? StrCat(static_cast<int64_t>(std::llround(weight * factor))) : Normal(factor));
  }
  return out;
}

std::string Value(char letter, const v1::PriorityRow& r, const v1::PrioritiesReply& w) {
  switch (letter) {
    case 'i':
      return StrCat(r.job_id());
    case 'r':
      return r.partition();
    case 'u':
      return r.user();
    case 'Y':
      return StrCat(r.priority());
    case 'y': {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.8f", static_cast<double>(r.priority()) / 4294967296.0);
      return buf;
    }
    case 'S':
    case 'I':
      return "0";
    case 'A':
      return Weighted(w.weight_age(), r.age());
    case 'a':
      return Normal(r.age());
    case 'B':
      return Weighted(w.weight_assoc(), r.assoc());
    case 'b':
      return Normal(r.assoc());
    case 'F':
      return Weighted(w.weight_fairshare(), r.fairshare());
    case 'f':
      return Normal(r.fairshare());
    case 'J':
      return Weighted(w.weight_job_size(), r.job_size());
    case 'j':
      return Normal(r.job_size());
    case 'P':
      return Weighted(w.weight_partition(), r.partition_factor());
    case 'p':
      return Normal(r.partition_factor());
    case 'Q':
      return Weighted(w.weight_qos(), r.qos());
    case 'q':
      return Normal(r.qos());
    case 'N':
      return StrCat(r.nice());
    case 'T':
      return TresFactors(r, w, /*weighted=*/true);
    case 't':
      return TresFactors(r, w, /*weighted=*/false);
    default:
      return "";
  }
}

// The weights line of -w: "Weights" under JOBID, each factor's weight under its column.
std::string WeightOf(char letter, const v1::PrioritiesReply& w) {
  switch (letter) {
    case 'i':
      return "Weights";
    case 'S':
    case 'I':
      return "1";
    case 'A':
    case 'a':
      return StrCat(w.weight_age());
    case 'B':
    case 'b':
      return StrCat(w.weight_assoc());
    case 'F':
    case 'f':
      return StrCat(w.weight_fairshare());
    case 'J':
    case 'j':
      return StrCat(w.weight_job_size());
    case 'P':
    case 'p':
      return StrCat(w.weight_partition());
    case 'Q':
    case 'q':
      return StrCat(w.weight_qos());
    case 'T':
    case 't':
      return w.weight_tres();
    default:
      return "";
  }
}

template <typename ValueOf>
void AppendLine(std::string* out, const std::vector<Column>& cols, ValueOf value) {
  for (const Column& c : cols) {
    if (c.letter != 0) format::AppendColumn(out, value(c.letter), c.width, c.right);
    *out += c.suffix;
  }
  // Slurm's sprio ends a line where its last column ends.
  *out += "\n";
}

}  // namespace

int RunSprio(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  bool header = true, long_form = false, norm = false, weights = false;
  std::string fmt;
  v1::PrioritiesRequest req;
  std::set<std::string> partitions;
  for (const ParsedOption<Opt>& o : scan.options) {
    switch (o.id) {
      case Opt::kFormat:
        fmt = *o.value;
        break;
      case Opt::kJobs:
        for (std::string_view id : core::Split(*o.value, ',')) {
          auto n = core::ParseInt(core::Trim(id));
          if (!n || *n <= 0) {
            std::fprintf(stderr, "sprio: error: Invalid job id: %s\n", std::string(id).c_str());
            return 1;
          }
          req.add_job_ids(static_cast<uint64_t>(*n));
        }
        break;
      case Opt::kLong:
        long_form = true;
        break;
      case Opt::kNoHeader:
        header = false;
        break;
      case Opt::kNorm:
        norm = true;
        break;
      case Opt::kPartition:
        for (std::string_view p : core::Split(*o.value, ',')) partitions.insert(std::string(p));
        break;
      case Opt::kUser:
        for (std::string_view u : core::Split(*o.value, ',')) req.add_users(std::string(u));
        break;
      case Opt::kVerbose:
        break;
      case Opt::kWeights:
        weights = true;
        break;
      default:
        return NotSupported("sprio", LongName<Opt>(kOptions, o.id));
    }
  }
  if (fmt.empty()) {
    if (norm) {
      fmt = long_form ? kNormalLong : kNormal;
    } else if (long_form) {
      fmt = kLong;
    } else {
      fmt = req.users().empty() ? kDefault : kDefaultUser;
    }
  }
  StatusOr<std::vector<Column>> cols = ParseFormat(fmt);
  if (!cols.ok()) {
    std::fprintf(stderr, "sprio: error: %s\n", std::string(cols.status().message()).c_str());
    return 1;
  }
  auto client = Client::Connect("sprio");
  if (!client.ok()) {
    std::fprintf(stderr, "sprio: error: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  v1::PrioritiesReply reply;
  if (Status s = client->Call("Priorities", req, &reply); !s.ok()) {
    std::fprintf(stderr, "sprio: error: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  if (!reply.multifactor()) {
    std::fprintf(stderr,
                 "sprio: error: the priority factors need PriorityType=priority/multifactor "
                 "in slurm.conf\n");
    return 1;
  }
  std::string out;
  if (header) AppendLine(&out, *cols, [](char letter) { return std::string(Title(letter)); });
  if (weights) {
    AppendLine(&out, *cols, [&](char letter) { return WeightOf(letter, reply); });
  } else {
    for (const v1::PriorityRow& r : reply.rows()) {
      if (!partitions.empty() && !partitions.count(r.partition())) continue;
      AppendLine(&out, *cols, [&](char letter) { return Value(letter, r, reply); });
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace loom::cli
