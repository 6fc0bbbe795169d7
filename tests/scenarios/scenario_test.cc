// Scenario tests: small hand-made clusters and job sets (tests/scenarios/fixtures/*.scn)
// with the schedule each policy must produce, replayed through the simulator.
//
// Fixture lines:
//   machine N                          one pool of N processors
//   node NAME cpus= mem= gpus= gputype= weight= features=a,b
//   option bf_interval= bf_resolution= bf_window= order=queue|sjf
//   job NAME submit= run= [est=] [procs=] [nodes=] [ntasks=] [cpt=] [gpus_per_node=]
//       [mem=] [constraint=] [exclusive]
//   expect POLICY NAME=start ...       start times
//   expect-nodes POLICY NAME=n1,n2 ... nodes chosen
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "core/strings.h"
#include "sched/backfill/policy.h"
#include "sim/simulator.h"

namespace loom {
namespace {

struct Scenario {
  sched::Cluster cluster;
  sched::PolicyOptions opts;
  std::vector<sim::SimJob> jobs;
  std::map<std::string, sched::JobId> ids;
  std::vector<std::string> names;
  std::map<std::string, std::map<std::string, int64_t>> expect;
  std::map<std::string, std::map<std::string, std::string>> expect_nodes;
};

std::map<std::string, std::string> Keys(std::istringstream& in) {
  std::map<std::string, std::string> kv;
  std::string tok;
  while (in >> tok) {
    size_t eq = tok.find('=');
    if (eq == std::string::npos) {
      kv[tok] = "";
    } else {
      kv[tok.substr(0, eq)] = tok.substr(eq + 1);
    }
  }
  return kv;
}

int64_t Int(const std::map<std::string, std::string>& kv, const std::string& k, int64_t def) {
  auto it = kv.find(k);
  return it == kv.end() ? def : *core::ParseInt(it->second);
}

Scenario Load(const std::filesystem::path& path) {
  Scenario s;
  sched::Cluster& c = s.cluster;
  c.partitions.push_back(model::Partition{.name = "main", .is_default = true});
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "machine") {
      int32_t n;
      in >> n;
      c.nodes.push_back(model::Node{.name = "pool", .capacity = {.cpus = n}});
    } else if (kind == "node") {
      model::Node node;
      in >> node.name;
      auto kv = Keys(in);
      node.capacity.cpus = static_cast<int32_t>(Int(kv, "cpus", 1));
      node.capacity.mem_mb = Int(kv, "mem", 0);
      node.capacity.gpus = static_cast<int32_t>(Int(kv, "gpus", 0));
      node.gpu_type = kv["gputype"];
      node.weight = static_cast<uint32_t>(Int(kv, "weight", 1));
      for (auto f : core::Split(kv["features"], ',')) {
        if (!f.empty()) node.features.emplace_back(f);
      }
      c.nodes.push_back(node);
    } else if (kind == "option") {
      auto kv = Keys(in);
      s.opts.bf_interval_s = Int(kv, "bf_interval", s.opts.bf_interval_s);
      s.opts.bf_resolution_s = Int(kv, "bf_resolution", s.opts.bf_resolution_s);
      s.opts.bf_window_s = Int(kv, "bf_window", s.opts.bf_window_s);
      if (kv["order"] == "sjf") s.opts.order = sched::BackfillOrder::kShortestFirst;
    } else if (kind == "job") {
      sim::SimJob j;
      std::string name;
      in >> name;
      auto kv = Keys(in);
      j.id = s.jobs.size() + 1;
      j.submit = Int(kv, "submit", 0);
      j.run = Int(kv, "run", 1);
      j.estimate = Int(kv, "est", j.run);
      j.shape.ntasks = static_cast<int32_t>(Int(kv, "procs", Int(kv, "ntasks", 1)));
      j.shape.min_nodes = j.shape.max_nodes = static_cast<int32_t>(Int(kv, "nodes", 1));
      j.shape.cpus_per_task = static_cast<int32_t>(Int(kv, "cpt", 1));
      j.shape.gpus_per_node = static_cast<int32_t>(Int(kv, "gpus_per_node", 0));
      j.shape.mem_per_node_mb = Int(kv, "mem", 0);
      j.shape.exclusive = kv.count("exclusive") > 0;
      j.constraint = kv["constraint"];
      s.ids[name] = j.id;
      s.names.push_back(name);
      s.jobs.push_back(j);
    } else if (kind == "expect" || kind == "expect-nodes") {
      std::string policy;
      in >> policy;
      for (auto& [k, v] : Keys(in)) {
        if (kind == "expect") {
          s.expect[policy][k] = *core::ParseInt(v);
        } else {
          s.expect_nodes[policy][k] = v;
        }
      }
    }
  }
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    c.partitions[0].nodes.push_back(static_cast<int32_t>(i));
  }
  return s;
}

class ScenarioTest : public testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, EveryPolicyProducesTheGoldenSchedule) {
  Scenario s = Load(GetParam());
  ASSERT_FALSE(s.expect.empty()) << "fixture has no expectations";
  for (const auto& [policy_name, starts] : s.expect) {
    SCOPED_TRACE(policy_name);
    auto policy = sched::MakePolicy(policy_name, s.opts);
    ASSERT_TRUE(policy.ok());
    auto result = sim::Simulate(s.cluster, s.jobs, **policy, {});
    ASSERT_TRUE(result.ok()) << result.status();
    std::map<sched::JobId, const sim::JobRecord*> by_id;
    for (const auto& r : result->jobs) by_id[r.id] = &r;
    for (const auto& [name, start] : starts) {
      ASSERT_TRUE(s.ids.count(name)) << name;
      EXPECT_EQ(by_id[s.ids[name]]->start, start) << "job " << name;
    }
  }
}

TEST_P(ScenarioTest, NodesChosenAsExpected) {
  Scenario s = Load(GetParam());
  for (const auto& [policy_name, nodes] : s.expect_nodes) {
    SCOPED_TRACE(policy_name);
    // Record allocations by replaying passes through a policy wrapper.
    class Recorder : public sched::Policy {
     public:
      Recorder(std::unique_ptr<sched::Policy> inner, const sched::Cluster& c,
               std::map<sched::JobId, std::string>* out)
          : inner_(std::move(inner)), cluster_(c), out_(out) {}
      std::string_view name() const override { return inner_->name(); }
      int64_t periodic_interval() const override { return inner_->periodic_interval(); }
      void Pass(const sched::PassInput& in, sched::PassOutput* o) override {
        inner_->Pass(in, o);
        for (const auto& st : o->starts) {
          std::string names;
          for (const auto& a : st.alloc) {
            names += (names.empty() ? "" : ",") + cluster_.nodes[a.node].name;
          }
          (*out_)[in.pending[st.pending_index].id] = names;
        }
      }

     private:
      std::unique_ptr<sched::Policy> inner_;
      const sched::Cluster& cluster_;
      std::map<sched::JobId, std::string>* out_;
    };
    std::map<sched::JobId, std::string> chosen;
    Recorder rec(*sched::MakePolicy(policy_name, s.opts), s.cluster, &chosen);
    auto result = sim::Simulate(s.cluster, s.jobs, rec, {});
    ASSERT_TRUE(result.ok()) << result.status();
    for (const auto& [name, want] : nodes) EXPECT_EQ(chosen[s.ids[name]], want) << name;
  }
}

std::vector<std::string> Fixtures() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(LOOM_SOURCE_DIR) / "tests/scenarios/fixtures")) {
    if (e.path().extension() == ".scn") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ScenarioTest, testing::ValuesIn(Fixtures()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

}  // namespace
}  // namespace loom
