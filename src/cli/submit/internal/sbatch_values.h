// The values of individual sbatch options: Slurm's number, count, duration, signal and
// GRES syntaxes, and errors in sbatch's words carrying sbatch's exit status. Shared by the
// files of the submission layer; not part of its interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/submit/internal/sbatch_getopt.h"
#include "core/status.h"
#include "model/job_request.h"

namespace loom::cli::submit::internal {

inline constexpr int kFatalExit = 1;

// An error as sbatch prints it (`lines`), ending the command with `exit_code`.
Status Fail(std::string_view lines, int exit_code);

// Gives a status from a helper (whose message is already sbatch's text) its exit code.
Status WithExit(const Status& s, int exit_code);

std::string OptName(Opt id);

Status BadSpec(Opt id);

// Slurm's "parse_int": a whole base-10 number (an optional sign, leading blanks allowed).
std::optional<int64_t> SlurmInt(std::string_view s);

// A positive count ("Invalid numeric value" otherwise, exit 1); zero allowed where noted.
StatusOr<int32_t> Count(Opt id, std::string_view value, bool allow_zero = false);

// A node count with Slurm's k/m suffixes; nullopt when malformed.
std::optional<int64_t> NodeCount(std::string_view s);

// A duration for --time / --time-min: Slurm's forms, whole minutes (seconds round up);
// 0 means no limit.
std::optional<int64_t> TimeLimit(std::string_view s);

bool IsYes(std::string_view v);

// The last component of a path ("train.py" for "/a/train.py").
std::string BaseName(std::string_view path);
// `path` made absolute against `base` (unchanged when already absolute, or without a base).
std::string Absolute(std::string_view path, std::string_view base);

// Environment flags: set when empty, "yes" or a non-zero number.
bool EnvFlagSet(std::string_view v);

bool ValidSignal(std::string_view spec);

bool ValidMailType(std::string_view list);

// "[type:]count" items of --gpus*, or "name[[:type]:count]" items of --gres (count with an
// optional k/m/g/t/p multiplier). nullopt when malformed.
std::optional<std::vector<model::TypedCount>> ParseCounts(std::string_view text, bool gres);

}  // namespace loom::cli::submit::internal
