#include "policy/job_desc.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "core/strings.h"
#include "core/time_format.h"
#include "model/binding.h"
#include "policy/lua_script.h"

namespace loom::policy {
namespace {

using core::StrCat;
using model::JobRequest;
using model::TypedCount;
using nlohmann::json;

constexpr int64_t kMemPerCpu = std::numeric_limits<int64_t>::min();  // bit 63

Status Bad(std::string_view field, const json& v, std::string_view takes) {
  return absl::InvalidArgumentError(StrCat("job_submit.lua set job_desc.", field, " to ",
                                           v.dump(-1, ' ', false, json::error_handler_t::replace),
                                           "; it takes ", takes));
}

json OptString(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

StatusOr<std::string> AsString(std::string_view field, const json& v) {
  if (v.is_null()) return std::string();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return Bad(field, v, "text, or nil");
}

// A whole number in [0, max], or nullopt for nil and `no_val`.
StatusOr<std::optional<int64_t>> AsCount(std::string_view field, const json& v, int64_t no_val,
                                         int64_t max) {
  if (v.is_null()) return std::optional<int64_t>();
  std::optional<int64_t> n;
  if (v.is_number_integer()) {
    n = v.get<int64_t>();
  } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
             std::abs(v.get<double>()) < 9.0e15) {
    n = static_cast<int64_t>(v.get<double>());
  }
  if (n && *n == no_val) return std::optional<int64_t>();
  if (!n || *n < 0 || *n > max) {
    return Bad(field, v, StrCat("a whole number from 0 to ", max, ", or nil"));
  }
  return n;
}

// An optional count as job_desc shows it: the value, or `no_val` when not given.
template <typename T>
json Count(const std::optional<T>& v, int64_t no_val) {
  return v ? json(static_cast<int64_t>(*v)) : json(no_val);
}

template <typename T>
Status SetCount(std::string_view field, const json& v, int64_t no_val, std::optional<T>* out) {
  constexpr int64_t kMax = std::numeric_limits<T>::max();
  ASSIGN_OR_RETURN(std::optional<int64_t> n, AsCount(field, v, no_val, std::min(kMax, no_val - 1)));
  *out = n ? std::optional<T>(static_cast<T>(*n)) : std::nullopt;
  return absl::OkStatus();
}

// GPUs and other GRES as TRES strings: "gres:gpu:a100:2,gres:nic:1".
std::string TresString(const std::vector<const std::vector<TypedCount>*>& lists) {
  std::string out;
  for (const std::vector<TypedCount>* list : lists) {
    for (const TypedCount& c : *list) {
      if (!out.empty()) out += ',';
      out += StrCat("gres:", c.name, c.type.empty() ? "" : ":", c.type, ":", c.count);
    }
  }
  return out;
}

// Reads "gres:gpu:a100:2", "gres/gpu:2" or "gpu:2" entries, comma-separated.
StatusOr<std::vector<TypedCount>> ParseTres(std::string_view field, const json& v) {
  ASSIGN_OR_RETURN(std::string text, AsString(field, v));
  std::vector<TypedCount> out;
  for (std::string_view entry : core::Split(text, ',')) {
    entry = core::Trim(entry);
    if (entry.empty()) continue;
    if (entry.starts_with("gres:") || entry.starts_with("gres/")) entry.remove_prefix(5);
    std::vector<std::string_view> parts = core::Split(entry, ':');
    std::optional<int64_t> n = parts.size() >= 2 ? core::ParseInt(parts.back()) : std::nullopt;
    if (parts.size() > 3 || !n || *n < 1 || parts[0].empty()) {
      return Bad(field, v, "GRES as \"gres:NAME[:TYPE]:COUNT\", comma-separated");
    }
    out.push_back(TypedCount{std::string(parts[0]),
                             parts.size() == 3 ? std::string(parts[1]) : std::string(), *n});
  }
  return out;
}

StatusOr<std::vector<TypedCount>> ParseGpus(std::string_view field, const json& v) {
  ASSIGN_OR_RETURN(std::vector<TypedCount> list, ParseTres(field, v));
  for (const TypedCount& c : list) {
    if (c.name != "gpu") return Bad(field, v, "GPUs only (\"gres:gpu[:TYPE]:COUNT\")");
  }
  return list;
}

// tres_per_node: --gpus-per-node and --gres, per node.
json TresPerNode(const JobRequest& r) { return OptString(TresString({&r.gpus_per_node, &r.gres})); }
Status SetTresPerNode(std::string_view f, const json& v, JobRequest* r) {
  ASSIGN_OR_RETURN(r->gres, ParseTres(f, v));
  r->gpus_per_node.clear();
  return absl::OkStatus();
}

struct Field {
  const char* name;
  bool shape;  // the job's shape derives from it
  json (*get)(const JobRequest&);
  Status (*set)(std::string_view field, const json& v, JobRequest* r);  // null: read-only
};

#define LOOM_STRING_FIELD(lua_name, member)                                   \
  Field {                                                                     \
    lua_name, false, [](const JobRequest& r) { return OptString(r.member); }, \
        [](std::string_view f, const json& v, JobRequest* r) -> Status {      \
          ASSIGN_OR_RETURN(r->member, AsString(f, v));                        \
          return absl::OkStatus();                                            \
        }                                                                     \
  }
#define LOOM_COUNT_FIELD(lua_name, member, no_val, shape)                         \
  Field {                                                                         \
    lua_name, shape, [](const JobRequest& r) { return Count(r.member, no_val); }, \
        [](std::string_view f, const json& v, JobRequest* r) {                    \
          return SetCount(f, v, no_val, &r->member);                              \
        }                                                                         \
  }

const std::vector<Field>& Fields() {
  static const std::vector<Field> kFields = {
      LOOM_STRING_FIELD("account", account),
      LOOM_STRING_FIELD("comment", comment),
      LOOM_STRING_FIELD("name", name),
      LOOM_STRING_FIELD("qos", qos),
      LOOM_STRING_FIELD("reservation", reservation),
      LOOM_STRING_FIELD("wckey", wckey),
      LOOM_STRING_FIELD("licenses", licenses),
      LOOM_STRING_FIELD("features", constraint),
      LOOM_STRING_FIELD("work_dir", work_dir),
      LOOM_STRING_FIELD("std_out", stdout_pattern),
      LOOM_STRING_FIELD("std_err", stderr_pattern),
      LOOM_STRING_FIELD("std_in", stdin_pattern),
      LOOM_STRING_FIELD("req_nodes", nodelist),
      LOOM_STRING_FIELD("exc_nodes", exclude),
      Field{"partition", false,
            [](const JobRequest& r) {
              return r.partitions.empty() ? json(nullptr) : json(core::Join(r.partitions, ","));
            },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              ASSIGN_OR_RETURN(std::string text, AsString(f, v));
              r->partitions.clear();
              for (std::string_view p : core::Split(text, ',')) {
                if (!core::Trim(p).empty()) r->partitions.emplace_back(core::Trim(p));
              }
              return absl::OkStatus();
            }},
      Field{"time_limit", false,
            [](const JobRequest& r) {
              if (!r.time_limit_s) return json(kNoVal);
              if (*r.time_limit_s == core::kUnlimitedSeconds) return json(kInfinite);
              return json((*r.time_limit_s + 59) / 60);
            },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              if (v.is_number_integer() && v.get<int64_t>() == kInfinite) {
                r->time_limit_s = core::kUnlimitedSeconds;
                return absl::OkStatus();
              }
              ASSIGN_OR_RETURN(std::optional<int64_t> m, AsCount(f, v, kNoVal, kNoVal - 1));
              r->time_limit_s = m ? std::optional<int64_t>(*m * 60) : std::nullopt;
              return absl::OkStatus();
            }},
      Field{"time_min", false,
            [](const JobRequest& r) {
              return r.time_min_s ? json((*r.time_min_s + 59) / 60) : json(kNoVal);
            },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              ASSIGN_OR_RETURN(std::optional<int64_t> m, AsCount(f, v, kNoVal, kNoVal - 1));
              r->time_min_s = m ? std::optional<int64_t>(*m * 60) : std::nullopt;
              return absl::OkStatus();
            }},
      LOOM_COUNT_FIELD("min_nodes", min_nodes, kNoVal, true),
      LOOM_COUNT_FIELD("max_nodes", max_nodes, kNoVal, true),
      LOOM_COUNT_FIELD("num_tasks", ntasks, kNoVal, true),
      LOOM_COUNT_FIELD("min_cpus", mincpus, kNoVal, false),
      LOOM_COUNT_FIELD("ntasks_per_node", ntasks_per_node, kNoVal16, true),
      LOOM_COUNT_FIELD("cpus_per_task", cpus_per_task, kNoVal16, true),
      LOOM_COUNT_FIELD("ntasks_per_core", ntasks_per_core, kNoVal16, false),
      LOOM_COUNT_FIELD("ntasks_per_socket", ntasks_per_socket, kNoVal16, false),
      LOOM_COUNT_FIELD("ntasks_per_gpu", ntasks_per_gpu, kNoVal16, false),
      LOOM_COUNT_FIELD("priority", priority, kNoVal, false),
      Field{"threads_per_core", false,
            [](const JobRequest& r) {
              const int32_t n = model::StepThreadsPerCore(r.hint, r.threads_per_core);
              return n > 0 ? json(n) : json(kNoVal16);
            },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              RETURN_IF_ERROR(SetCount(f, v, kNoVal16, &r->threads_per_core));
              if (!r->threads_per_core && model::StepThreadsPerCore(r->hint, std::nullopt) > 0) {
                r->hint.clear();  // unset: every thread, whatever --hint said
              }
              return absl::OkStatus();
            }},
      Field{"shared", true,
            [](const JobRequest& r) {
              switch (r.sharing) {
                case model::SharingMode::kExclusive:
                  return json(0);
                case model::SharingMode::kOversubscribe:
                  return json(1);
                case model::SharingMode::kExclusiveUser:
                  return json(2);
                case model::SharingMode::kExclusiveMcs:
                  return json(3);
                case model::SharingMode::kDefault:
                  break;
              }
              return json(kNoVal16);
            },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              ASSIGN_OR_RETURN(std::optional<int64_t> n, AsCount(f, v, kNoVal16, 3));
              static constexpr model::SharingMode kModes[] = {
                  model::SharingMode::kExclusive, model::SharingMode::kOversubscribe,
                  model::SharingMode::kExclusiveUser, model::SharingMode::kExclusiveMcs};
              r->sharing = n ? kModes[*n] : model::SharingMode::kDefault;
              return absl::OkStatus();
            }},
      Field{"pn_min_memory", true,
            [](const JobRequest& r) {
              if (r.mem_per_cpu_mb) return json(*r.mem_per_cpu_mb | kMemPerCpu);
              return r.mem_per_node_mb ? json(*r.mem_per_node_mb) : json(kNoVal64);
            },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              if (v.is_number_integer() && v.get<int64_t>() < 0 && v.get<int64_t>() != kNoVal64) {
                const int64_t mb = v.get<int64_t>() & ~kMemPerCpu;
                r->mem_per_cpu_mb = mb;
                r->mem_per_node_mb.reset();
                return absl::OkStatus();
              }
              ASSIGN_OR_RETURN(std::optional<int64_t> mb, AsCount(f, v, kNoVal64, INT64_MAX / 2));
              r->mem_per_node_mb = mb;
              if (mb) r->mem_per_cpu_mb.reset();
              return absl::OkStatus();
            }},
      Field{"min_mem_per_node", true,
            [](const JobRequest& r) { return Count(r.mem_per_node_mb, kNoVal64); },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              RETURN_IF_ERROR(SetCount(f, v, kNoVal64, &r->mem_per_node_mb));
              if (r->mem_per_node_mb) r->mem_per_cpu_mb.reset();
              return absl::OkStatus();
            }},
      Field{"min_mem_per_cpu", true,
            [](const JobRequest& r) { return Count(r.mem_per_cpu_mb, kNoVal64); },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              RETURN_IF_ERROR(SetCount(f, v, kNoVal64, &r->mem_per_cpu_mb));
              if (r->mem_per_cpu_mb) r->mem_per_node_mb.reset();
              return absl::OkStatus();
            }},
      Field{"tres_per_node", true, TresPerNode, SetTresPerNode},
      Field{"gres", true, TresPerNode, SetTresPerNode},  // 22.05's older name for it
      Field{"tres_per_job", true,
            [](const JobRequest& r) { return OptString(TresString({&r.gpus})); },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              ASSIGN_OR_RETURN(r->gpus, ParseGpus(f, v));
              return absl::OkStatus();
            }},
      Field{"tres_per_task", true,
            [](const JobRequest& r) { return OptString(TresString({&r.gpus_per_task})); },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              ASSIGN_OR_RETURN(r->gpus_per_task, ParseGpus(f, v));
              return absl::OkStatus();
            }},
      Field{"tres_per_socket", true,
            [](const JobRequest& r) { return OptString(TresString({&r.gpus_per_socket})); },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              ASSIGN_OR_RETURN(r->gpus_per_socket, ParseGpus(f, v));
              return absl::OkStatus();
            }},
      Field{"tres_bind", false,
            [](const JobRequest& r) {
              return r.gpu_bind.empty() ? json(nullptr) : json(StrCat("gres/gpu:", r.gpu_bind));
            },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              ASSIGN_OR_RETURN(std::string text, AsString(f, v));
              std::string_view bind = text;
              for (std::string_view prefix : {"gres/gpu:", "gres:gpu:", "gpu:"}) {
                if (bind.starts_with(prefix)) {
                  bind.remove_prefix(prefix.size());
                  break;
                }
              }
              if (!bind.empty() && !model::ParseGpuBind(bind).ok()) {
                return Bad(f, v, "\"gres/gpu:\" and a --gpu-bind value, such as closest");
              }
              r->gpu_bind = std::string(bind);
              return absl::OkStatus();
            }},
      Field{"begin_time", false, [](const JobRequest& r) { return json(r.begin_time); },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              ASSIGN_OR_RETURN(std::optional<int64_t> t, AsCount(f, v, -1, INT64_MAX / 2));
              r->begin_time = t.value_or(0);
              return absl::OkStatus();
            }},
      Field{
          "requeue", false,
          [](const JobRequest& r) { return r.requeue ? json(*r.requeue ? 1 : 0) : json(kNoVal16); },
          [](std::string_view f, const json& v, JobRequest* r) -> Status {
            ASSIGN_OR_RETURN(std::optional<int64_t> n, AsCount(f, v, kNoVal16, 1));
            r->requeue = n ? std::optional<bool>(*n == 1) : std::nullopt;
            return absl::OkStatus();
          }},
      Field{"contiguous", false, [](const JobRequest& r) { return json(r.contiguous ? 1 : 0); },
            [](std::string_view f, const json& v, JobRequest* r) -> Status {
              ASSIGN_OR_RETURN(std::optional<int64_t> n, AsCount(f, v, kNoVal16, 1));
              r->contiguous = n.value_or(0) == 1;
              return absl::OkStatus();
            }},
      // Read-only: what the submission is, not how it asks to run.
      Field{"script", false, [](const JobRequest& r) { return OptString(r.script); }, nullptr},
      Field{"argv", false,
            [](const JobRequest& r) {
              json a = json::array();
              if (!r.command.empty()) a.push_back(r.command);
              for (const std::string& s : r.script_args) a.push_back(s);
              return a;
            },
            nullptr},
      Field{"environment", false,
            [](const JobRequest& r) {
              json env = json::object();
              for (const auto& [k, v] : r.environment) env[k] = v;
              return env;
            },
            nullptr},
      Field{"array_inx", false,
            [](const JobRequest& r) { return r.array ? json(r.array->ToString()) : json(nullptr); },
            nullptr},
      Field{"dependency", false,
            [](const JobRequest& r) { return OptString(r.dependency.ToString()); }, nullptr},
      Field{"alloc_node", false, [](const JobRequest& r) { return OptString(r.alloc_node); },
            nullptr},
  };
  return kFields;
}

#undef LOOM_STRING_FIELD
#undef LOOM_COUNT_FIELD

}  // namespace

json JobDescOf(const JobRequest& r, const Submitter& who) {
  json d = json::object();
  for (const Field& f : Fields()) d[f.name] = f.get(r);
  d["user_id"] = who.uid;
  d["group_id"] = who.gid;
  d["user_name"] = who.user;
  return d;
}

Status ApplyJobDesc(const json& before, const json& after, JobRequest* r,
                    std::vector<std::string>* ignored) {
  bool shape = false;
  for (const Field& f : Fields()) {
    const json b = before.value(f.name, json(nullptr));
    const json a = after.is_object() ? after.value(f.name, json(nullptr)) : json(nullptr);
    // An empty table comes back from Lua as an object whatever it went in as.
    const bool both_empty = (a.is_array() || a.is_object()) && (b.is_array() || b.is_object()) &&
                            a.empty() && b.empty();
    if (a == b || both_empty) continue;
    if (f.set == nullptr) {
      ignored->push_back(f.name);
      continue;
    }
    RETURN_IF_ERROR(f.set(f.name, a, r));
    shape = shape || f.shape;
  }
  if (after.is_object()) {
    for (const auto& [key, value] : after.items()) {
      if (before.contains(key)) {
        if (value != before[key] && (key == "user_id" || key == "group_id" || key == "user_name")) {
          ignored->push_back(key);
        }
        continue;
      }
      ignored->push_back(key);
    }
  }
  if (shape) {
    std::vector<std::string> warnings;
    model::DeriveShape(r, "job_submit.lua", &warnings);
  }
  return absl::OkStatus();
}

json PartitionListOf(const conf::ClusterConfig& cfg) {
  auto minutes = [](int64_t s) {
    return s == core::kUnlimitedSeconds ? json(kInfinite) : json(s / 60);
  };
  json list = json::object();
  for (const conf::PartitionConfig& p : cfg.partitions) {
    json t = json::object();
    t["name"] = p.name;
    t["nodes"] = core::Join(p.nodes, ",");
    t["total_nodes"] = p.nodes.size();
    t["max_time"] = minutes(p.max_time_s);
    t["default_time"] =
        p.default_time_s == conf::kTimeNotSet ? json(kNoVal) : minutes(p.default_time_s);
    t["max_nodes"] = p.max_nodes == conf::kUnlimitedNodes ? json(kInfinite) : json(p.max_nodes);
    t["min_nodes"] = p.min_nodes;
    t["priority_tier"] = p.priority_tier;
    t["priority_job_factor"] = p.priority_job_factor;
    t["flag_default"] = p.is_default ? 1 : 0;
    t["state_up"] = p.state == conf::PartitionState::kUp ? 1 : 0;
    t["qos"] = OptString(p.qos);
    t["allow_accounts"] = OptString(core::Join(p.allow_accounts, ","));
    list[p.name] = std::move(t);
  }
  return list;
}

}  // namespace loom::policy
