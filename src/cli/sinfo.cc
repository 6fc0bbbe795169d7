// sinfo: partitions and nodes as loomctld sees them, in Slurm's layouts.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/format/sinfo_format.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "cli/wire_views.h"
#include "rpc/convert.h"

namespace loom::cli {

int RunSinfo(int argc, char** argv) {
  CLI::App app{"view information about nodes and partitions", "sinfo"};
  app.set_help_flag("--help");
  format::SinfoOptions opts;
  std::string nodes, partitions;
  app.add_flag("-N,--Node", opts.node_oriented);
  app.add_flag("-l,--long", opts.long_listing);
  app.add_flag("-R,--list-reasons", opts.list_reasons);
  app.add_flag("-h,--noheader", opts.no_header);
  app.add_flag("-e,--exact", opts.exact);
  app.add_option("-o,--format", opts.format);
  app.add_option("-n,--nodes", nodes);
  app.add_option("-p,--partition", partitions);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
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
  format::RenderContext ctx{static_cast<int64_t>(std::time(nullptr)), 0};
  auto out = format::RenderSinfo(parts, node_views, opts, ctx);
  if (!out.ok()) {
    std::fprintf(stderr, "sinfo: error: %s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  std::fputs(out->c_str(), stdout);
  return 0;
}

}  // namespace loom::cli
