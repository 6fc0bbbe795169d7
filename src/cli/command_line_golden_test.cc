// Runs the built Slurm-named links (squeue, sinfo, scancel, scontrol, sstat, sdiag) as a user
// would and compares what they say about their command lines with Slurm 22.05.8's: every
// malformed command line of tests/data/slurm-cli/slurm-22.05.8-option-errors.tsv (the message,
// byte for byte, and the exit status), and --help and --usage. The help texts keep Slurm's
// layout and option names in Loom's own words, so those are compared option by option: the
// same first line, the same options (short and long names, argument placeholder) in the same
// order, and descriptions that differ from Slurm's. None of it needs a controller.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/support/run_command.h"

namespace loom::cli {
namespace {

using ::loom::testing::CommandResult;
using ::loom::testing::ReadWholeFile;
using ::testing::StartsWith;

// A controller that does not exist: a command that got past its options would say so.
const std::map<std::string, std::string> kNoController = {
    {"SLURM_CONF", "/nonexistent/slurm.conf"}};

CommandResult RunSlurmCommand(const std::string& command, const std::vector<std::string>& args) {
  return ::loom::testing::RunCommand(core::StrCat(LOOM_BIN_DIR, "/", command), args, kNoController,
                                     {"POSIXLY_CORRECT"});
}

struct ErrorCase {
  std::vector<std::string> args;
  int exit_status;
  std::string err;
};

// The rows of the golden file for `command`.
std::vector<ErrorCase> ErrorCases(std::string_view command) {
  std::ifstream in(LOOM_SOURCE_DIR "/tests/data/slurm-cli/slurm-22.05.8-option-errors.tsv");
  EXPECT_TRUE(in);
  std::vector<ErrorCase> cases;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string_view> f = core::Split(line, '\t');
    if (f.size() != 4 || f[0] != command) continue;
    ErrorCase c;
    for (std::string_view a : core::Split(f[1], ' ')) c.args.emplace_back(a);
    c.exit_status = std::stoi(std::string(f[2]));
    for (std::string_view l : core::Split(f[3], '|')) c.err += core::StrCat(l, "\n");
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string Golden(std::string_view file) {
  return ReadWholeFile(core::StrCat(LOOM_SOURCE_DIR, "/tests/data/slurm-cli/", file));
}

// One option line of a help text, e.g. "  -j, --job=job(s)   text" or "      --json   text" (and
// scontrol's "-u,--uid" and sstat's "-a, --allsteps:"), with the lines that continue its text.
struct HelpOption {
  std::string short_name;  // "j", or empty
  std::string long_name;   // "job", or empty
  std::string arg;         // "job(s)", or empty
  std::string text;        // the description, its lines joined by single spaces

  std::string Names() const {
    return core::StrCat(short_name.empty() ? "" : core::StrCat("-", short_name),
                        !short_name.empty() && !long_name.empty() ? ", " : "",
                        long_name.empty() ? "" : core::StrCat("--", long_name),
                        arg.empty() ? "" : core::StrCat("=", arg));
  }
};

// Runs of blanks become one space; the ends are trimmed.
std::string Squeeze(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// The option a help line lists, or nullopt when the line lists none.
std::optional<HelpOption> ParseOptionLine(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '-' || i + 1 >= line.size()) return std::nullopt;
  HelpOption o;
  if (line[i + 1] != '-') {
    if (!std::isalnum(static_cast<unsigned char>(line[i + 1]))) return std::nullopt;
    o.short_name = std::string(1, line[i + 1]);
    i += 2;
    if (i < line.size() && line[i] == ',') {
      ++i;
      while (i < line.size() && line[i] == ' ') ++i;
    }
  }
  if (line.substr(i, 2) == "--") {
    i += 2;
    const size_t start = i;
    while (i < line.size() && IsNameChar(line[i])) ++i;
    o.long_name = std::string(line.substr(start, i - start));
    if (o.long_name.empty()) return std::nullopt;
    if (i < line.size() && line[i] == '=') {
      // The placeholder runs to two blanks, a tab or the end: "name | integer".
      const size_t arg_start = ++i;
      while (i < line.size() && line[i] != '\t' && line.substr(i, 2) != "  ") ++i;
      o.arg = Squeeze(line.substr(arg_start, i - arg_start));
    }
  }
  if (o.short_name.empty() && o.long_name.empty()) return std::nullopt;
  if (i < line.size() && line[i] == ':') ++i;
  if (i < line.size() && line[i] != ' ' && line[i] != '\t') return std::nullopt;
  o.text = Squeeze(line.substr(i));
  return o;
}

TEST(CommandLineGoldenTest, ParseOptionLine) {
  std::optional<HelpOption> o = ParseOptionLine("  -j, --job=job(s)                comma");
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->Names(), "-j, --job=job(s)");
  EXPECT_EQ(o->text, "comma");
  o = ParseOptionLine("      --json                      Produce JSON output");
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->Names(), "--json");
  EXPECT_EQ(o->text, "Produce JSON output");
  o = ParseOptionLine("  -s, --signal=name | integer     signal to send");
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->arg, "name | integer");
  EXPECT_EQ(o->text, "signal to send");
  o = ParseOptionLine("     -u,--uid       Update job");
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->Names(), "-u, --uid");
  o = ParseOptionLine("      -a, --allsteps:");
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->Names(), "-a, --allsteps");
  EXPECT_EQ(o->text, "");
  o = ParseOptionLine("     -o, --oneliner same as");
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->Names(), "-o, --oneliner");
  EXPECT_EQ(o->text, "same as");
  EXPECT_FALSE(ParseOptionLine("\t\t\t\t  to view, default is all").has_value());
  EXPECT_FALSE(ParseOptionLine("     abort                    stop").has_value());
  EXPECT_FALSE(ParseOptionLine("                                  -- not an option").has_value());
}

// The options of a help text in order; a line that is indented, not blank and lists no
// option continues the text of the option before it.
std::vector<HelpOption> ParseHelp(std::string_view help) {
  std::vector<HelpOption> options;
  bool in_option = false;
  for (std::string_view line : core::Split(help, '\n')) {
    if (std::optional<HelpOption> o = ParseOptionLine(line)) {
      options.push_back(std::move(*o));
      in_option = true;
    } else if (Squeeze(line).empty() || (line[0] != ' ' && line[0] != '\t')) {
      in_option = false;
    } else if (in_option) {
      std::string& text = options.back().text;
      text = Squeeze(core::StrCat(text, " ", line));
    }
  }
  return options;
}

std::string FirstLine(std::string_view text) {
  return Squeeze(text.substr(0, text.find('\n')));
}

// Loom's --help against Slurm's: the same first line and options; its own descriptions, and no
// line of Slurm's prose (a heading, or a line that lists only an option, may repeat).
void ExpectHelpLikeSlurm(std::string_view loom, std::string_view slurm) {
  EXPECT_EQ(FirstLine(loom), FirstLine(slurm));
  const std::vector<HelpOption> ours = ParseHelp(loom);
  const std::vector<HelpOption> theirs = ParseHelp(slurm);
  std::vector<std::string> our_names, their_names;
  for (const HelpOption& o : ours) our_names.push_back(o.Names());
  for (const HelpOption& o : theirs) their_names.push_back(o.Names());
  EXPECT_GE(their_names.size(), 5u);
  EXPECT_EQ(our_names, their_names);
  for (size_t i = 0; i < ours.size() && i < theirs.size(); ++i) {
    EXPECT_NE(ours[i].text, "") << ours[i].Names();
    EXPECT_NE(ours[i].text, theirs[i].text) << ours[i].Names();
  }
  std::set<std::string> slurm_lines;
  for (std::string_view line : core::Split(slurm, '\n')) slurm_lines.insert(Squeeze(line));
  const std::vector<std::string_view> lines = core::Split(loom, '\n');
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string line = Squeeze(lines[i]);
    if (line.empty() || !slurm_lines.contains(line)) continue;
    const std::optional<HelpOption> o = ParseOptionLine(lines[i]);
    const bool heading = !o.has_value() && line.back() == ':';
    EXPECT_TRUE(heading || (o.has_value() && o->text.empty()))
        << "a line of Slurm's text: " << lines[i];
  }
}

// The option letters and long names a --usage synopsis mentions: "-A", "[-ahjlrsv]",
// "--clusters", "[--wckey=wckey]".
std::set<std::string> UsageOptions(std::string_view usage) {
  std::set<std::string> out;
  for (std::string_view line : core::Split(usage, '\n')) {
    for (std::string_view word : core::Split(line, ' ')) {
      word = core::Trim(word);
      while (!word.empty() && word.front() == '[') word.remove_prefix(1);
      if (word.starts_with("--")) {
        size_t n = 2;
        while (n < word.size() && IsNameChar(word[n])) ++n;
        if (n > 2) out.insert(std::string(word.substr(0, n)));
      } else if (word.starts_with("-")) {
        for (size_t n = 1; n < word.size() && std::isalnum(static_cast<unsigned char>(word[n]));
             ++n) {
          out.insert(core::StrCat("-", word.substr(n, 1)));
        }
      }
    }
  }
  return out;
}

// Loom's --usage against Slurm's: the same command and options, arranged and worded Loom's way.
void ExpectUsageLikeSlurm(std::string_view command, std::string_view loom, std::string_view slurm) {
  EXPECT_EQ(UsageOptions(loom), UsageOptions(slurm));
  EXPECT_NE(loom, slurm);
  EXPECT_TRUE(loom.starts_with(core::StrCat("Usage: ", command, " "))) << loom;
  std::set<std::string> slurm_lines;
  for (std::string_view line : core::Split(slurm, '\n')) slurm_lines.insert(Squeeze(line));
  const std::vector<std::string_view> lines = core::Split(loom, '\n');
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string line = Squeeze(lines[i]);
    EXPECT_TRUE(line.empty() || !slurm_lines.contains(line)) << "a line of Slurm's: " << line;
  }
}

// Every golden error of `command`, --help, --usage and --version.
void ExpectLikeSlurm(const std::string& command) {
  const std::vector<ErrorCase> cases = ErrorCases(command);
  EXPECT_GE(cases.size(), 5u);
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(core::StrCat(command, " ", core::Join(c.args, " ")));
    CommandResult r = RunSlurmCommand(command, c.args);
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.exit_status, c.exit_status);
    EXPECT_EQ(r.out, "");
  }
  std::map<std::string, std::string> loom;
  for (std::string_view flag : {"help", "usage"}) {
    SCOPED_TRACE(core::StrCat(command, " --", flag));
    CommandResult r = RunSlurmCommand(command, {core::StrCat("--", flag)});
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.exit_status, 0);
    loom[std::string(flag)] = r.out;
  }
  const std::string help = Golden(core::StrCat(command, "-help.txt"));
  const std::string usage = Golden(core::StrCat(command, "-usage.txt"));
  {
    SCOPED_TRACE(core::StrCat(command, " --help"));
    ExpectHelpLikeSlurm(loom["help"], help);
  }
  {
    SCOPED_TRACE(core::StrCat(command, " --usage"));
    if (usage == help) {
      EXPECT_EQ(loom["usage"], loom["help"]);  // scontrol --usage prints its help
    } else {
      ExpectUsageLikeSlurm(command, loom["usage"], usage);
    }
  }
  for (std::string_view flag : {"-V", "--version", "--vers"}) {
    CommandResult r = RunSlurmCommand(command, {std::string(flag)});
    EXPECT_EQ(r.out, "slurm-wlm 22.05.8 (loom 0.1.0)\n") << command << " " << flag;
    EXPECT_EQ(r.exit_status, 0);
  }
}

TEST(CommandLineGoldenTest, Squeue) { ExpectLikeSlurm("squeue"); }
TEST(CommandLineGoldenTest, Sinfo) { ExpectLikeSlurm("sinfo"); }
TEST(CommandLineGoldenTest, Scancel) { ExpectLikeSlurm("scancel"); }
TEST(CommandLineGoldenTest, Scontrol) { ExpectLikeSlurm("scontrol"); }
TEST(CommandLineGoldenTest, Sstat) { ExpectLikeSlurm("sstat"); }
TEST(CommandLineGoldenTest, Sdiag) { ExpectLikeSlurm("sdiag"); }

// Checked against Slurm 22.05.8 by hand: the first help-like option ends the scan, so a
// malformed option after it is never reported, and one before it is.
TEST(CommandLineGoldenTest, HelpEndsTheScan) {
  const std::string usage = RunSlurmCommand("squeue", {"--usage"}).out;
  ASSERT_THAT(usage, StartsWith("Usage: squeue "));
  CommandResult r = RunSlurmCommand("squeue", {"--usa", "--bogus"});
  EXPECT_EQ(r.out, usage);
  EXPECT_EQ(r.exit_status, 0);
  r = RunSlurmCommand("sinfo", {"--bogus", "--help"});
  EXPECT_EQ(r.err,
            "sinfo: unrecognized option '--bogus'\nTry \"sinfo --help\" for more information\n");
  EXPECT_EQ(r.exit_status, 1);
}

// squeue takes the list of a bare -j from the next operand (Slurm's rule); any other operand is
// refused with the usage text, as Slurm's squeue does.
TEST(CommandLineGoldenTest, SqueueOperands) {
  const std::string usage = RunSlurmCommand("squeue", {"--usage"}).out;
  ASSERT_THAT(usage, StartsWith("Usage: squeue "));
  CommandResult r = RunSlurmCommand("squeue", {"-j", "x"});
  EXPECT_EQ(r.err, "squeue: error: Invalid job id: x\n");
  EXPECT_EQ(r.exit_status, 1);
  r = RunSlurmCommand("squeue", {"foo"});
  EXPECT_EQ(r.err, "squeue: error: Unrecognized option: foo\n");
  EXPECT_EQ(r.out, usage);
  EXPECT_EQ(r.exit_status, 1);
}

// Options Slurm has and Loom does not honour yet are recognised, abbreviated or not, and say so.
TEST(CommandLineGoldenTest, OptionsLoomLacksSaySo) {
  const std::vector<std::vector<std::string>> lines = {
      {"squeue", "--qos=normal"}, {"squeue", "-i", "5"},          {"sinfo", "--summ"},
      {"scancel", "-b", "12"},    {"sstat", "--pidf", "-j", "1"}, {"sdiag", "-r"},
  };
  for (const std::vector<std::string>& line : lines) {
    CommandResult r =
        RunSlurmCommand(line[0], std::vector<std::string>(line.begin() + 1, line.end()));
    EXPECT_THAT(r.err, StartsWith(core::StrCat(line[0], ": error: --")));
    EXPECT_THAT(r.err, ::testing::HasSubstr("is not supported by Loom yet")) << line[1];
    EXPECT_EQ(r.exit_status, 1) << line[1];
  }
}

// An abbreviation reaches the option it names; options after operands are still options
// (glibc's permutation) unless POSIXLY_CORRECT is set.
TEST(CommandLineGoldenTest, AbbreviationsAndPermutation) {
  // Past its options squeue looks for the controller's configuration.
  CommandResult r = RunSlurmCommand("squeue", {"--for=%i", "--noh", "--us=root"});
  EXPECT_THAT(r.err, StartsWith("squeue: option '--us=root' is ambiguous"));
  r = RunSlurmCommand("squeue", {"--for=%i", "--noh", "--use=root"});
  EXPECT_THAT(r.err, ::testing::HasSubstr("/nonexistent/slurm.conf"));
  r = RunSlurmCommand("scancel", {"12", "--sig"});
  EXPECT_EQ(r.err,
            "scancel: option '--signal' requires an argument\n"
            "Try \"scancel --help\" for more information\n");
  // With POSIXLY_CORRECT the first operand ends the options: "--bogus" is a job id.
  r = ::loom::testing::RunCommand(
      core::StrCat(LOOM_BIN_DIR, "/scancel"), {"12", "--bogus"},
      {{"POSIXLY_CORRECT", "1"}, {"SLURM_CONF", "/nonexistent/slurm.conf"}});
  EXPECT_THAT(r.err, ::testing::HasSubstr("/nonexistent/slurm.conf"));
  EXPECT_EQ(r.exit_status, 1);
}

}  // namespace
}  // namespace loom::cli
