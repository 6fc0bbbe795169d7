// The squeue field table, shared by the files behind squeue_format.h: parsing of `-o` and
// `-O` into columns (squeue_fields.cc), the layouts, sorting and filters (squeue_format.cc)
// and `--json` (squeue_json.cc). Internal to the format library.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/format/squeue_format.h"
#include "cli/format/views.h"
#include "core/status.h"

namespace loom::cli::format::internal {

// One entry of the field table: a -o letter, an -O name, or both.
struct FieldSpec;

// One column of the layout: a field, or literal text when `spec` is null.
struct Column {
  const FieldSpec* spec = nullptr;
  int width = 0;
  bool right = false;
  std::string suffix;  // printed after the column (the text up to the next field)
};

// "-o": "%[.][width]letter" fields; text between fields is printed as it stands.
StatusOr<std::vector<Column>> ParseFormat(std::string_view fmt);

// "-O": "name[:[.][width][suffix]]" separated by commas; width 20 when not given.
StatusOr<std::vector<Column>> ParseLongFormat(std::string_view fmt);

// Appends one row of `cols` for `job`, or the header row when `job` is null; `buf` is scratch.
void AppendRow(std::string* out, const std::vector<Column>& cols, const JobView* job,
               const RenderContext& ctx, std::string* buf);

// The -j/-u/-p/-n filters of `o`; the state filter (-t) is the caller's.
bool PassesExplicitFilters(const JobView& j, const SqueueOptions& o);

}  // namespace loom::cli::format::internal
