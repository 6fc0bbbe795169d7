#include "conf/cgroup_conf.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/strings.h"

namespace loom::conf {
namespace {

using core::StrCat;

// Keys of Slurm 22.05's cgroup.conf that Loom accepts without acting on.
constexpr std::string_view kKnownKeys[] = {
    "CgroupAutomount",   "CgroupReleaseAgentDir", "ConstrainKmemSpace", "MaxKmemPercent",
    "MinKmemSpace",      "MaxRAMPercent",         "MaxSwapPercent",     "MemorySwappiness",
    "MinRAMSpace",       "TaskAffinity",          "IgnoreSystemd",      "IgnoreSystemdOnFailure",
    "EnableControllers", "SignalChildrenProcesses"};

std::optional<bool> ParseYesNo(std::string_view v) {
  if (core::EqualsIgnoreCase(v, "yes") || core::EqualsIgnoreCase(v, "true") || v == "1") return true;
  if (core::EqualsIgnoreCase(v, "no") || core::EqualsIgnoreCase(v, "false") || v == "0") return false;
  return std::nullopt;
}

std::optional<double> ParsePercent(std::string_view v) {
  if (v.ends_with('%')) v.remove_suffix(1);
  std::string s(v);
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || d < 0 || d > 1e6) return std::nullopt;
  return d;
}

}  // namespace

StatusOr<CgroupConfig> ParseCgroupConf(std::string_view text, std::string_view file_name,
                                       std::vector<Diagnostic>* warnings) {
  CgroupConfig c;
  std::vector<std::string> errors;
  int line_no = 0;
  for (std::string_view raw : core::Split(text, '\n')) {
    ++line_no;
    std::string_view line = raw;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = core::Trim(line);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    const std::string where = StrCat(file_name, ":", line_no, ": ");
    if (eq == std::string_view::npos) {
      errors.push_back(StrCat(where, "error: '", line, "' is not Key=Value"));
      continue;
    }
    const std::string_view key = core::Trim(line.substr(0, eq));
    const std::string_view value = core::Trim(line.substr(eq + 1));
    auto bad = [&](std::string_view expected) {
      errors.push_back(StrCat(where, "error: invalid value '", value, "' for ", key,
                              ": expected ", expected));
    };
    auto yes_no = [&](bool* out) {
      if (auto b = ParseYesNo(value)) *out = *b; else bad("yes or no");
    };
    auto percent = [&](double* out) {
      if (auto p = ParsePercent(value)) *out = *p; else bad("a percentage such as 100 or 98.5");
    };
    if (core::EqualsIgnoreCase(key, "CgroupPlugin")) {
      if (core::EqualsIgnoreCase(value, "autodetect")) c.plugin = CgroupPlugin::kAutodetect;
      else if (core::EqualsIgnoreCase(value, "cgroup/v1")) c.plugin = CgroupPlugin::kV1;
      else if (core::EqualsIgnoreCase(value, "cgroup/v2")) c.plugin = CgroupPlugin::kV2;
      else bad("autodetect, cgroup/v1 or cgroup/v2");
    } else if (core::EqualsIgnoreCase(key, "CgroupMountpoint")) {
      if (value.empty() || value.front() != '/') bad("an absolute path");
      else c.mountpoint = std::string(value);
    } else if (core::EqualsIgnoreCase(key, "ConstrainCores")) {
      yes_no(&c.constrain_cores);
    } else if (core::EqualsIgnoreCase(key, "ConstrainRAMSpace")) {
      yes_no(&c.constrain_ram_space);
    } else if (core::EqualsIgnoreCase(key, "AllowedRAMSpace")) {
      percent(&c.allowed_ram_space_percent);
    } else if (core::EqualsIgnoreCase(key, "ConstrainSwapSpace")) {
      yes_no(&c.constrain_swap_space);
    } else if (core::EqualsIgnoreCase(key, "AllowedSwapSpace")) {
      percent(&c.allowed_swap_space_percent);
    } else if (core::EqualsIgnoreCase(key, "ConstrainDevices")) {
      yes_no(&c.constrain_devices);
    } else if (core::EqualsIgnoreCase(key, "AllowedDevicesFile")) {
      c.allowed_devices_file = std::string(value);
    } else if (core::EqualsIgnoreCase(key, "AllowedDevices")) {
      // Not a Slurm 22.05 key, but guides on the web use it for the devices every GPU job
      // needs; those already stay open (only unallocated GPUs are denied).
      if (warnings) {
        warnings->push_back({Diagnostic::Severity::kWarning,
                             SourceLocation{std::string(file_name), line_no}, std::string(key),
                             "AllowedDevices is not a key of Slurm's cgroup.conf and is ignored: "
                             "ConstrainDevices denies only the GPUs a job was not given, so "
                             "devices such as /dev/nvidiactl and /dev/nvidia-uvm stay usable"});
      }
    } else {
      bool known = false;
      for (std::string_view k : kKnownKeys) known = known || core::EqualsIgnoreCase(key, k);
      if (!known) {
        errors.push_back(StrCat(where, "error: unknown cgroup.conf key '", key, "'"));
      } else if (warnings) {
        warnings->push_back({Diagnostic::Severity::kWarning,
                             SourceLocation{std::string(file_name), line_no},
                             std::string(key),
                             StrCat(key, " is accepted but not acted on by Loom yet")});
      }
    }
  }
  if (!errors.empty()) {
    return absl::InvalidArgumentError(core::Join(errors, "\n"));
  }
  return c;
}

StatusOr<CgroupConfig> LoadCgroupConf(const std::string& slurm_conf_path,
                                      std::vector<Diagnostic>* warnings) {
  const std::string path =
      (std::filesystem::path(slurm_conf_path).parent_path() / "cgroup.conf").string();
  std::ifstream in(path);
  if (!in) return CgroupConfig{};
  std::ostringstream text;
  text << in.rdbuf();
  return ParseCgroupConf(text.str(), path, warnings);
}

}  // namespace loom::conf
