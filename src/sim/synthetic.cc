#include "sim/synthetic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "core/strings.h"
#include "model/gpu_topology.h"

namespace loom::sim {
namespace {

using core::StrCat;

constexpr int32_t kCpusPerGpu = 16;
constexpr int64_t kMemPerCpuMb = 4096;  // 64 GiB per GPU
constexpr int64_t kEstimateStepS = 600;

// One job size of the mix: GPUs and its probability.
struct SizeClass {
  int32_t gpus;
  double p;
};

// GPUs per job: median 1 and mean 3.716, Helios's (helios_cluster_summary.csv, "total").
constexpr SizeClass kDgxMix[] = {{1, 0.620},  {2, 0.124},  {4, 0.100}, {8, 0.090},
                                 {16, 0.040}, {32, 0.018}, {64, 0.008}};
// The same with a whole rack (72 GPUs) in place of 64 GPUs, carrying the same GPU share.
constexpr SizeClass kNvl72Mix[] = {{1, 0.6208889}, {2, 0.124},  {4, 0.100},     {8, 0.090},
                                   {16, 0.040},    {32, 0.018}, {72, 0.0071111}};

struct Machine {
  std::string_view kind;
  std::string_view catalog;      // model::CatalogTopology name
  std::string_view description;  // for the notes
  std::string_view node_prefix;
  int64_t mem_mb;
  int32_t threads_per_core;
  int32_t default_nodes;
  int32_t default_group;  // nodes per leaf switch or block
  bool blocks;            // NVLink blocks (topology/block) rather than a switch tree
  std::span<const SizeClass> mix;
};

const Machine kMachines[] = {
    {"dgx", "dgx-a100", "DGX A100 nodes", "dgx", int64_t{1024} * 1024, 2, 128, 8, false, kDgxMix},
    {"nvl72", "gb200-nvl72-tray", "GB200 NVL72 trays", "gb200", int64_t{960} * 1024, 1, 72, 18,
     true, kNvl72Mix},
};

// 3078 -> "3,078" (n >= 0).
std::string Grouped(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// `n` in decimal, zero-padded to `width` digits.
std::string Padded(int64_t n, int width) {
  std::string s = std::to_string(n);
  return std::string(s.size() < static_cast<size_t>(width) ? width - s.size() : 0, '0') + s;
}

int Digits(int64_t n) { return static_cast<int>(std::to_string(n).size()); }

// Random numbers that are the same everywhere: std::mt19937_64's sequence is fixed by the
// standard; the transformations are ours.
class Random {
 public:
  explicit Random(uint64_t seed) : gen_(seed) {}
  // Uniform on [0, 1): 53 random bits.
  double Uniform() { return static_cast<double>(gen_() >> 11) * 0x1p-53; }
  // Uniform on (0, 1).
  double OpenUniform() { return (static_cast<double>(gen_() >> 11) + 0.5) * 0x1p-53; }
  double Normal() { return InverseNormalCdf(OpenUniform()); }
  double Exponential(double rate) { return -std::log(OpenUniform()) / rate; }

 private:
  std::mt19937_64 gen_;
};

double Polynomial(const double (&c)[8], double x) {
  double v = 0;
  for (int i = 7; i >= 0; --i) v = v * x + c[i];
  return v;
}

// A job before its submit time is known.
struct Drawn {
  int32_t gpus = 0;
  bool per_node_form = false;  // -N1 --gpus-per-node=k rather than --gpus=k
  int64_t run = 0;
  int64_t estimate = 0;
};

// Helios Venus's virtual clusters and their GPU quotas: the mean over the 181 days of
// helios-venus/cluster_gpu_number.csv (Hu et al., SC'21; CC BY 4.0), rounded; the two whose
// mean rounds to 0 are left out.
struct VirtualCluster {
  const char* name;
  int64_t gpus;
};
constexpr VirtualCluster kVenusVcs[] = {
    {"vcEwI", 72}, {"vcWoR", 61}, {"vcHvQ", 64}, {"vcvGl", 153}, {"vc8Gr", 48}, {"vcKeu", 44},
    {"vcKrE", 32}, {"vcYVn", 38}, {"vchbv", 64}, {"vcP2J", 26},  {"vcLTP", 64}, {"vcJLV", 14},
    {"vchA3", 19}, {"vcJkd", 13}, {"vcsBT", 52}, {"vcJsw", 57},  {"vcefl", 80}, {"vcvlY", 54},
    {"vcOhe", 30}, {"vccJW", 17}, {"vc6YE", 7},  {"vcgkz", 8},   {"vcbIW", 7},
};
constexpr int kUsersPerVc = 4;
// How far a virtual cluster's demand strays from its quota: a log-normal factor.
constexpr double kVcDemandSigma = 0.75;

// Charges each job to a virtual cluster and one of its users, from a random stream of its
// own (the jobs' sizes and times do not change): a VC's part of the jobs is its quota times
// a log-normal factor, so that some ask for more than their quota and some for less, as
// tenants do. The VCs become the workload's accounts, their quotas their shares.
void AssignVirtualClusters(uint64_t seed, GpuWorkload* w) {
  Random rng(seed ^ 0x5643'5643'5643'5643ULL);
  std::vector<double> weight;
  double total = 0;
  for (const VirtualCluster& vc : kVenusVcs) {
    weight.push_back(static_cast<double>(vc.gpus) * std::exp(kVcDemandSigma * rng.Normal()));
    total += weight.back();
    w->accounts.accounts.push_back(
        {.name = vc.name, .parent = "root", .shares = vc.gpus, .limits = {}});
  }
  for (SimJob& job : w->jobs) {
    double u = rng.Uniform() * total;
    size_t k = 0;
    while (k + 1 < weight.size() && u >= weight[k]) u -= weight[k++];
    job.account = kVenusVcs[k].name;
    job.user = StrCat(kVenusVcs[k].name, "-u", static_cast<int>(rng.Uniform() * kUsersPerVc) + 1);
  }
  w->notes.push_back(StrCat("accounts: Helios Venus's ", std::size(kVenusVcs),
                            " virtual clusters, shares their mean "
                            "GPU quotas, ",
                            kUsersPerVc,
                            " users each; each VC's part of the jobs is its quota times "
                            "a log-normal factor (sigma ",
                            kVcDemandSigma, ")"));
}

model::JobShape ShapeFor(const Drawn& d, int32_t gpus_per_node) {
  model::JobShape s;
  const int32_t k = d.gpus;
  if (k > gpus_per_node) {
    // -N k/g --ntasks-per-node=g --gpus-per-node=g -c 16 --mem-per-cpu=4G
    s.min_nodes = s.max_nodes = k / gpus_per_node;
    s.ntasks = k;
    s.ntasks_per_node = gpus_per_node;
    s.cpus_per_task = kCpusPerGpu;
    s.gpus_per_node = gpus_per_node;
    s.mem_per_cpu_mb = kMemPerCpuMb;
  } else if (d.per_node_form) {
    // -N1 --gpus-per-node=k -c 16k --mem=64k G
    s.min_nodes = s.max_nodes = 1;
    s.ntasks = 1;
    s.cpus_per_task = kCpusPerGpu * k;
    s.gpus_per_node = k;
    s.mem_per_node_mb = kMemPerCpuMb * kCpusPerGpu * k;
  } else {
    // --gpus=k -c 16 --mem-per-cpu=4G: k one-GPU tasks on 1 to k nodes
    s.min_nodes = 1;
    s.max_nodes = k;
    s.ntasks = k;
    s.cpus_per_task = kCpusPerGpu;
    s.gpus_per_task = 1;
    s.mem_per_cpu_mb = kMemPerCpuMb;
  }
  return s;
}

}  // namespace

double InverseNormalCdf(double p) {
  static constexpr double kA[8] = {
      3.387132872796366608,  133.14166789178437745, 1971.5909503065514427, 13731.693765509461125,
      45921.953931549871457, 67265.770927008700853, 33430.575583588128105, 2509.0809287301226727};
  static constexpr double kB[8] = {1.0,
                                   42.313330701600911252,
                                   687.1870074920579083,
                                   5394.1960214247511077,
                                   21213.794301586595867,
                                   39307.89580009271061,
                                   28729.085735721942674,
                                   5226.495278852545925};
  static constexpr double kC[8] = {1.42343711074968357734,   4.6303378461565452959,
                                   5.7694972214606914055,    3.64784832476320460504,
                                   1.27045825245236838258,   0.24178072517745061177,
                                   0.0227238449892691845833, 7.7454501427834140764e-4};
  static constexpr double kD[8] = {1.0,
                                   2.05319162663775882187,
                                   1.6763848301838038494,
                                   0.68976733498510000455,
                                   0.14810397642748007459,
                                   0.0151986665636164571966,
                                   5.475938084995344946e-4,
                                   1.05075007164441684324e-9};
  static constexpr double kE[8] = {6.6579046435011037772,     5.4637849111641143699,
                                   1.7848265399172913358,     0.29656057182850489123,
                                   0.026532189526576123093,   0.0012426609473880784386,
                                   2.71155556874348757815e-5, 2.01033439929228813265e-7};
  static constexpr double kF[8] = {1.0,
                                   0.59983220655588793769,
                                   0.13692988092273580531,
                                   0.0148753612908506148525,
                                   7.868691311456132591e-4,
                                   1.8463183175100546818e-5,
                                   1.4215117583164458887e-7,
                                   2.04426310338993978564e-15};
  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q * Polynomial(kA, r) / Polynomial(kB, r);
  }
  double r = std::sqrt(-std::log(q < 0 ? p : 1 - p));
  double v;
  if (r <= 5) {
    r -= 1.6;
    v = Polynomial(kC, r) / Polynomial(kD, r);
  } else {
    r -= 5;
    v = Polynomial(kE, r) / Polynomial(kF, r);
  }
  return q < 0 ? -v : v;
}

StatusOr<GpuWorkload> SyntheticWorkload(const SyntheticOptions& opts) {
  const Machine* m = nullptr;
  for (const Machine& candidate : kMachines) {
    if (candidate.kind == opts.kind) m = &candidate;
  }
  if (m == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("unknown synthetic workload kind '", opts.kind, "'; known kinds: dgx, nvl72"));
  }
  if (opts.nodes < 0 || opts.nodes_per_leaf < 0) {
    return absl::InvalidArgumentError(StrCat("the node count (", opts.nodes,
                                             ") and nodes per leaf (", opts.nodes_per_leaf,
                                             ") must be positive, or 0 for the kind's default"));
  }
  const int32_t nodes = opts.nodes > 0 ? opts.nodes : m->default_nodes;
  const int32_t group = opts.nodes_per_leaf > 0 ? opts.nodes_per_leaf : m->default_group;
  if (opts.jobs <= 0) {
    return absl::InvalidArgumentError(StrCat("the job count must be positive, not ", opts.jobs));
  }
  if (!(opts.load > 0) || !std::isfinite(opts.load)) {
    return absl::InvalidArgumentError(
        StrCat("the offered load must be a positive number, not ", opts.load));
  }
  if (m->blocks && nodes % group != 0) {
    return absl::InvalidArgumentError(StrCat(
        m->kind, ": ", nodes, " nodes are not a whole number of blocks of ", group, " nodes"));
  }
  const model::NodeTopology* catalog = model::CatalogTopology(m->catalog);
  if (catalog == nullptr) {
    return absl::InternalError(StrCat("no catalog topology '", m->catalog, "'"));
  }

  GpuWorkload w;
  w.name = StrCat("synthetic-", m->kind, "-seed", opts.seed);

  // The cluster.
  auto topology = std::make_shared<const model::NodeTopology>(*catalog);
  const int32_t gpus_per_node = topology->num_gpus();
  const int32_t cpus_per_node = topology->num_cpus();
  const int width = std::max(3, Digits(nodes));
  for (int32_t i = 0; i < nodes; ++i) {
    model::Node n;
    n.name = StrCat(m->node_prefix, "-", Padded(i + 1, width));
    n.capacity = model::Resources{cpus_per_node, gpus_per_node, m->mem_mb};
    n.gpu_type = topology->gpus.empty() ? "" : topology->gpus[0].type;
    if (!n.gpu_type.empty()) n.features.push_back(n.gpu_type);
    n.sockets = std::max(1, topology->sockets);
    n.threads_per_core = m->threads_per_core;
    n.cores_per_socket = std::max(1, cpus_per_node / (n.sockets * m->threads_per_core));
    n.topology = topology;
    w.cluster.nodes.push_back(std::move(n));
  }
  model::Partition part;
  part.name = "gpu";
  part.is_default = true;
  part.max_time_s = kSyntheticRunCapS;
  for (int32_t i = 0; i < nodes; ++i) part.nodes.push_back(i);
  w.cluster.partitions.push_back(std::move(part));

  const int32_t groups = (nodes + group - 1) / group;
  const int group_width = std::max(2, Digits(groups));
  model::ClusterTopology& net = w.cluster.topology;
  net.leaf_of.resize(nodes);
  for (int32_t i = 0; i < nodes; ++i) net.leaf_of[i] = i / group;
  if (m->blocks) {
    net.kind = model::ClusterTopology::Kind::kBlock;
    for (int32_t b = 0; b < groups; ++b) {
      model::Block block;
      block.name = StrCat("block", Padded(b + 1, group_width));
      for (int32_t i = b * group; i < std::min(nodes, (b + 1) * group); ++i) {
        block.nodes.push_back(i);
      }
      net.blocks.push_back(std::move(block));
    }
    net.block_sizes = {group};
  } else {
    net.kind = model::ClusterTopology::Kind::kTree;
    model::Switch spine;
    spine.name = "spine";
    spine.level = 1;
    for (int32_t l = 0; l < groups; ++l) {
      model::Switch leaf;
      leaf.name = StrCat("leaf", Padded(l + 1, group_width));
      leaf.parent = groups;
      for (int32_t i = l * group; i < std::min(nodes, (l + 1) * group); ++i) {
        leaf.nodes.push_back(i);
      }
      net.switches.push_back(std::move(leaf));
      spine.children.push_back(l);
    }
    net.switches.push_back(std::move(spine));
  }

  // The size mix, without sizes larger than the cluster.
  const int64_t total_gpus = int64_t{gpus_per_node} * nodes;
  std::vector<SizeClass> mix;
  std::vector<int32_t> left_out;
  double weight = 0;
  for (const SizeClass& c : m->mix) {
    if (c.gpus > total_gpus) {
      left_out.push_back(c.gpus);
      continue;
    }
    if (c.gpus > gpus_per_node && c.gpus % gpus_per_node != 0) {
      return absl::InternalError(StrCat(m->kind, ": a ", c.gpus, "-GPU job is not a whole ",
                                        "number of ", gpus_per_node, "-GPU nodes"));
    }
    mix.push_back(c);
    weight += c.p;
  }

  // Sizes, request forms, run times and estimates first; arrivals once the work is known.
  Random rng(opts.seed);
  const double mu = std::log(kSyntheticRunMedianS);
  std::vector<Drawn> drawn(opts.jobs);
  int64_t work = 0;  // GPU-seconds
  for (Drawn& d : drawn) {
    double u = rng.Uniform() * weight;
    d.gpus = mix.back().gpus;
    for (const SizeClass& c : mix) {
      if (u < c.p) {
        d.gpus = c.gpus;
        break;
      }
      u -= c.p;
    }
    d.per_node_form = rng.Uniform() < 0.5;
    const double run = std::exp(mu + kSyntheticRunSigma * rng.Normal());
    d.run = std::clamp<int64_t>(std::llround(std::min(run, double(kSyntheticRunCapS))), 1,
                                kSyntheticRunCapS);
    const double limit = static_cast<double>(d.run) * (1 + 2 * rng.Uniform());
    d.estimate =
        std::min<int64_t>(kSyntheticRunCapS,
                          static_cast<int64_t>(std::ceil(limit / kEstimateStepS)) * kEstimateStepS);
    work += int64_t{d.gpus} * d.run;
  }
  const double rate =
      opts.load * static_cast<double>(total_gpus) * opts.jobs / static_cast<double>(work);
  double t = 0;
  for (size_t i = 0; i < drawn.size(); ++i) {
    t += rng.Exponential(rate);
    SimJob job;
    job.id = i + 1;
    job.submit = static_cast<sched::Time>(t);
    job.run = drawn[i].run;
    job.estimate = drawn[i].estimate;
    job.shape = ShapeFor(drawn[i], gpus_per_node);
    w.jobs.push_back(std::move(job));
  }

  AssignVirtualClusters(opts.seed, &w);

  // What the notes report.
  std::vector<int64_t> runs;
  for (const Drawn& d : drawn) runs.push_back(d.run);
  std::nth_element(runs.begin(), runs.begin() + runs.size() / 2, runs.end());
  const int64_t median_run = runs[runs.size() / 2];
  const double mean_gpus = [&] {
    int64_t g = 0;
    for (const Drawn& d : drawn) g += d.gpus;
    return static_cast<double>(g) / opts.jobs;
  }();
  int64_t run_sum = 0;
  for (const Drawn& d : drawn) run_sum += d.run;

  std::string layout = m->blocks ? StrCat("in ", groups, " NVLink blocks of ", group)
                                 : StrCat("under ", groups, " leaf switch", groups == 1 ? "" : "es",
                                          " of ", group, " nodes and one spine");
  w.notes.push_back(StrCat(Grouped(nodes), " ", m->description, " (", Grouped(total_gpus),
                           " GPUs, ", gpus_per_node, " per node) ", layout));
  w.notes.push_back(StrCat(Grouped(opts.jobs), " GPU jobs: ", Fixed(mean_gpus, 2),
                           " GPUs per job on average, median run time ", median_run, " s, mean ",
                           Grouped(run_sum / opts.jobs),
                           " s, at most 7 days (Helios: 3.72 GPUs, 206 s, 6,652 s)"));
  w.notes.push_back(StrCat("Poisson arrivals over ", Fixed(t / 86400, 1),
                           " days at an offered load of ", Fixed(opts.load, 2)));
  if (t < 4 * kSyntheticRunCapS) {
    w.notes.push_back(
        "arrivals span less than 4 weeks while runs last up to 7 days: the cluster fills up "
        "over the first week and is less busy than the offered load (more jobs span longer)");
  }
  w.notes.push_back(
      "time limits: the run time times a uniform factor in [1, 3], rounded up to 10 minutes, "
      "at most 7 days");
  if (!left_out.empty()) {
    std::string sizes;
    for (int32_t g : left_out) sizes += StrCat(sizes.empty() ? "" : ", ", g);
    w.notes.push_back(StrCat("job sizes larger than the cluster's ", total_gpus,
                             " GPUs left out of the mix: ", sizes, " GPUs"));
  }
  return w;
}

}  // namespace loom::sim
