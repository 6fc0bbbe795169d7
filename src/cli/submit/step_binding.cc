#include "cli/submit/step_binding.h"

#include <cctype>
#include <string>

#include "core/strings.h"

namespace loom::cli::submit {
namespace {

using core::StrCat;

// "0,1,2" or "0x3,0xc" or "0*4,1": numbers (hex allowed with `hex`), each with an optional
// "*count".
bool ValidList(std::string_view list, bool hex) {
  if (list.empty()) return false;
  for (std::string_view item : core::Split(list, ',')) {
    std::string_view value = item;
    if (size_t star = item.find('*'); star != std::string_view::npos) {
      value = item.substr(0, star);
      std::string_view count = item.substr(star + 1);
      if (count.empty()) return false;
      for (char c : count) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      }
    }
    if (value.empty()) return false;
    std::string_view digits = value;
    const bool is_hex = hex || value.starts_with("0x") || value.starts_with("0X");
    if (value.starts_with("0x") || value.starts_with("0X")) digits.remove_prefix(2);
    if (digits.empty()) return false;
    for (char c : digits) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (!(is_hex ? std::isxdigit(u) : std::isdigit(u))) return false;
    }
  }
  return true;
}

bool PositiveNumber(std::string_view text) {
  std::optional<int64_t> n = core::ParseInt(text);
  return n && *n > 0;
}

}  // namespace

Status ValidateCpuBind(std::string_view value) {
  if (value.empty()) return absl::InvalidArgumentError("srun: error: missing --cpu-bind argument");
  bool have_type = false;
  for (std::string_view tok : core::Split(value, ',')) {
    // Lists hold commas too: a list type takes the rest of the value.
    const size_t at = static_cast<size_t>(tok.data() - value.data());
    std::string lower = core::ToLower(tok);
    if (lower == "q" || lower == "quiet" || lower == "v" || lower == "verbose") continue;
    if (have_type) {
      return absl::InvalidArgumentError(
          StrCat("srun: error: unrecognized --cpu-bind argument \"", tok, "\""));
    }
    if (lower == "no" || lower == "none" || lower == "rank" || lower == "rank_ldom" ||
        lower == "sockets" || lower == "cores" || lower == "threads" || lower == "ldoms" ||
        lower == "boards") {
      have_type = true;
      continue;
    }
    for (const char* list_type : {"map_cpu", "mask_cpu", "map_ldom", "mask_ldom"}) {
      const std::string name = list_type;
      if (lower.rfind(name, 0) != 0) continue;
      std::string_view rest = value.substr(at + name.size());
      if (rest.empty() || (rest[0] != ':' && rest[0] != '=')) break;
      rest.remove_prefix(1);
      if (rest.empty()) {
        return absl::InvalidArgumentError(
            StrCat("srun: error: missing list for \"--cpu-bind=", name, ":<list>\""));
      }
      if (!ValidList(rest, name.starts_with("mask"))) {
        return absl::InvalidArgumentError(
            StrCat("srun: error: unrecognized --cpu-bind argument \"", tok, "\""));
      }
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        StrCat("srun: error: unrecognized --cpu-bind argument \"", tok, "\""));
  }
  return absl::OkStatus();
}

Status ValidateGpuBind(std::string_view value) {
  std::string_view rest = value;
  if (core::ToLower(rest).rfind("verbose,", 0) == 0) rest.remove_prefix(8);
  const std::string lower = core::ToLower(rest);
  bool ok = false;
  if (lower == "closest" || lower == "none") {
    ok = true;
  } else if (lower.rfind("map_gpu:", 0) == 0) {
    ok = ValidList(rest.substr(8), false);
  } else if (lower.rfind("mask_gpu:", 0) == 0) {
    ok = ValidList(rest.substr(9), true);
  } else if (lower.rfind("per_task:", 0) == 0) {
    ok = PositiveNumber(rest.substr(9));
  } else if (lower.rfind("single:", 0) == 0) {
    ok = PositiveNumber(rest.substr(7));
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat("srun: error: Invalid --gpu-bind argument: ", value));
}

}  // namespace loom::cli::submit
