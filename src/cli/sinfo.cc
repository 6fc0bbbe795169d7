// sinfo: partitions and nodes as loomctld sees them, in Slurm's layouts.
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/sinfo_format.h"
#include "cli/slurm_help.h"
#include "cli/wire_views.h"
#include "core/clock.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "rpc/convert.h"

namespace loom::cli {
namespace {

// Slurm 22.05's sinfo options; rows of one option share an id.
enum class Opt {
  kAll,
  kClusters,
  kDead,
  kExact,
  kFederation,
  kFormat,
  kLongFormat,
  kHelp,
  kHide,
  kIterate,
  kJson,
  kLocal,
  kLong,
  kListReasons,
  kNode,
  kNodes,
  kNoConvert,
  kNoHeader,
  kPartition,
  kResponding,
  kReservation,
  kSummarize,
  kSort,
  kStates,
  kUsage,
  kVerbose,
  kVersion,
  kYaml,
};

// In sinfo's order within each first letter (its "ambiguous" messages list them so).
constexpr OptionSpec<Opt> kOptions[] = {
    {"all", 'a', kNoArg, Opt::kAll},
    {"cluster", 0, kArg, Opt::kClusters},
    {"clusters", 'M', kArg, Opt::kClusters},
    {"dead", 'd', kNoArg, Opt::kDead},
    {"exact", 'e', kNoArg, Opt::kExact},
    {"federation", 0, kNoArg, Opt::kFederation},
    {"format", 'o', kArg, Opt::kFormat},
    {"Format", 'O', kArg, Opt::kLongFormat},
    {"help", 0, kNoArg, Opt::kHelp},
    {"hide", 0, kNoArg, Opt::kHide},
    {"iterate", 'i', kArg, Opt::kIterate},
    {"json", 0, kNoArg, Opt::kJson},
    {"local", 0, kNoArg, Opt::kLocal},
    {"long", 'l', kNoArg, Opt::kLong},
    {"list-reasons", 'R', kNoArg, Opt::kListReasons},
    {"Node", 'N', kNoArg, Opt::kNode},
    {"nodes", 'n', kArg, Opt::kNodes},
    {"noconvert", 0, kNoArg, Opt::kNoConvert},
    {"noheader", 'h', kNoArg, Opt::kNoHeader},
    {"partition", 'p', kArg, Opt::kPartition},
    {"responding", 'r', kNoArg, Opt::kResponding},
    {"reservation", 'T', kNoArg, Opt::kReservation},
    {"summarize", 's', kNoArg, Opt::kSummarize},
    {"sort", 'S', kArg, Opt::kSort},
    {"states", 't', kArg, Opt::kStates},
    {"usage", 0, kNoArg, Opt::kUsage},
    {"verbose", 'v', kNoArg, Opt::kVerbose},
    {"version", 'V', kNoArg, Opt::kVersion},
    {"yaml", 0, kNoArg, Opt::kYaml},
};

constexpr CommandText kText{"sinfo", kSinfoHelp, kSinfoUsage};

}  // namespace

int RunSinfo(int argc, char** argv) {
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, kText, &scan)) return *done;
  format::SinfoOptions opts;
  std::string nodes, partitions;
  bool reservations = false;
  // Operands are ignored, as Slurm's sinfo ignores them.
  for (const ParsedOption<Opt>& o : scan.options) {
    const std::string value = o.value.value_or("");
    switch (o.id) {
      case Opt::kNode:
        opts.node_oriented = true;
        break;
      case Opt::kLong:
        opts.long_listing = true;
        break;
      case Opt::kListReasons:
        opts.list_reasons = true;
        break;
      case Opt::kNoHeader:
        opts.no_header = true;
        break;
      case Opt::kExact:
        opts.exact = true;
        break;
      case Opt::kFormat:
        opts.format = value;
        break;
      case Opt::kNodes:
        nodes = value;
        break;
      case Opt::kPartition:
        partitions = value;
        break;
      case Opt::kReservation:
        reservations = true;
        break;
      default:
        return NotSupported("sinfo", LongName<Opt>(kOptions, o.id));
    }
  }
  if (!nodes.empty()) {
    auto expanded = core::ExpandHostlist(nodes);
    if (!expanded.ok()) {
      std::fprintf(stderr, "sinfo: error: %s\n", std::string(expanded.status().message()).c_str());
      return 1;
    }
    opts.nodes = *expanded;
  }
  for (std::string_view p : core::Split(partitions, ',')) {
    if (!p.empty()) opts.partitions.emplace_back(p);
  }
  if (Status v = format::ValidateSinfoOptions(opts); !v.ok()) {
    std::fprintf(stderr, "sinfo: error: %s\n", std::string(v.message()).c_str());
    return 1;
  }
  auto client = Client::Connect("sinfo");
  if (!client.ok()) {
    std::fprintf(stderr, "sinfo: error: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  if (reservations) {
    // -T: the reservations instead of the nodes.
    format::RenderContext ctx;
    StatusOr<std::vector<format::ReservationView>> resvs = FetchReservations(*client, "", &ctx);
    if (!resvs.ok()) {
      std::fprintf(stderr, "slurm_load_reservations: %s\n",
                   std::string(resvs.status().message()).c_str());
      return 1;
    }
    std::fputs(format::RenderReservationTable(*resvs, ctx).c_str(), stdout);
    return 0;
  }
  v1::QueryNodesRequest req;
  v1::QueryNodesReply reply;
  Status s = client->Call("QueryNodes", req, &reply);
  if (!s.ok()) {
    std::fprintf(stderr, "slurm_load_partitions: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::vector<format::PartitionView> parts;
  for (const v1::PartitionInfo& p : reply.partitions()) parts.push_back(ToPartitionView(p));
  std::vector<format::NodeView> node_views;
  for (const v1::NodeInfo& n : reply.nodes()) node_views.push_back(ToNodeView(n));
  format::ToNodeTableOrder(&node_views, &parts);
  format::RenderContext ctx{core::RealClock().UnixSeconds(), 0};
  auto out = format::RenderSinfo(parts, node_views, opts, ctx);
  if (!out.ok()) {
    std::fprintf(stderr, "sinfo: error: %s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  std::fputs(out->c_str(), stdout);
  return 0;
}

}  // namespace loom::cli
