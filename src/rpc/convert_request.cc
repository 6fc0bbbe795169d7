// model::JobRequest <-> v1::JobSpec: a submission on the wire.
#include <optional>
#include <utility>

#include "core/strings.h"
#include "rpc/convert.h"

namespace loom::rpc {
namespace {

using core::StrCat;
using google::protobuf::RepeatedPtrField;

v1::Dependency::Kind KindOf(model::DependencyType t) {
  switch (t) {
    case model::DependencyType::kAfter:
      return v1::Dependency::AFTER;
    case model::DependencyType::kAfterAny:
      return v1::Dependency::AFTER_ANY;
    case model::DependencyType::kAfterOk:
      return v1::Dependency::AFTER_OK;
    case model::DependencyType::kAfterNotOk:
      return v1::Dependency::AFTER_NOT_OK;
    case model::DependencyType::kAfterCorr:
      return v1::Dependency::AFTER_CORR;
    case model::DependencyType::kAfterBurstBuffer:
      return v1::Dependency::AFTER_BURST_BUFFER;
    case model::DependencyType::kSingleton:
      return v1::Dependency::SINGLETON;
  }
  return v1::Dependency::AFTER_ANY;
}

std::optional<model::DependencyType> TypeOf(v1::Dependency::Kind k) {
  switch (k) {
    case v1::Dependency::AFTER:
      return model::DependencyType::kAfter;
    case v1::Dependency::AFTER_ANY:
      return model::DependencyType::kAfterAny;
    case v1::Dependency::AFTER_OK:
      return model::DependencyType::kAfterOk;
    case v1::Dependency::AFTER_NOT_OK:
      return model::DependencyType::kAfterNotOk;
    case v1::Dependency::AFTER_CORR:
      return model::DependencyType::kAfterCorr;
    case v1::Dependency::AFTER_BURST_BUFFER:
      return model::DependencyType::kAfterBurstBuffer;
    case v1::Dependency::SINGLETON:
      return model::DependencyType::kSingleton;
    default:
      return std::nullopt;
  }
}

void CountsToWire(const std::vector<model::TypedCount>& in, RepeatedPtrField<v1::TypedCount>* out) {
  for (const model::TypedCount& c : in) {
    v1::TypedCount* w = out->Add();
    w->set_name(c.name);
    w->set_type(c.type);
    w->set_count(c.count);
  }
}

std::vector<model::TypedCount> CountsFromWire(const RepeatedPtrField<v1::TypedCount>& in) {
  std::vector<model::TypedCount> out;
  out.reserve(in.size());
  for (const v1::TypedCount& w : in)
    out.push_back(model::TypedCount{w.name(), w.type(), w.count()});
  return out;
}

v1::JobSpec::Sharing SharingToWire(model::SharingMode m) {
  switch (m) {
    case model::SharingMode::kDefault:
      return v1::JobSpec::SHARING_DEFAULT;
    case model::SharingMode::kExclusive:
      return v1::JobSpec::SHARING_EXCLUSIVE;
    case model::SharingMode::kExclusiveUser:
      return v1::JobSpec::SHARING_EXCLUSIVE_USER;
    case model::SharingMode::kExclusiveMcs:
      return v1::JobSpec::SHARING_EXCLUSIVE_MCS;
    case model::SharingMode::kOversubscribe:
      return v1::JobSpec::SHARING_OVERSUBSCRIBE;
  }
  return v1::JobSpec::SHARING_DEFAULT;
}

v1::JobSpec::OpenMode OpenModeToWire(model::OpenMode m) {
  switch (m) {
    case model::OpenMode::kDefault:
      return v1::JobSpec::OPEN_DEFAULT;
    case model::OpenMode::kAppend:
      return v1::JobSpec::OPEN_APPEND;
    case model::OpenMode::kTruncate:
      return v1::JobSpec::OPEN_TRUNCATE;
  }
  return v1::JobSpec::OPEN_DEFAULT;
}

v1::ExportPolicy::Mode ExportModeToWire(model::ExportPolicy::Mode m) {
  switch (m) {
    case model::ExportPolicy::Mode::kAll:
      return v1::ExportPolicy::ALL;
    case model::ExportPolicy::Mode::kNone:
      return v1::ExportPolicy::NONE;
    case model::ExportPolicy::Mode::kList:
      return v1::ExportPolicy::LIST;
  }
  return v1::ExportPolicy::ALL;
}

template <typename T, typename Set>
void SetIf(const std::optional<T>& v, Set set) {
  if (v) set(*v);
}

}  // namespace

void FillSpec(const model::JobRequest& r, bool with_script, bool with_environment, v1::JobSpec* s) {
  s->set_name(r.name);
  std::string joined;
  for (const std::string& p : r.partitions) {
    if (!joined.empty()) joined += ',';
    joined += p;
    s->add_partitions(p);
  }
  s->set_partition(joined);
  s->set_account(r.account);
  s->set_qos(r.qos);
  s->set_reservation(r.reservation);
  s->set_wckey(r.wckey);
  s->set_comment(r.comment);
  s->set_licenses(r.licenses);
  SetIf(r.uid, [&](uint32_t v) { s->set_uid(v); });
  SetIf(r.gid, [&](uint32_t v) { s->set_gid(v); });

  SetIf(r.time_limit_s, [&](int64_t v) { s->set_time_limit_s(v); });
  SetIf(r.time_min_s, [&](int64_t v) { s->set_time_min_s(v); });
  s->set_begin_time(r.begin_time);
  s->set_deadline(r.deadline);

  const model::JobShape& sh = r.shape;
  s->set_min_nodes(sh.min_nodes);
  s->set_max_nodes(sh.max_nodes);
  s->set_ntasks(sh.ntasks);
  s->set_ntasks_per_node(sh.ntasks_per_node);
  s->set_cpus_per_task(sh.cpus_per_task);
  s->set_mem_per_node_mb(sh.mem_per_node_mb);
  s->set_mem_per_cpu_mb(sh.mem_per_cpu_mb);
  s->set_mem_per_gpu_mb(sh.mem_per_gpu_mb);
  s->set_gpus_per_node(sh.gpus_per_node);
  s->set_gpus_per_task(sh.gpus_per_task);
  s->set_cpus_per_gpu(sh.cpus_per_gpu);
  s->set_gpu_type(sh.gpu_type);
  s->set_exclusive(sh.exclusive);
  s->set_switches(sh.switches);
  s->set_switches_wait_s(sh.switches_wait_s);
  s->set_segment(sh.segment);
  int64_t gpus_total = 0;
  for (const model::TypedCount& c : r.gpus) gpus_total += c.count;
  s->set_gpus_total(static_cast<int32_t>(gpus_total));

  v1::JobSpec::Given* g = s->mutable_given();
  SetIf(r.min_nodes, [&](int32_t v) { g->set_min_nodes(v); });
  SetIf(r.max_nodes, [&](int32_t v) { g->set_max_nodes(v); });
  SetIf(r.ntasks, [&](int32_t v) { g->set_ntasks(v); });
  SetIf(r.ntasks_per_node, [&](int32_t v) { g->set_ntasks_per_node(v); });
  SetIf(r.cpus_per_task, [&](int32_t v) { g->set_cpus_per_task(v); });
  SetIf(r.cpus_per_gpu, [&](int32_t v) { g->set_cpus_per_gpu(v); });
  SetIf(r.mem_per_node_mb, [&](int64_t v) { g->set_mem_per_node_mb(v); });
  SetIf(r.mem_per_cpu_mb, [&](int64_t v) { g->set_mem_per_cpu_mb(v); });
  SetIf(r.mem_per_gpu_mb, [&](int64_t v) { g->set_mem_per_gpu_mb(v); });
  SetIf(r.ntasks_per_core, [&](int32_t v) { g->set_ntasks_per_core(v); });
  SetIf(r.ntasks_per_socket, [&](int32_t v) { g->set_ntasks_per_socket(v); });
  SetIf(r.ntasks_per_gpu, [&](int32_t v) { g->set_ntasks_per_gpu(v); });
  SetIf(r.mincpus, [&](int32_t v) { g->set_mincpus(v); });
  SetIf(r.tmp_mb, [&](int64_t v) { g->set_tmp_mb(v); });
  g->set_switches(r.switches);
  SetIf(r.switches_wait_s, [&](int64_t v) { g->set_switches_wait_s(v); });
  SetIf(r.segment, [&](int32_t v) { g->set_segment(v); });
  CountsToWire(r.gres, g->mutable_gres());
  CountsToWire(r.gpus, g->mutable_gpus());
  CountsToWire(r.gpus_per_node, g->mutable_gpus_per_node());
  CountsToWire(r.gpus_per_task, g->mutable_gpus_per_task());
  CountsToWire(r.gpus_per_socket, g->mutable_gpus_per_socket());

  s->set_sharing(SharingToWire(r.sharing));
  s->set_constraint(r.constraint);
  s->set_prefer(r.prefer);
  s->set_nodelist(r.nodelist);
  s->set_exclude(r.exclude);
  s->set_contiguous(r.contiguous);
  s->set_overcommit(r.overcommit);
  s->set_spread_job(r.spread_job);
  s->set_use_min_nodes(r.use_min_nodes);

  s->set_hold(r.hold);
  s->set_dependency_any(r.dependency.combine == model::Dependency::Combine::kAny);
  for (const model::DependencyClause& c : r.dependency.clauses) {
    v1::Dependency* d = s->add_dependencies();
    d->set_kind(KindOf(c.type));
    if (!c.jobs.empty()) d->set_delay_s(c.jobs.front().delay_s);
    for (const model::DependencyTarget& t : c.jobs) {
      d->add_job_ids(t.job_id);
      v1::DependencyTarget* w = d->add_targets();
      w->set_job_id(t.job_id);
      if (t.array_task) w->set_array_task(*t.array_task);
      w->set_all_tasks(t.all_tasks);
      w->set_delay_s(t.delay_s);
    }
  }
  SetIf(r.kill_on_invalid_dep, [&](bool v) { s->set_kill_on_invalid_dep(v); });
  if (r.array) {
    v1::ArraySpec* a = s->mutable_array();
    for (const model::ArrayRange& range : r.array->ranges) {
      v1::ArrayRange* w = a->add_ranges();
      w->set_first(range.first);
      w->set_last(range.last);
      w->set_step(range.step);
    }
    a->set_max_running(r.array->max_running);
    s->set_array_spec(r.array->ToString());
    s->set_array_throttle(r.array->max_running);
  }
  s->set_nice(r.nice);
  SetIf(r.priority, [&](int64_t v) { s->set_priority(v); });
  SetIf(r.requeue, [&](bool v) { s->set_requeue(v); });
  s->set_no_kill(r.no_kill);
  s->set_signal(r.signal);
  s->set_test_only(r.test_only);

  s->set_work_dir(r.work_dir);
  s->set_std_out(r.stdout_pattern);
  s->set_std_err(r.stderr_pattern);
  s->set_std_in(r.stdin_pattern);
  s->set_open_mode(OpenModeToWire(r.open_mode));
  v1::ExportPolicy* e = s->mutable_export_policy();
  e->set_mode(ExportModeToWire(r.export_policy.mode));
  e->set_with_all(r.export_policy.with_all);
  for (const auto& [name, value] : r.export_policy.vars) {
    v1::ExportPolicy::Var* v = e->add_vars();
    v->set_name(name);
    if (value) v->set_value(*value);
  }
  s->set_get_user_env(r.get_user_env);
  s->set_export_file(r.export_file);
  if (with_environment)
    s->mutable_environment()->insert(r.environment.begin(), r.environment.end());
  if (with_script) s->set_script(r.script);
  for (const std::string& a : r.script_args) s->add_argv(a);
  s->set_wrap(r.wrap);
  s->set_command(r.command);
  s->set_alloc_node(r.alloc_node);
  s->set_alloc_sid(r.alloc_sid);
  s->mutable_ignored_options()->insert(r.ignored_options.begin(), r.ignored_options.end());
  s->set_allocation_only(r.allocation_only);
  s->set_cpu_bind(r.cpu_bind);
  s->set_gpu_bind(r.gpu_bind);
  s->set_hint(r.hint);
  SetIf(r.threads_per_core, [&](int32_t v) { s->set_threads_per_core(v); });
  if (r.srun) {
    v1::SrunStep* step = s->mutable_srun();
    for (const std::string& a : r.srun->argv) step->add_argv(a);
    step->set_io_host(r.srun->io_host);
    step->set_io_port(r.srun->io_port);
    step->set_unbuffered(r.srun->unbuffered);
    step->set_std_out(r.srun->stdout_pattern);
    step->set_std_err(r.srun->stderr_pattern);
    step->set_std_in(r.srun->stdin_pattern);
    step->set_cpu_bind(r.srun->cpu_bind);
    step->set_gpu_bind(r.srun->gpu_bind);
    step->set_distribution(r.srun->distribution);
    step->set_gpus_per_task(r.srun->gpus_per_task);
    SetIf(r.srun->threads_per_core, [&](int32_t v) { step->set_threads_per_core(v); });
  }
}

namespace {


Status BadSpec(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("JobSpec.", field, ": ", why));
}

}  // namespace

v1::JobSpec ToWire(const model::JobRequest& request) {
  v1::JobSpec spec;
  FillSpec(request, /*with_script=*/true, /*with_environment=*/true, &spec);
  // The key travels with the submission and into the store, never into a query's JobInfo
  // (FillSpec leaves it out).
  if (request.srun) spec.mutable_srun()->set_io_key(request.srun->io_key);
  return spec;
}

StatusOr<model::JobRequest> FromWire(const v1::JobSpec& s) {
  model::JobRequest r;
  r.name = s.name();
  if (s.partitions_size() > 0) {
    r.partitions.assign(s.partitions().begin(), s.partitions().end());
  } else {
    for (std::string_view p : core::Split(s.partition(), ',')) {
      if (!p.empty()) r.partitions.emplace_back(p);
    }
  }
  r.account = s.account();
  r.qos = s.qos();
  r.reservation = s.reservation();
  r.wckey = s.wckey();
  r.comment = s.comment();
  r.licenses = s.licenses();
  if (s.has_uid()) r.uid = s.uid();
  if (s.has_gid()) r.gid = s.gid();

  if (s.has_time_limit_s() && s.time_limit_s() != -1) r.time_limit_s = s.time_limit_s();
  if (s.has_time_min_s()) r.time_min_s = s.time_min_s();
  r.begin_time = s.begin_time();
  r.deadline = s.deadline();

  model::JobShape& sh = r.shape;
  sh.min_nodes = s.min_nodes();
  sh.max_nodes = s.max_nodes();
  sh.ntasks = s.ntasks();
  sh.ntasks_per_node = s.ntasks_per_node();
  sh.cpus_per_task = s.cpus_per_task();
  sh.mem_per_node_mb = s.mem_per_node_mb();
  sh.mem_per_cpu_mb = s.mem_per_cpu_mb();
  sh.mem_per_gpu_mb = s.mem_per_gpu_mb();
  sh.gpus_per_node = s.gpus_per_node();
  sh.gpus_per_task = s.gpus_per_task();
  sh.cpus_per_gpu = s.cpus_per_gpu();
  sh.gpu_type = s.gpu_type();
  sh.exclusive = s.exclusive();
  sh.switches = s.switches();
  sh.switches_wait_s = s.switches_wait_s();
  sh.segment = s.segment();

  const v1::JobSpec::Given& g = s.given();
  if (g.has_min_nodes()) r.min_nodes = g.min_nodes();
  if (g.has_max_nodes()) r.max_nodes = g.max_nodes();
  if (g.has_ntasks()) r.ntasks = g.ntasks();
  if (g.has_ntasks_per_node()) r.ntasks_per_node = g.ntasks_per_node();
  if (g.has_cpus_per_task()) r.cpus_per_task = g.cpus_per_task();
  if (g.has_cpus_per_gpu()) r.cpus_per_gpu = g.cpus_per_gpu();
  if (g.has_mem_per_node_mb()) r.mem_per_node_mb = g.mem_per_node_mb();
  if (g.has_mem_per_cpu_mb()) r.mem_per_cpu_mb = g.mem_per_cpu_mb();
  if (g.has_mem_per_gpu_mb()) r.mem_per_gpu_mb = g.mem_per_gpu_mb();
  if (g.has_ntasks_per_core()) r.ntasks_per_core = g.ntasks_per_core();
  if (g.has_ntasks_per_socket()) r.ntasks_per_socket = g.ntasks_per_socket();
  if (g.has_ntasks_per_gpu()) r.ntasks_per_gpu = g.ntasks_per_gpu();
  if (g.has_mincpus()) r.mincpus = g.mincpus();
  if (g.has_tmp_mb()) r.tmp_mb = g.tmp_mb();
  r.switches = g.switches();
  if (g.has_switches_wait_s()) r.switches_wait_s = g.switches_wait_s();
  if (g.has_segment()) r.segment = g.segment();
  r.gres = CountsFromWire(g.gres());
  r.gpus = CountsFromWire(g.gpus());
  r.gpus_per_node = CountsFromWire(g.gpus_per_node());
  r.gpus_per_task = CountsFromWire(g.gpus_per_task());
  r.gpus_per_socket = CountsFromWire(g.gpus_per_socket());

  switch (s.sharing()) {
    case v1::JobSpec::SHARING_DEFAULT:
      r.sharing = model::SharingMode::kDefault;
      break;
    case v1::JobSpec::SHARING_EXCLUSIVE:
      r.sharing = model::SharingMode::kExclusive;
      break;
    case v1::JobSpec::SHARING_EXCLUSIVE_USER:
      r.sharing = model::SharingMode::kExclusiveUser;
      break;
    case v1::JobSpec::SHARING_EXCLUSIVE_MCS:
      r.sharing = model::SharingMode::kExclusiveMcs;
      break;
    case v1::JobSpec::SHARING_OVERSUBSCRIBE:
      r.sharing = model::SharingMode::kOversubscribe;
      break;
    default:
      return BadSpec("sharing", StrCat("unknown value ", static_cast<int>(s.sharing())));
  }
  r.constraint = s.constraint();
  r.prefer = s.prefer();
  r.nodelist = s.nodelist();
  r.exclude = s.exclude();
  r.contiguous = s.contiguous();
  r.overcommit = s.overcommit();
  r.spread_job = s.spread_job();
  r.use_min_nodes = s.use_min_nodes();

  r.hold = s.hold();
  r.dependency.combine =
      s.dependency_any() ? model::Dependency::Combine::kAny : model::Dependency::Combine::kAll;
  for (const v1::Dependency& d : s.dependencies()) {
    std::optional<model::DependencyType> type = TypeOf(d.kind());
    if (!type) return BadSpec("dependencies", StrCat("unknown kind ", static_cast<int>(d.kind())));
    model::DependencyClause c;
    c.type = *type;
    if (d.targets_size() > 0) {
      for (const v1::DependencyTarget& t : d.targets()) {
        model::DependencyTarget target;
        target.job_id = t.job_id();
        if (t.has_array_task()) target.array_task = t.array_task();
        target.all_tasks = t.all_tasks();
        target.delay_s = t.delay_s();
        c.jobs.push_back(target);
      }
    } else {
      for (uint64_t id : d.job_ids()) {
        model::DependencyTarget target;
        target.job_id = id;
        target.delay_s = d.delay_s();
        c.jobs.push_back(target);
      }
    }
    r.dependency.clauses.push_back(std::move(c));
  }
  if (s.has_kill_on_invalid_dep()) r.kill_on_invalid_dep = s.kill_on_invalid_dep();
  if (s.has_array()) {
    model::ArraySpec a;
    for (const v1::ArrayRange& w : s.array().ranges()) {
      a.ranges.push_back(model::ArrayRange{w.first(), w.last(), w.step()});
    }
    a.max_running = s.array().max_running();
    r.array = std::move(a);
  } else if (!s.array_spec().empty()) {
    StatusOr<model::ArraySpec> a = model::ParseArraySpec(s.array_spec(), INT64_MAX);
    if (!a.ok()) return BadSpec("array_spec", std::string(a.status().message()));
    r.array = *std::move(a);
  }
  r.nice = static_cast<int32_t>(s.nice());
  if (s.has_priority()) r.priority = s.priority();
  if (s.has_requeue()) r.requeue = s.requeue();
  r.no_kill = s.no_kill();
  r.signal = s.signal();
  r.test_only = s.test_only();

  r.work_dir = s.work_dir();
  r.stdout_pattern = s.std_out();
  r.stderr_pattern = s.std_err();
  r.stdin_pattern = s.std_in();
  switch (s.open_mode()) {
    case v1::JobSpec::OPEN_DEFAULT:
      r.open_mode = model::OpenMode::kDefault;
      break;
    case v1::JobSpec::OPEN_APPEND:
      r.open_mode = model::OpenMode::kAppend;
      break;
    case v1::JobSpec::OPEN_TRUNCATE:
      r.open_mode = model::OpenMode::kTruncate;
      break;
    default:
      return BadSpec("open_mode", StrCat("unknown value ", static_cast<int>(s.open_mode())));
  }
  const v1::ExportPolicy& e = s.export_policy();
  switch (e.mode()) {
    case v1::ExportPolicy::ALL:
      r.export_policy.mode = model::ExportPolicy::Mode::kAll;
      break;
    case v1::ExportPolicy::NONE:
      r.export_policy.mode = model::ExportPolicy::Mode::kNone;
      break;
    case v1::ExportPolicy::LIST:
      r.export_policy.mode = model::ExportPolicy::Mode::kList;
      break;
    default:
      return BadSpec("export_policy.mode", StrCat("unknown value ", static_cast<int>(e.mode())));
  }
  r.export_policy.with_all = e.with_all();
  for (const v1::ExportPolicy::Var& v : e.vars()) {
    r.export_policy.vars.emplace_back(
        v.name(), v.has_value() ? std::optional<std::string>(v.value()) : std::nullopt);
  }
  r.get_user_env = s.get_user_env();
  r.export_file = s.export_file();
  r.environment.insert(s.environment().begin(), s.environment().end());
  r.script = s.script();
  r.script_args.assign(s.argv().begin(), s.argv().end());
  r.wrap = s.wrap();
  r.command = s.command();
  r.alloc_node = s.alloc_node();
  r.alloc_sid = s.alloc_sid();
  r.ignored_options.insert(s.ignored_options().begin(), s.ignored_options().end());
  r.allocation_only = s.allocation_only();
  r.cpu_bind = s.cpu_bind();
  r.gpu_bind = s.gpu_bind();
  r.hint = s.hint();
  if (s.has_threads_per_core()) r.threads_per_core = s.threads_per_core();
  if (s.has_srun()) {
    const v1::SrunStep& step = s.srun();
    model::SrunStep& out = r.srun.emplace();
    out.argv.assign(step.argv().begin(), step.argv().end());
    out.io_host = step.io_host();
    out.io_port = step.io_port();
    out.io_key = step.io_key();
    out.unbuffered = step.unbuffered();
    out.stdout_pattern = step.std_out();
    out.stderr_pattern = step.std_err();
    out.stdin_pattern = step.std_in();
    out.cpu_bind = step.cpu_bind();
    out.gpu_bind = step.gpu_bind();
    out.distribution = step.distribution();
    out.gpus_per_task = step.gpus_per_task();
    if (step.has_threads_per_core()) out.threads_per_core = step.threads_per_core();
  }
  return r;
}

}  // namespace loom::rpc
