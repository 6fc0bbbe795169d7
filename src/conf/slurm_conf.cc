#include "conf/slurm_conf.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "conf/internal/context.h"
#include "conf/internal/globals.h"
#include "conf/internal/key_table.h"
#include "conf/internal/lexer.h"
#include "conf/internal/nodes.h"
#include "conf/internal/partitions.h"
#include "core/strings.h"

namespace loom::conf {
namespace {

using core::StrCat;
using internal::KeyValue;
using internal::Scope;
using internal::Statement;

// Checks that need the whole file: required keys, GRES names against GresTypes, slurmd
// ports that collide on one host.
void ValidateWhole(internal::ParseContext* ctx, const std::string& main_file) {
  ClusterConfig& cfg = ctx->config();
  const SourceLocation file_loc{main_file, 0};
  if (cfg.cluster_name.empty()) {
    ctx->Error(file_loc, "ClusterName", "ClusterName is not set; Slurm requires it");
  }
  if (cfg.controllers.empty()) {
    ctx->Warn(file_loc, "SlurmctldHost",
              "no SlurmctldHost is set; the controller daemon needs one to start");
  }
  std::set<std::pair<std::string, std::string>> reported;  // (line, gres)
  for (const NodeConfig& node : cfg.nodes) {
    for (const GresSpec& g : node.gres) {
      bool listed = false;
      for (const std::string& t : cfg.gres_types) listed = listed || t == g.name;
      if (listed || !reported.insert({node.defined_at.ToString(), g.name}).second) continue;
      ctx->Error(node.defined_at, "Gres",
                 StrCat("node ", node.name, " has Gres '", g.name,
                        "' which GresTypes does not list; add it, e.g. GresTypes=", g.name));
    }
  }
  std::map<std::pair<std::string, int32_t>, const NodeConfig*> endpoints;
  std::set<std::string> port_reported;
  for (const NodeConfig& node : cfg.nodes) {
    auto [it, inserted] = endpoints.emplace(std::make_pair(node.addr, node.port), &node);
    if (inserted || !port_reported.insert(node.defined_at.ToString()).second) continue;
    ctx->Warn(node.defined_at, "Port",
              StrCat("nodes ", it->second->name, " and ", node.name, " both use ", node.addr,
                     " port ", node.port, "; slurmds sharing a host need distinct ports"));
  }
}

void AddFrontend(internal::ParseContext* ctx, const Statement& st) {
  for (size_t i = 1; i < st.pairs.size(); ++i) {
    const KeyValue& kv = st.pairs[i];
    std::optional<std::string_view> k = internal::CanonicalKey(Scope::kFrontend, kv.key);
    if (!k || *k == "FrontendName") {
      ctx->Error(st.location, kv.key, internal::UnknownKeyMessage(Scope::kFrontend, kv.key));
    }
  }
  ctx->config().other_keys["FrontendName"] = st.pairs[0].value;
  ctx->WarnNotActedOn(st.location, st.pairs[0].key, "(front end nodes)");
}

}  // namespace

StatusOr<ClusterConfig> ParseSlurmConf(std::string_view text, std::string_view file_name,
                                       const IncludeResolver& resolver,
                                       std::vector<Diagnostic>* warnings) {
  std::vector<Diagnostic> local_warnings;
  if (warnings == nullptr) warnings = &local_warnings;
  ClusterConfig cfg;
  internal::ParseContext ctx(&cfg, warnings);

  std::vector<Statement> statements;
  internal::StatementReader reader(resolver, &ctx.errors(), warnings);
  reader.Read(text, file_name, &statements, &cfg.source_files);

  internal::GlobalKeys globals(&ctx);
  internal::NodeTable nodes(&ctx);
  internal::PartitionTable partitions(&ctx);
  for (const Statement& st : statements) {
    std::optional<std::string_view> head = internal::CanonicalKey(Scope::kGlobal, st.pairs[0].key);
    if (head == "NodeName") {
      nodes.AddNodeLine(st);
    } else if (head == "PartitionName") {
      partitions.AddLine(st);
    } else if (head == "DownNodes") {
      nodes.AddDownNodes(st);
    } else if (head == "NodeSet") {
      nodes.AddNodeSet(st);
    } else if (head == "FrontendName") {
      AddFrontend(&ctx, st);
    } else {
      for (const KeyValue& kv : st.pairs) {
        std::optional<std::string_view> k = internal::CanonicalKey(Scope::kGlobal, kv.key);
        if (k == "NodeName" || k == "PartitionName" || k == "DownNodes" || k == "NodeSet" ||
            k == "FrontendName") {
          ctx.Error(st.location, kv.key, StrCat(*k, " must start its line; put it on a new line"));
          continue;
        }
        globals.Add(st.location, kv);
      }
    }
  }
  globals.Finish();
  nodes.Finish();
  partitions.Finish(nodes);
  ValidateWhole(&ctx, std::string(file_name));

  if (!ctx.errors().empty()) {
    std::string message = JoinDiagnostics(ctx.errors());
    if (ctx.errors().size() >= internal::ParseContext::kMaxErrors) {
      message += "\n(further errors not shown)";
    }
    return absl::InvalidArgumentError(message);
  }
  return cfg;
}

StatusOr<ClusterConfig> LoadSlurmConf(const std::string& path, std::vector<Diagnostic>* warnings) {
  FileIncludeResolver resolver;
  StatusOr<std::vector<IncludedFile>> main = resolver.Resolve(path);
  if (!main.ok()) {
    return absl::Status(main.status().code(), StrCat("cannot read slurm.conf '", path,
                                                     "': ", std::string(main.status().message())));
  }
  if (main->size() != 1) {
    return absl::InvalidArgumentError(
        StrCat("slurm.conf path '", path, "' must name exactly one file"));
  }
  // Parsed under its resolved name, so that an Include naming it again is seen as a cycle.
  const IncludedFile& file = main->front();
  return ParseSlurmConf(file.text, file.name, resolver, warnings);
}

}  // namespace loom::conf
