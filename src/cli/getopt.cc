#include "cli/getopt.h"

#include "core/strings.h"

namespace loom::cli::getopt_internal {
namespace {

using core::StrCat;

Status Error(std::string_view line) { return absl::InvalidArgumentError(std::string(line)); }

// Resolves "name[=value]" (a long option without its dashes) to its row, as glibc does: an
// exact name wins; otherwise a unique prefix, where rows of one option with one argument kind
// count once. The ambiguous rows are listed in table order.
StatusOr<size_t> FindLong(std::string_view text, std::span<const Row> rows,
                          std::string_view program) {
  std::string_view name = text.substr(0, text.find('='));
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].name.empty() && rows[i].name == name) return i;
  }
  std::optional<size_t> found;
  std::vector<size_t> listed;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].name.empty() || !rows[i].name.starts_with(name)) continue;
    if (!found) {
      found = i;
    } else if (rows[*found].group != rows[i].group || rows[*found].arg != rows[i].arg) {
      if (listed.empty()) listed.push_back(*found);
      listed.push_back(i);
    }
  }
  if (!listed.empty()) {
    std::string line = StrCat(program, ": option '--", text, "' is ambiguous; possibilities:");
    for (size_t i : listed) line += StrCat(" '--", rows[i].name, "'");
    return Error(line);
  }
  if (!found) return Error(StrCat(program, ": unrecognized option '--", text, "'"));
  return *found;
}

std::optional<size_t> FindShort(char c, std::span<const Row> rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].short_name == c && c != 0) return i;
  }
  return std::nullopt;
}

}  // namespace

RawScan Scan(std::span<const std::string> words, std::span<const Row> rows,
             std::string_view program, Ordering ordering) {
  RawScan out;
  auto fail = [&out](Status s) {
    out.error = std::move(s);
    return std::move(out);
  };
  auto ended = [&] { return !out.hits.empty() && rows[out.hits.back().row].final; };
  size_t i = 0;
  for (; i < words.size() && !ended(); ++i) {
    const std::string& w = words[i];
    if (w == "--") {
      ++i;
      break;
    }
    if (w.size() < 2 || w[0] != '-') {  // an operand (or "-")
      if (ordering == Ordering::kRequireOrder) break;
      out.rest.push_back(w);
      continue;
    }
    if (w[1] == '-') {
      std::string_view text = std::string_view(w).substr(2);
      StatusOr<size_t> found = FindLong(text, rows, program);
      if (!found.ok()) return fail(found.status());
      const Row& o = rows[*found];
      const size_t eq = text.find('=');
      Hit hit{*found, std::nullopt};
      if (eq != std::string_view::npos) {
        if (o.arg == ArgKind::kNone) {
          return fail(
              Error(StrCat(program, ": option '--", o.name, "' doesn't allow an argument")));
        }
        hit.value = std::string(text.substr(eq + 1));
      } else if (o.arg == ArgKind::kRequired) {
        if (i + 1 >= words.size()) {
          return fail(Error(StrCat(program, ": option '--", o.name, "' requires an argument")));
        }
        hit.value = words[++i];
      }
      out.hits.push_back(std::move(hit));
      continue;
    }
    // A cluster of short options: "-lN", "-N2", "-J name".
    for (size_t k = 1; k < w.size() && !ended(); ++k) {
      std::optional<size_t> found = FindShort(w[k], rows);
      if (!found) return fail(Error(StrCat(program, ": invalid option -- '", w[k], "'")));
      Hit hit{*found, std::nullopt};
      if (rows[*found].arg == ArgKind::kNone) {
        out.hits.push_back(std::move(hit));
        continue;
      }
      if (k + 1 < w.size()) {
        hit.value = w.substr(k + 1);
      } else if (rows[*found].arg == ArgKind::kRequired) {
        if (i + 1 >= words.size()) {
          return fail(Error(StrCat(program, ": option requires an argument -- '", w[k], "'")));
        }
        hit.value = words[++i];
      }
      out.hits.push_back(std::move(hit));
      break;
    }
  }
  if (ended()) return out;
  out.rest.insert(out.rest.end(), words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  return out;
}

}  // namespace loom::cli::getopt_internal
