// `scontrol`, Slurm's administration command: `show` (job, node, partition, config, and the
// host list helpers that need no controller, whose output, messages and exit statuses match
// Slurm 22.05's byte for byte; tests/data has the reference), and the commands that change
// the controller's state (scontrol_actions.cc). A command Loom does not have yet says so.
// Runs on the calling thread; writes to stdout and stderr only.
#include "cli/scontrol.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/client.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/format/scontrol_format.h"
#include "cli/format/sinfo_format.h"
#include "cli/slurm_help.h"
#include "cli/wire_views.h"
#include "core/clock.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "rpc/convert.h"

namespace loom::cli {
namespace {

using core::StrCat;
using scontrol::Options;
using scontrol::Print;
using scontrol::PrintError;

// Slurm reads at most this much of a host file.
constexpr size_t kMaxHostFileBytes = 1024 * 1024;

// Slurm 22.05's scontrol options; rows of one option share an id.
enum class Opt {
  kAll,
  kClusters,
  kDetails,
  kFederation,
  kFuture,
  kHelp,
  kHide,
  kLocal,
  kOneliner,
  kQuiet,
  kSibling,
  kUid,
  kUsage,
  kVerbose,
  kVersion,
};

// In scontrol's order within each first letter (its "ambiguous" messages list them so).
constexpr OptionSpec<Opt> kOptions[] = {
    {"all", 'a', kNoArg, Opt::kAll},
    {"cluster", 0, kArg, Opt::kClusters},
    {"clusters", 'M', kArg, Opt::kClusters},
    {"details", 'd', kNoArg, Opt::kDetails},
    {"federation", 0, kNoArg, Opt::kFederation},
    {"future", 'F', kNoArg, Opt::kFuture},
    {"help", 'h', kNoArg, Opt::kHelp},
    {"hide", 0, kNoArg, Opt::kHide},
    {"local", 0, kNoArg, Opt::kLocal},
    {"oneliner", 'o', kNoArg, Opt::kOneliner},
    {"quiet", 'Q', kNoArg, Opt::kQuiet},
    {"sibling", 0, kNoArg, Opt::kSibling},
    {"uid", 'u', kArg, Opt::kUid},
    {"usage", 0, kNoArg, Opt::kUsage},
    {"verbose", 'v', kNoArg, Opt::kVerbose},
    {"version", 'V', kNoArg, Opt::kVersion},
};

// glibc's getopt_long rules, which Slurm's scontrol uses: options may come anywhere, "--" ends
// them. Returns an exit status when the options alone decide the outcome.
std::optional<int> ParseOptions(int argc, char** argv, Options* opts) {
  const CommandText text{opts->program, kScontrolHelp, kScontrolUsage};
  ScanResult<Opt> scan;
  if (auto done = ScanCommandLine<Opt>(argc, argv, kOptions, text, &scan)) return done;
  for (const ParsedOption<Opt>& o : scan.options) {
    switch (o.id) {
      case Opt::kQuiet:
        opts->quiet = true;
        break;
      case Opt::kOneliner:
        opts->oneliner = true;
        break;
      case Opt::kDetails:
        opts->details = true;
        break;
      case Opt::kClusters:
        opts->clusters = o.value;
        break;
      case Opt::kFuture:
        return NotSupported(opts->program, "future");
      // Loom has no hidden partitions, federation or users to act for: these change nothing.
      default:
        break;
    }
  }
  opts->words = std::move(scan.rest);
  return std::nullopt;
}

// strncasecmp(word, keyword, n) == 0, with C's end-of-string rules.
bool MatchesPrefix(std::string_view word, std::string_view keyword, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    char a = i < word.size() ? word[i] : '\0';
    char b = i < keyword.size() ? keyword[i] : '\0';
    if (std::tolower(static_cast<unsigned char>(a)) !=
        std::tolower(static_cast<unsigned char>(b))) {
      return false;
    }
    if (a == '\0') return true;
  }
  return true;
}

// Slurm's abbreviation rule: `tag` (its first `tag_len` characters count) names `keyword` if it
// is a prefix of it at least `min_len` long.
bool Names(std::string_view tag, size_t tag_len, std::string_view keyword, size_t min_len) {
  return MatchesPrefix(tag, keyword, std::max(tag_len, min_len));
}

int NeedsController(const Options& opts, std::string_view what) {
  PrintError(opts, StrCat("`", what,
                          "' is not supported by Loom yet; `show job|node|partition|reservation|"
                          "config|hostnames|hostlist', `hold', `release', `requeue', `update "
                          "JobId= TimeLimit=', `update NodeName= State=', `create|update|delete "
                          "reservation', `reconfigure' and `ping' are"));
  return 1;
}

// Prints Slurm's parse messages; returns the parsed list, or nullopt after printing
// "Invalid hostlist: ...". Sets *fatal when Slurm would have exited.
std::optional<core::Hostlist> ParseForScontrol(const Options& opts, std::string_view expr,
                                               bool* fatal) {
  core::SlurmHostlistParse parse = core::ParseHostlistLikeSlurm(expr);
  for (size_t i = 0; i < parse.slurm_errors.size(); ++i) {
    bool last_fatal = parse.fatal && i + 1 == parse.slurm_errors.size();
    Print(stderr, StrCat(opts.program,
                         last_fatal ? ": fatal: " : ": error: ", parse.slurm_errors[i], "\n"));
  }
  *fatal = parse.fatal;
  if (parse.fatal) return std::nullopt;
  if (parse.over_limit) PrintError(opts, StrCat("hostlist ", parse.reason));
  if (!parse.hostlist.has_value()) {
    Print(stderr, StrCat("Invalid hostlist: ", expr, "\n"));
    return std::nullopt;
  }
  return std::move(parse.hostlist);
}

// show hostnames: one host per line. Slurm exits 0 even for an invalid list.
int ShowHostnames(const Options& opts, const char* value) {
  if (value == nullptr) value = std::getenv("SLURM_NODELIST");
  if (value == nullptr) {
    PrintError(opts, "host list is empty");
    return 0;
  }
  bool fatal = false;
  std::optional<core::Hostlist> list = ParseForScontrol(opts, value, &fatal);
  if (fatal) return 1;
  if (!list.has_value()) return 0;
  std::string out;
  for (const std::string& host : list->Expand()) {
    out += host;
    out.push_back('\n');
  }
  Print(stdout, out);
  return 0;
}

// show hostlist / hostlistsorted: the ranged form. `value` may name a file of hosts.
int ShowHostlist(const Options& opts, const char* value, bool sorted) {
  if (value == nullptr) {
    Print(stderr, "invalid encode argument\n");
    PrintText(kScontrolHelp);
    return 1;
  }
  std::string text = value;
  if (!text.empty() && text[0] == '/') {
    int fd = ::open(value, O_RDONLY);
    if (fd < 0) {
      Print(stderr, StrCat("Can not open ", value, "\n"));
      return 1;
    }
    text.assign(kMaxHostFileBytes, '\0');
    size_t got = 0;
    while (got < text.size()) {
      ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        ::close(fd);
        Print(stderr, StrCat("Error reading ", value, "\n"));
        return 1;
      }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    ::close(fd);
    text.resize(got);
    text.resize(std::min(text.size(), text.find('\0')));  // Slurm sees a C string
    for (char& c : text) {
      if (c == '\n') c = ',';
    }
  }
  bool fatal = false;
  std::optional<core::Hostlist> list = ParseForScontrol(opts, text, &fatal);
  if (!list.has_value()) return 1;
  if (sorted) list->Sort();
  Print(stdout, StrCat(list->ToString(), "\n"));
  return 0;
}

// show job|node|partition from loomctld, in Slurm's Key=Value layout.
int ShowFromController(const Options& opts, std::string_view entity, const char* value) {
  auto client = scontrol::ConnectOrSay(opts);
  if (!client) return 1;
  format::ScontrolOptions so;
  so.one_liner = opts.oneliner;
  so.details = opts.details;
  format::RenderContext ctx{core::RealClock().UnixSeconds(), 0};
  if (entity == "jobs") {
    v1::QueryJobsRequest req;
    if (value) {
      auto id = core::ParseInt(value);
      if (!id || *id <= 0) {
        Print(stderr, "slurm_load_jobs error: Invalid job id specified\n");
        return 1;
      }
      req.add_job_ids(static_cast<uint64_t>(*id));
    }
    v1::QueryJobsReply reply;
    Status s = client->Call("QueryJobs", req, &reply);
    if (!s.ok() || (value && reply.jobs().empty())) {
      Print(stderr, StrCat("slurm_load_jobs error: ",
                           s.ok() ? std::string("Invalid job id specified") : std::string(s.message()),
                           "\n"));
      return 1;
    }
    if (reply.jobs().empty()) {
      Print(stdout, "No jobs in the system\n");
      return 0;
    }
    ctx.now = reply.snapshot_time() ? reply.snapshot_time() : ctx.now;
    std::vector<format::JobView> views = JobViews(reply);
    Print(stdout, format::RenderJobs(views, so, ctx));
    return 0;
  }
  v1::QueryNodesRequest req;
  v1::QueryNodesReply reply;
  Status s = client->Call("QueryNodes", req, &reply);
  if (!s.ok()) {
    Print(stderr, StrCat("slurm_load_node error: ", std::string(s.message()), "\n"));
    return 1;
  }
  if (entity == "nodes") {
    std::vector<format::NodeView> views;
    for (const v1::NodeInfo& n : reply.nodes()) {
      if (!value || n.name() == value) views.push_back(ToNodeView(n));
    }
    if (views.empty()) {
      Print(stderr, StrCat("Node ", value ? value : "", " not found\n"));
      return 1;
    }
    format::ToNodeTableOrder(&views, nullptr);
    Print(stdout, format::RenderNodes(views, so, ctx));
    return 0;
  }
  std::vector<format::PartitionView> views;
  for (const v1::PartitionInfo& p : reply.partitions()) {
    if (!value || p.name() == value) views.push_back(ToPartitionView(p));
  }
  if (views.empty()) {
    Print(stderr, StrCat("Partition ", value ? value : "", " not found\n"));
    return 1;
  }
  Print(stdout, format::RenderPartitions(views, so, ctx));
  return 0;
}

// hold, release, ping and `update job JobId=N TimeLimit=...` through loomctld.
// Entities of `show`, in Slurm's matching order, with the shortest accepted abbreviation.
struct Entity {
  std::string_view name;
  size_t min_len;
};
constexpr Entity kControllerEntities[] = {
    {"aliases", 1}, {"assoc_mgr", 2}, {"bbstat", 2},      {"burstbuffer", 2},  {"config", 1},
    {"daemons", 1}, {"dwstat", 1},    {"federations", 1}, {"frontendname", 1},
};
constexpr Entity kLaterEntities[] = {
    {"jobs", 1},       {"jobid", 1},         {"licenses", 2},     {"nodes", 1},
    {"partitions", 2}, {"partitionname", 2}, {"reservations", 1}, {"reservationname", 1},
    {"slurmd", 2},     {"steps", 2},         {"topology", 1},
};

int Show(const Options& opts, const std::vector<std::string>& words) {
  // assoc_mgr takes any number of KEY=VALUE words after it.
  if (words.size() >= 2 && words[1].find('=') == std::string::npos &&
      Names(words[1], words[1].size(), "assoc_mgr", 2)) {
    return scontrol::ShowAssocMgr(opts, {words.begin() + 2, words.end()});
  }
  if (words.size() > 3) {
    if (!opts.quiet) Print(stderr, StrCat("too many arguments for keyword:", words[0], "\n"));
    return 1;
  }
  if (words.size() < 2) {
    if (!opts.quiet) Print(stderr, StrCat("too few arguments for keyword:", words[0], "\n"));
    return 1;
  }
  const std::string& tag = words[1];
  size_t tag_len = tag.size();
  const char* value = nullptr;
  size_t eq = tag.find('=');
  if (eq != std::string::npos) {
    tag_len = eq;
    value = tag.c_str() + eq + 1;
  } else if (words.size() == 3) {
    value = words[2].c_str();
  }
  for (const Entity& e : kControllerEntities) {
    if (Names(tag, tag_len, e.name, e.min_len)) {
      if (e.name == "config") return scontrol::ShowConfig(opts);
      return NeedsController(opts, StrCat("show ", e.name));
    }
  }
  if (Names(tag, tag_len, "hostnames", 5)) return ShowHostnames(opts, value);
  if (Names(tag, tag_len, "hostlist", 5)) return ShowHostlist(opts, value, /*sorted=*/false);
  if (Names(tag, tag_len, "hostlistsorted", 9)) return ShowHostlist(opts, value, true);
  for (const Entity& e : kLaterEntities) {
    if (Names(tag, tag_len, e.name, e.min_len)) {
      if (e.name == "jobs" || e.name == "jobid") return ShowFromController(opts, "jobs", value);
      if (e.name == "nodes") return ShowFromController(opts, "nodes", value);
      if (e.name == "partitions" || e.name == "partitionname") {
        return ShowFromController(opts, "partitions", value);
      }
      if (e.name == "steps") return scontrol::ShowSteps(opts, value);
      if (e.name == "reservations" || e.name == "reservationname") {
        return scontrol::ShowReservations(opts, value);
      }
      return NeedsController(opts, StrCat("show ", e.name));
    }
  }
  if (!opts.quiet) {
    Print(stderr, StrCat("invalid entity:", tag, " for keyword:", words[0], " \n"));
  }
  return 1;
}

// Keywords that only change how later output looks; alone on a command line they do nothing.
constexpr std::string_view kModeKeywords[] = {"all",   "details", "exit",    "oneliner",
                                              "quiet", "quit",    "verbose", "hide"};
constexpr std::string_view kControllerKeywords[] = {
    "abort",         "cancel_reboot", "cluster",      "completing", "create",        "delete",
    "errnumstr",     "fsdump",        "getaddrs",     "hold",       "inactive",      "listpids",
    "notify",        "pidinfo",       "ping",         "power",      "reboot_nodes",  "reconfigure",
    "release",       "requeue",       "requeue_hold", "resume",     "schedloglevel", "setdebug",
    "setdebugflags", "shutdown",      "suspend",      "takeover",   "top",           "token",
    "uhold",         "update",        "wait_job",     "write"};

}  // namespace

int RunScontrol(int argc, char** argv) {
  Options opts;
  if (argc > 0 && argv[0] != nullptr) {
    std::string_view self = argv[0];
    size_t slash = self.rfind('/');
    if (slash != std::string_view::npos) self.remove_prefix(slash + 1);
    if (!self.empty()) opts.program = std::string(self);
  }
  if (std::optional<int> done = ParseOptions(argc, argv, &opts)) return *done;
  if (opts.clusters.has_value()) {
    return NeedsController(opts, StrCat("--clusters=", *opts.clusters));
  }
  if (opts.words.empty()) {
    PrintError(opts,
               "interactive mode needs the Loom controller; give a command, e.g. "
               "`scontrol show hostnames n[1-4]' (see --help)");
    return 1;
  }
  const std::vector<std::string>& words = opts.words;
  const std::string& keyword = words[0];
  if (Names(keyword, keyword.size(), "show", 3)) return Show(opts, words);
  if (Names(keyword, keyword.size(), "help", 2)) return PrintText(kScontrolHelp);
  if (Names(keyword, keyword.size(), "version", 4)) return PrintText(kSlurmVersion);
  for (std::string_view k : kModeKeywords) {
    if (Names(keyword, keyword.size(), k, std::min<size_t>(k.size(), 3))) return 0;
  }
  for (std::string_view k : kControllerKeywords) {
    if (Names(keyword, keyword.size(), k, std::min<size_t>(k.size(), 3))) {
      if (k == "create" || k == "delete" || (k == "update" && scontrol::NamesReservation(words))) {
        if (k == "create" &&
            (words.size() < 2 || !Names(words[1], words[1].size(), "reservation", 3))) {
          return NeedsController(opts, StrCat(k, " ", words.size() > 1 ? words[1] : ""));
        }
        return scontrol::ReservationAction(opts, k, words);
      }
      if (k == "hold" || k == "release" || k == "ping" || k == "update" || k == "requeue" ||
          k == "requeue_hold") {
        return scontrol::JobAction(opts, k, words);
      }
      if (k == "reconfigure") return scontrol::Reconfigure(opts);
      if (k == "setdebug" || k == "setdebugflags") return scontrol::SetDebug(opts, k, words);
      return NeedsController(opts, k);
    }
  }
  Print(stderr, StrCat("invalid keyword: ", keyword, "\n"));
  return 1;
}

}  // namespace loom::cli
