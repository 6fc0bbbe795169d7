#include "sim/report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <vector>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace loom::sim {
namespace {

std::string Fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

std::string FixedOrNa(double v, int digits) { return std::isnan(v) ? "n/a" : Fixed(v, digits); }

}  // namespace

void WriteTable(std::ostream& os, const ReportHeader& h, const std::vector<Summary>& rows) {
  os << "trace: " << h.trace << "  machine: " << h.machine_cpus << " CPUs  jobs: "
     << (rows.empty() ? 0 : rows.front().jobs) << " of " << h.jobs_in_trace << " ("
     << h.dropped << " filtered out";
  if (h.bad_lines > 0) os << ", " << h.bad_lines << " malformed lines skipped";
  os << ")\n";
  os << "estimate: " << h.estimate << "  backfill order: " << h.backfill_order << "\n";
  if (h.estimates_from_runtime) {
    os << "note: the trace has no requested times; the run time is used as the requested time\n";
  }
  struct Line {
    const char* name;
    std::string (*value)(const Summary&);
  };
  const Line lines[] = {
      {"jobs", [](const Summary& s) { return core::StrCat(s.jobs); }},
      {"makespan (s)", [](const Summary& s) { return core::StrCat(s.makespan_s); }},
      {"utilization", [](const Summary& s) { return Fixed(s.utilization, 4); }},
      {"mean wait (s)", [](const Summary& s) { return Fixed(s.mean_wait_s, 1); }},
      {"median wait (s)", [](const Summary& s) { return Fixed(s.median_wait_s, 1); }},
      {"p95 wait (s)", [](const Summary& s) { return Fixed(s.p95_wait_s, 1); }},
      {"max wait (s)", [](const Summary& s) { return Fixed(s.max_wait_s, 0); }},
      {"mean flow time (s)", [](const Summary& s) { return Fixed(s.mean_flow_time_s, 1); }},
      {"mean bounded slowdown", [](const Summary& s) { return Fixed(s.mean_bounded_slowdown, 2); }},
      {"max bounded slowdown", [](const Summary& s) { return Fixed(s.max_bounded_slowdown, 1); }},
      {"backfilled jobs", [](const Summary& s) { return core::StrCat(s.backfilled); }},
      {"scheduling passes", [](const Summary& s) { return core::StrCat(s.passes); }},
      {"reservations made", [](const Summary& s) { return core::StrCat(s.reservations); }},
  };
  const int name_w = 23;
  int col_w = 14;
  for (const Summary& s : rows) col_w = std::max<int>(col_w, static_cast<int>(s.policy.size()) + 2);
  os << std::left << std::setw(name_w) << "";
  for (const Summary& s : rows) os << std::right << std::setw(col_w) << s.policy;
  os << "\n";
  for (const Line& l : lines) {
    os << std::left << std::setw(name_w) << l.name;
    for (const Summary& s : rows) os << std::right << std::setw(col_w) << l.value(s);
    os << "\n";
  }
}

namespace {

nlohmann::ordered_json NumberOrNull(double v) {
  return std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
}

nlohmann::ordered_json FairnessJson(const Fairness& f) {
  nlohmann::ordered_json o;
  o["jain_index"] = NumberOrNull(f.jain_index);
  nlohmann::ordered_json accounts = nlohmann::ordered_json::array();
  for (const AccountFairness& a : f.accounts) {
    nlohmann::ordered_json row;
    row["account"] = a.account;
    row["share"] = a.share;
    row["usage_share"] = a.usage_share;
    row["jobs"] = a.jobs;
    row["mean_wait_s"] = NumberOrNull(a.mean_wait_s);
    accounts.push_back(std::move(row));
  }
  o["accounts"] = std::move(accounts);
  return o;
}

// The accounts a table lists: the `top` with the most jobs (then the larger share, then the
// name), in that order.
std::vector<size_t> TopAccounts(const Fairness& f, size_t top) {
  std::vector<size_t> order(f.accounts.size());
  for (size_t a = 0; a < order.size(); ++a) order[a] = a;
  std::sort(order.begin(), order.end(), [&f](size_t x, size_t y) {
    const AccountFairness& a = f.accounts[x];
    const AccountFairness& b = f.accounts[y];
    if (a.jobs != b.jobs) return a.jobs > b.jobs;
    if (a.share != b.share) return a.share > b.share;
    return a.account < b.account;
  });
  if (order.size() > top) order.resize(top);
  return order;
}

}  // namespace

void WriteFairnessTable(std::ostream& os, const std::vector<Fairness>& runs, size_t top) {
  if (runs.empty()) return;
  os << "\nfair share: Jain's index of usage against shares among the accounts waiting at "
        "once (mean over time; 1: each got its share);\nper account (the "
     << std::min(top, runs.front().accounts.size())
     << " with the most jobs): [configured share], its part of the decayed usage (mean over "
        "time), mean wait\n";
  const std::vector<size_t> accounts = TopAccounts(runs.front(), top);
  size_t name_w = 16;
  for (size_t a : accounts) {
    name_w = std::max(name_w, runs.front().accounts[a].account.size() + 20);
  }
  int col_w = 14;
  for (const Fairness& f : runs)
    col_w = std::max<int>(col_w, static_cast<int>(f.policy.size()) + 2);
  os << std::left << std::setw(static_cast<int>(name_w)) << "";
  for (const Fairness& f : runs) os << std::right << std::setw(col_w) << f.policy;
  os << "\n" << std::left << std::setw(static_cast<int>(name_w)) << "Jain's index";
  for (const Fairness& f : runs) os << std::right << std::setw(col_w) << FixedOrNa(f.jain_index, 4);
  os << "\n";
  for (size_t a : accounts) {
    const AccountFairness& first = runs.front().accounts[a];
    const std::string name = core::StrCat(first.account, " [", Fixed(first.share, 4), "]");
    os << std::left << std::setw(static_cast<int>(name_w)) << core::StrCat(name, " usage");
    for (const Fairness& f : runs)
      os << std::right << std::setw(col_w) << Fixed(f.accounts[a].usage_share, 4);
    os << "\n"
       << std::left << std::setw(static_cast<int>(name_w)) << core::StrCat(name, " wait (s)");
    for (const Fairness& f : runs)
      os << std::right << std::setw(col_w) << FixedOrNa(f.accounts[a].mean_wait_s, 1);
    os << "\n";
  }
}

void WriteJson(std::ostream& os, const ReportHeader& h, const std::vector<Summary>& rows,
               const std::vector<Fairness>& fairness) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const Summary& s = rows[i];
    nlohmann::ordered_json o;
    o["policy"] = s.policy;
    o["jobs"] = s.jobs;
    o["makespan_s"] = s.makespan_s;
    o["utilization"] = s.utilization;
    o["mean_wait_s"] = s.mean_wait_s;
    o["median_wait_s"] = s.median_wait_s;
    o["p95_wait_s"] = s.p95_wait_s;
    o["max_wait_s"] = s.max_wait_s;
    o["mean_flow_time_s"] = s.mean_flow_time_s;
    o["mean_bounded_slowdown"] = s.mean_bounded_slowdown;
    o["max_bounded_slowdown"] = s.max_bounded_slowdown;
    o["backfilled_jobs"] = s.backfilled;
    o["passes"] = s.passes;
    o["reservations"] = s.reservations;
    o["trace"] = h.trace;
    o["machine_cpus"] = h.machine_cpus;
    o["estimate"] = h.estimate;
    o["backfill_order"] = h.backfill_order;
    o["estimates_from_runtime"] = h.estimates_from_runtime;
    if (i < fairness.size()) o["fair_share"] = FairnessJson(fairness[i]);
    arr.push_back(std::move(o));
  }
  os << arr.dump(2) << "\n";
}

void WriteGpuTable(std::ostream& os, const GpuReportHeader& h, const std::vector<GpuSummary>& rows) {
  os << "workload: " << h.workload << "  nodes: " << h.nodes << "  GPUs: " << h.gpus
     << "  topology: " << h.topology << "  jobs: " << (rows.empty() ? 0 : rows.front().jobs)
     << "\n";
  os << "communication model: "
     << (h.comm_fraction > 0 ? core::StrCat(Fixed(h.comm_fraction, 2), " of a GPU job's time")
                             : std::string("off"))
     << "\n";
  for (const std::string& n : h.notes) os << "note: " << n << "\n";
  struct Line {
    const char* name;
    std::string (*value)(const GpuSummary&);
  };
  const Line lines[] = {
      {"gpu_allocation_rate", [](const GpuSummary& s) { return Fixed(s.gpu_allocation_rate, 4); }},
      {"single_domain_fraction",
       [](const GpuSummary& s) { return FixedOrNa(s.single_domain_fraction, 4); }},
      {"  of jobs", [](const GpuSummary& s) { return core::StrCat(s.single_domain_jobs); }},
      {"leaf_local_fraction",
       [](const GpuSummary& s) { return FixedOrNa(s.leaf_local_fraction, 4); }},
      {"  of jobs", [](const GpuSummary& s) { return core::StrCat(s.leaf_local_jobs); }},
      {"numa_local_fraction",
       [](const GpuSummary& s) { return FixedOrNa(s.numa_local_fraction, 4); }},
      {"fragmentation", [](const GpuSummary& s) { return Fixed(s.fragmentation, 4); }},
      {"mean_jct_s", [](const GpuSummary& s) { return Fixed(s.mean_jct_s, 1); }},
      {"mean_queue_s", [](const GpuSummary& s) { return Fixed(s.mean_queue_s, 1); }},
      {"median_queue_s", [](const GpuSummary& s) { return Fixed(s.median_queue_s, 1); }},
      {"p95_queue_s", [](const GpuSummary& s) { return Fixed(s.p95_queue_s, 1); }},
      {"mean_comm_slowdown", [](const GpuSummary& s) { return Fixed(s.mean_comm_slowdown, 4); }},
      {"makespan_s", [](const GpuSummary& s) { return core::StrCat(s.makespan_s); }},
  };
  const int name_w = 24;
  int col_w = 14;
  auto title = [](const GpuSummary& s) { return core::StrCat(s.placement, "/", s.policy); };
  for (const GpuSummary& s : rows) col_w = std::max<int>(col_w, static_cast<int>(title(s).size()) + 2);
  os << std::left << std::setw(name_w) << "";
  for (const GpuSummary& s : rows) os << std::right << std::setw(col_w) << title(s);
  os << "\n";
  for (const Line& l : lines) {
    os << std::left << std::setw(name_w) << l.name;
    for (const GpuSummary& s : rows) os << std::right << std::setw(col_w) << l.value(s);
    os << "\n";
  }
}

void WriteGpuJson(std::ostream& os, const GpuReportHeader& h, const std::vector<GpuSummary>& rows,
                  const std::vector<Fairness>& fairness) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const GpuSummary& s = rows[i];
    nlohmann::ordered_json o;
    o["placement"] = s.placement;
    o["policy"] = s.policy;
    o["gpu_allocation_rate"] = s.gpu_allocation_rate;
    o["single_domain_fraction"] = NumberOrNull(s.single_domain_fraction);
    o["leaf_local_fraction"] = NumberOrNull(s.leaf_local_fraction);
    o["mean_jct_s"] = s.mean_jct_s;
    o["mean_queue_s"] = s.mean_queue_s;
    o["p95_queue_s"] = s.p95_queue_s;
    o["fragmentation"] = s.fragmentation;
    o["median_queue_s"] = s.median_queue_s;
    o["numa_local_fraction"] = NumberOrNull(s.numa_local_fraction);
    o["single_domain_jobs"] = s.single_domain_jobs;
    o["leaf_local_jobs"] = s.leaf_local_jobs;
    o["mean_comm_slowdown"] = s.mean_comm_slowdown;
    o["jobs"] = s.jobs;
    o["gpu_jobs"] = s.gpu_jobs;
    o["makespan_s"] = s.makespan_s;
    o["workload"] = h.workload;
    o["nodes"] = h.nodes;
    o["gpus"] = h.gpus;
    o["topology"] = h.topology;
    o["comm_fraction"] = h.comm_fraction;
    if (i < fairness.size()) o["fair_share"] = FairnessJson(fairness[i]);
    arr.push_back(std::move(o));
  }
  os << arr.dump(2) << "\n";
}

void WriteJobsCsv(std::ostream& os, const std::vector<SimResult>& results) {
  os << "policy,job,submit,start,end,wait,run,estimate,cpus,gpus,nodes,backfilled,"
        "bounded_slowdown\n";
  for (const SimResult& res : results) {
    for (const JobRecord& r : res.jobs) {
      os << res.policy << ',' << r.id << ',' << r.submit << ',' << r.start << ',' << r.end << ','
         << (r.start - r.submit) << ',' << r.run << ',' << r.estimate << ',' << r.cpus << ','
         << r.gpus << ',' << r.nodes << ',' << (r.backfilled ? 1 : 0) << ','
         << Fixed(BoundedSlowdown(r), 4) << '\n';
    }
  }
}

namespace {

// Time-weighted averages of the samples over `buckets` equal spans of the run.
void WriteSeries(std::ostream& os, const SimResult& res, int buckets) {
  const auto& s = res.samples;
  if (s.empty()) return;
  Time t0 = s.front().time, t1 = s.back().time;
  if (t1 <= t0) t1 = t0 + 1;
  double span = static_cast<double>(t1 - t0) / buckets;
  std::vector<double> util(buckets, 0), queue(buckets, 0), weight(buckets, 0);
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    // Sample i holds from s[i].time until s[i+1].time; spread it over the buckets it spans.
    double a = static_cast<double>(s[i].time - t0), b = static_cast<double>(s[i + 1].time - t0);
    int ba = std::min(buckets - 1, static_cast<int>(a / span));
    int bb = std::min(buckets - 1, static_cast<int>(b / span));
    for (int k = ba; k <= bb; ++k) {
      double lo = std::max(a, k * span), hi = std::min(b, (k + 1) * span);
      if (hi <= lo) continue;
      double w = hi - lo;
      util[k] += w * static_cast<double>(s[i].busy_cpus) / std::max<int64_t>(1, res.total_cpus);
      queue[k] += w * static_cast<double>(s[i].queued);
      weight[k] += w;
    }
  }
  for (int k = 0; k < buckets; ++k) {
    if (weight[k] <= 0) continue;
    os << (static_cast<double>(t0) + (k + 0.5) * span) / 86400.0 << ' ' << util[k] / weight[k]
       << ' ' << queue[k] / weight[k] << '\n';
  }
}

// A run's name as part of a file name: GPU runs are named "placement/policy".
std::string FileName(std::string run) {
  std::replace(run.begin(), run.end(), '/', '-');
  return run;
}

// The accounts a share chart draws.
constexpr size_t kPlottedAccounts = 6;

// Each of `accounts`' part of the decayed usage at the samples (at most 2,000 rows).
void WriteShareSeries(std::ostream& os, const SimResult& res, const std::vector<size_t>& accounts) {
  const std::vector<ShareSample>& samples = res.shares.samples;
  const size_t step = std::max<size_t>(1, samples.size() / 2000);
  for (size_t i = 0; i < samples.size(); i += step) {
    const ShareSample& s = samples[i];
    double total = 0;
    for (double u : s.usage) total += u;
    if (total <= 0) continue;
    os << static_cast<double>(s.time) / 86400.0;
    for (size_t a : accounts) os << ' ' << s.usage[a] / total;
    os << '\n';
  }
}

// Runs gnuplot on `script` without a shell, so that any character in the directory's name
// is only that; returns what it wrote (stdout and stderr) and sets its wait status.
StatusOr<std::string> RunGnuplot(const std::string& script, int* status) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    return absl::UnavailableError(core::StrCat("cannot run gnuplot: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
  std::string program = "gnuplot";
  std::vector<char*> argv = {program.data(), const_cast<char*>(script.c_str()), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    return absl::UnavailableError(core::StrCat(
        "cannot run gnuplot (is it installed? scripts/install-deps installs it): ",
        std::strerror(spawned)));
  }
  std::string output;
  char buf[512];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  return output;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

Status WritePlots(const std::string& dir, const ReportHeader& h,
                  const std::vector<SimResult>& results) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(
        core::StrCat("cannot create plot directory '", dir, "': ", std::strerror(errno)));
  }
  for (const SimResult& res : results) {
    std::ofstream series(dir + "/series-" + FileName(res.policy) + ".dat");
    WriteSeries(series, res, 1000);
    std::ofstream cdf(dir + "/wait-cdf-" + FileName(res.policy) + ".dat");
    std::vector<double> waits;
    for (const JobRecord& r : res.jobs) waits.push_back(static_cast<double>(r.start - r.submit));
    std::sort(waits.begin(), waits.end());
    size_t step = std::max<size_t>(1, waits.size() / 2000);
    for (size_t i = 0; i < waits.size(); i += step) {
      cdf << std::max(1.0, waits[i]) << ' ' << static_cast<double>(i + 1) / waits.size() << '\n';
    }
    if (!waits.empty()) cdf << std::max(1.0, waits.back()) << " 1\n";
    if (!series || !cdf) {
      return absl::DataLossError(core::StrCat("cannot write plot data in '", dir, "'"));
    }
    if (!res.shares.accounts.empty()) {
      std::ofstream shares(dir + "/shares-" + FileName(res.policy) + ".dat");
      WriteShareSeries(shares, res, TopAccounts(SummarizeFairness(res), kPlottedAccounts));
      if (!shares) {
        return absl::DataLossError(core::StrCat("cannot write plot data in '", dir, "'"));
      }
    }
  }
  std::ofstream gp(dir + "/plots.gp");
  for (const char* fmt : {"png", "svg"}) {
    bool png = std::strcmp(fmt, "png") == 0;
    std::string term = png ? "set terminal pngcairo size 1100,650 noenhanced"
                           : "set terminal svg size 1100,650 noenhanced";
    auto plot = [&](const std::string& file, const std::string& title, const std::string& xl,
                    const std::string& yl, const std::string& data_prefix, const char* cols,
                    bool logx) {
      gp << term << "\nset output " << Quote(dir + "/" + file + "." + fmt) << "\nset title "
         << Quote(title + " - " + h.trace) << "\nset xlabel " << Quote(xl) << "\nset ylabel "
         << Quote(yl) << "\nset key outside right\nset grid\n"
         << (logx ? "set logscale x\n" : "unset logscale x\n") << "plot ";
      for (size_t i = 0; i < results.size(); ++i) {
        gp << (i ? ", " : "")
           << Quote(dir + "/" + data_prefix + FileName(results[i].policy) + ".dat") << " using "
           << cols << " with lines lw 1.5 title " << Quote(results[i].policy);
      }
      gp << "\n";
    };
    plot("utilization", "Utilization over time", "time (days)", "busy CPUs / total", "series-",
         "1:2", false);
    plot("queue", "Queue length over time", "time (days)", "waiting jobs", "series-", "1:3",
         false);
    plot("wait-cdf", "Wait time CDF", "wait (s, log scale)", "fraction of jobs", "wait-cdf-",
         "1:2", true);
    // Fair share: one chart per run, each account's usage share (solid) against its
    // configured share (dashed, same colour).
    for (const SimResult& res : results) {
      if (res.shares.accounts.empty()) continue;
      const Fairness f = SummarizeFairness(res);
      const std::vector<size_t> top = TopAccounts(f, kPlottedAccounts);
      gp << term << "\nset output " << Quote(dir + "/shares-" + FileName(res.policy) + "." + fmt)
         << "\nset title "
         << Quote("Usage share against configured share - " + res.policy + " - " + h.trace)
         << "\nset xlabel 'time (days)'\nset ylabel 'part of the decayed usage'\n"
            "set key outside right\nset grid\nunset logscale x\nset yrange [0:*]\nplot ";
      for (size_t k = 0; k < top.size(); ++k) {
        const AccountFairness& a = f.accounts[top[k]];
        gp << (k ? ", " : "") << Quote(dir + "/shares-" + FileName(res.policy) + ".dat")
           << " using 1:" << k + 2 << " with lines lw 1.5 lc " << k + 1 << " title "
           << Quote(a.account) << ", " << a.share << " with lines dt 2 lc " << k + 1 << " title "
           << Quote(a.account + " share");
      }
      gp << "\nset yrange [*:*]\n";
    }
  }
  gp.close();
  if (!gp) return absl::DataLossError(core::StrCat("cannot write '", dir, "/plots.gp'"));
  int status = 0;
  StatusOr<std::string> output = RunGnuplot(dir + "/plots.gp", &status);
  if (!output.ok()) return output.status();
  if (status != 0) {
    return absl::UnavailableError(core::StrCat(
        "gnuplot failed (is it installed? scripts/install-deps installs it): ", *output));
  }
  return absl::OkStatus();
}

}  // namespace loom::sim
