// Which Slurm Loom speaks for, and Loom's own version: what `--version`, `-V` and
// `scontrol show config`'s SLURM_VERSION say. Scripts test the Slurm release as they test
// Slurm's.
#pragma once

#include <string_view>

namespace loom::core {

inline constexpr std::string_view kSlurmRelease = "22.05.8";
inline constexpr std::string_view kLoomVersion = "0.1.0";
// "slurm-wlm 22.05.8 (loom 0.1.0)": what every command and daemon prints for --version.
inline constexpr std::string_view kVersionLine = "slurm-wlm 22.05.8 (loom 0.1.0)";
// "22.05.8 (loom 0.1.0)": SLURM_VERSION in `scontrol show config`.
inline constexpr std::string_view kSlurmVersionValue = "22.05.8 (loom 0.1.0)";
static_assert(kVersionLine.substr(10) == kSlurmVersionValue);
static_assert(kSlurmVersionValue.starts_with(kSlurmRelease));

}  // namespace loom::core
