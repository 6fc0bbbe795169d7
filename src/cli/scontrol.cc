// `scontrol`, Slurm's administration command: `show` (job, node, partition, config, and the
// host list helpers that need no controller, whose output, messages and exit statuses match
// Slurm 22.05's byte for byte; tests/data has the reference), and the commands that change
// the controller's state (scontrol_actions.cc). A command Loom does not have yet says so.
// Runs on the calling thread; writes to stdout and stderr only.
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
#include "cli/commands.h"
#include "cli/scontrol.h"
#include "cli/format/scontrol_format.h"
#include "cli/format/sinfo_format.h"
#include "core/hostlist.h"
#include "core/strings.h"
#include "cli/wire_views.h"
#include "rpc/convert.h"

namespace loom::cli {
namespace {

using core::StrCat;
using scontrol::Options;
using scontrol::Print;
using scontrol::PrintError;

constexpr std::string_view kVersion = "loom 0.1.0 (scontrol, Slurm 22.05 compatible)";
// Slurm reads at most this much of a host file.
constexpr size_t kMaxHostFileBytes = 1024 * 1024;

void PrintUsage(FILE* out) {
  Print(out,
        "Usage: scontrol [OPTIONS] COMMAND [ARGUMENTS]\n"
        "\n"
        "Commands that work without the controller:\n"
        "  show hostnames [HOSTLIST]   one host name per line (default: $SLURM_NODELIST)\n"
        "  show hostlist HOSTS         the ranged form of HOSTS, keeping their order\n"
        "  show hostlistsorted HOSTS   the ranged form of HOSTS, sorted\n"
        "  help, version\n"
        "HOSTS is a host list or the path of a file of host names starting with '/'.\n"
        "Entity and command names may be abbreviated as in Slurm (show hostn, show hostl).\n"
        "\n"
        "Commands that ask the controller (loomctld, found through slurm.conf):\n"
        "  show job|node|partition|config [NAME]\n"
        "  hold|release|requeue|requeue_hold JOBID...   update JobId=ID TimeLimit=T\n"
        "  update NodeName=NODES State=DRAIN|DOWN|RESUME|UNDRAIN [Reason=TEXT]\n"
        "  reconfigure, ping\n"
        "\n"
        "Options:\n"
        "  -a, --all            -d, --details        -o, --oneliner\n"
        "  -Q, --quiet          hide \"too many arguments\"-style messages\n"
        "  -v, --verbose        -M, --clusters=NAME  -u, --uid=UID\n"
        "      --federation         --local              --sibling       --hide\n"
        "  -h, --help, --usage  this text            -V, --version\n");
}


struct LongOption {
  std::string_view name;
  char short_name;  // 0 when there is none
  bool takes_argument;
};

constexpr LongOption kLongOptions[] = {
    {"all", 'a', false},      {"clusters", 'M', true},  {"details", 'd', false},
    {"federation", 0, false}, {"help", 'h', false},     {"hide", 0, false},
    {"local", 0, false},      {"oneliner", 'o', false}, {"quiet", 'Q', false},
    {"sibling", 0, false},    {"uid", 'u', true},       {"usage", 0, false},
    {"verbose", 'v', false},  {"version", 'V', false},
};

// Applies one option; `name` is the long name when the option was given in long form.
std::optional<int> ApplyOption(char short_name, std::string_view name,
                               const std::optional<std::string>& argument, Options* opts) {
  if (short_name == 'h' || name == "help" || name == "usage") {
    PrintUsage(stdout);
    return 0;
  }
  if (short_name == 'V' || name == "version") {
    Print(stdout, StrCat(kVersion, "\n"));
    return 0;
  }
  if (short_name == 'Q' || name == "quiet") opts->quiet = true;
  if (short_name == 'o' || name == "oneliner") opts->oneliner = true;
  if (short_name == 'd' || name == "details") opts->details = true;
  if (short_name == 'M' || name == "clusters") opts->clusters = argument;
  return std::nullopt;
}

int UsageError(const Options& opts, std::string_view message) {
  Print(stderr, StrCat(opts.program, ": ", message, "\nTry \"", opts.program,
                       " --help\" for more information\n"));
  return 1;
}

// GNU getopt_long's rules, which Slurm's scontrol uses: options may come anywhere, "--" ends
// them, short options cluster ("-Qo"), long options may be abbreviated to a unique prefix.
// Returns an exit status when the options alone decide the outcome.
std::optional<int> ParseOptions(int argc, char** argv, Options* opts) {
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      opts->words.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg.substr(0, 2) == "--") {
      std::string_view body = arg.substr(2);
      size_t eq = body.find('=');
      std::string_view name = body.substr(0, eq);
      const LongOption* match = nullptr;
      int prefix_matches = 0;
      for (const LongOption& o : kLongOptions) {
        if (o.name == name) {
          match = &o;
          prefix_matches = 1;
          break;
        }
        if (o.name.substr(0, name.size()) == name) {
          match = &o;
          ++prefix_matches;
        }
      }
      if (match == nullptr || prefix_matches != 1) {
        return UsageError(*opts, StrCat(prefix_matches > 1 ? "option '" : "unrecognized option '",
                                        arg, prefix_matches > 1 ? "' is ambiguous" : "'"));
      }
      std::optional<std::string> argument;
      if (eq != std::string_view::npos) {
        if (!match->takes_argument) {
          return UsageError(*opts,
                            StrCat("option '--", match->name, "' doesn't allow an argument"));
        }
        argument = std::string(body.substr(eq + 1));
      } else if (match->takes_argument) {
        if (i + 1 >= argc) {
          return UsageError(*opts, StrCat("option '--", match->name, "' requires an argument"));
        }
        argument = argv[++i];
      }
      if (std::optional<int> done = ApplyOption(match->short_name, match->name, argument, opts)) {
        return done;
      }
      continue;
    }
    for (size_t j = 1; j < arg.size(); ++j) {
      char c = arg[j];
      const LongOption* match = nullptr;
      for (const LongOption& o : kLongOptions) {
        if (o.short_name == c) match = &o;
      }
      if (match == nullptr) return UsageError(*opts, StrCat("invalid option -- '", c, "'"));
      std::optional<std::string> argument;
      if (match->takes_argument) {
        if (j + 1 < arg.size()) {
          argument = std::string(arg.substr(j + 1));
        } else if (i + 1 < argc) {
          argument = argv[++i];
        } else {
          return UsageError(*opts, StrCat("option requires an argument -- '", c, "'"));
        }
        j = arg.size();
      }
      if (std::optional<int> done = ApplyOption(c, "", argument, opts)) return done;
    }
  }
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
                          "' is not supported by Loom yet; `show job|node|partition|config|"
                          "hostnames|hostlist', `hold', `release', `requeue', `update JobId= "
                          "TimeLimit=', `update NodeName= State=', `reconfigure' and `ping' are"));
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
    PrintUsage(stdout);
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
  format::RenderContext ctx{static_cast<int64_t>(std::time(nullptr)), 0};
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
  if (Names(keyword, keyword.size(), "help", 2)) {
    PrintUsage(stdout);
    return 0;
  }
  if (Names(keyword, keyword.size(), "version", 4)) {
    Print(stdout, StrCat(kVersion, "\n"));
    return 0;
  }
  for (std::string_view k : kModeKeywords) {
    if (Names(keyword, keyword.size(), k, std::min<size_t>(k.size(), 3))) return 0;
  }
  for (std::string_view k : kControllerKeywords) {
    if (Names(keyword, keyword.size(), k, std::min<size_t>(k.size(), 3))) {
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
