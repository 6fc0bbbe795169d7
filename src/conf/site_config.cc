#include "conf/site_config.h"

#include <sys/stat.h>

#include "conf/gres_conf.h"
#include "conf/slurm_conf.h"
#include "conf/topology_conf.h"
#include "core/strings.h"

namespace loom::conf {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string Beside(const std::string& path, const std::string& name) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? name : path.substr(0, slash + 1) + name;
}

}  // namespace

StatusOr<SiteConfig> LoadSiteConfig(const std::string& path, std::vector<Diagnostic>* warnings) {
  SiteConfig site;
  ASSIGN_OR_RETURN(site.cluster, LoadSlurmConf(path, warnings));
  site.files.push_back(path);
  site.node_topologies.assign(site.cluster.nodes.size(), nullptr);
  site.gpu_autodetect.assign(site.cluster.nodes.size(), GresAutoDetect::kNotSet);

  const std::string gres_path = Beside(path, "gres.conf");
  if (Exists(gres_path)) {
    ASSIGN_OR_RETURN(GresConf gres, LoadGresConf(gres_path, warnings));
    ASSIGN_OR_RETURN(site.node_topologies,
                     BuildNodeTopologies(gres, GresClusterOf(site.cluster), warnings));
    site.files.insert(site.files.end(), gres.source_files.begin(), gres.source_files.end());
    for (size_t n = 0; n < site.cluster.nodes.size(); ++n) {
      site.gpu_autodetect[n] = AutoDetectFor(gres, site.cluster.nodes[n].name);
    }
  }

  const std::string& plugin = site.cluster.topology_plugin;
  if (plugin == "topology/tree" || plugin == "topology/block") {
    const std::string topo_path = Beside(path, "topology.conf");
    if (!Exists(topo_path)) {
      return absl::NotFoundError(core::StrCat(
          path, ": TopologyPlugin=", plugin, " needs ", topo_path,
          ", which does not exist; write it (docs/admin/topology-conf.md) or set "
          "TopologyPlugin=topology/none"));
    }
    std::vector<std::string> names;
    names.reserve(site.cluster.nodes.size());
    for (const NodeConfig& n : site.cluster.nodes) names.push_back(n.name);
    ASSIGN_OR_RETURN(site.network, LoadTopologyConf(topo_path, names, warnings));
    site.files.push_back(topo_path);
    const bool blocks = site.network.kind == model::ClusterTopology::Kind::kBlock;
    if (!site.network.empty() && blocks != (plugin == "topology/block")) {
      return absl::InvalidArgumentError(core::StrCat(
          topo_path, ": describes ", blocks ? "blocks (BlockName=)" : "switches (SwitchName=)",
          " but slurm.conf sets TopologyPlugin=", plugin, "; make them agree"));
    }
  }
  return site;
}

std::string MungeSocketOf(const ClusterConfig& config) {
  auto it = config.other_keys.find("AuthInfo");
  if (it == config.other_keys.end()) return "";
  for (std::string_view part : core::Split(it->second, ',')) {
    part = core::Trim(part);
    if (part.substr(0, 7) == "socket=") return std::string(part.substr(7));
  }
  return "";
}

}  // namespace loom::conf
