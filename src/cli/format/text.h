// Text pieces every Slurm-style rendering shares: timestamps in a fixed time zone, padded and
// truncated columns, Slurm's memory sizes, and a JSON writer laid out as Slurm's. Pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::cli::format {

// "2026-11-29T18:56:28": Slurm's timestamp (`scontrol show`, `squeue %S`, `sinfo -R`) of Unix
// time `t` in the zone `utc_offset_s` seconds east of UTC.
std::string FormatIsoTime(int64_t t, int32_t utc_offset_s);
void AppendIsoTime(std::string* out, int64_t t, int32_t utc_offset_s);

// "Sun Nov 29 18:56:28 2026" (ctime's layout, day padded with a space): the date line of
// `squeue -l` and `sinfo -l`.
std::string FormatCtime(int64_t t, int32_t utc_offset_s);

// Appends `value` as one column of a Slurm table: `width` 0 prints the whole value; otherwise
// the value is cut to `width` bytes and padded with spaces on the left (`right`) or right.
void AppendColumn(std::string* out, std::string_view value, int width, bool right);

// The tables of the accounting commands (sacct, sacctmgr, sreport, sstat): in columns, each
// cell padded to its width (right-justified unless `left`) and followed by a space, a value
// longer than its width cut to width-1 bytes and marked with "+"; parsable (-p, -P), the cells
// joined by `delimiter`, with one after the last cell too when `trailing`.
struct AcctCell {
  std::string_view value;
  int width = 10;
  bool left = false;
};
struct AcctTableStyle {
  char delimiter = 0;  // 0: columns
  bool trailing = false;
};
void AppendAcctRow(std::string* out, const std::vector<AcctCell>& cells,
                   const AcctTableStyle& style);
// The header of such a table: the names, then (in columns) a run of dashes per column.
void AppendAcctHeader(std::string* out, const std::vector<AcctCell>& names,
                      const AcctTableStyle& style);

// Megabytes as Slurm prints a memory size in job records ("2G", "1000M", "0").
std::string FormatMemory(int64_t mb);

// Streams JSON in the layout Slurm's commands print (json-c's pretty form as Slurm 22.05 uses
// it): two-space indents, `"key": value`, empty arrays and objects as an open bracket, a new
// line and the closing bracket, '/' escaped as "\/", whole doubles with ".0", and no new line
// at the end. The caller nests Begin/End calls correctly; keys are written only inside objects
// and are plain names (written as given, unescaped).
class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject(std::string_view key = {});
  void EndObject();
  void BeginArray(std::string_view key = {});
  void EndArray();

  void String(std::string_view key, std::string_view value);
  void Int(std::string_view key, int64_t value);
  void Double(std::string_view key, double value);
  void Bool(std::string_view key, bool value);
  void Null(std::string_view key);
  // Array elements.
  void String(std::string_view value) { String({}, value); }

 private:
  // Starts a value: separator, new line and indent, then `"key": ` when `key` is not empty.
  void Open(std::string_view key);
  void Close(char bracket);
  void AppendString(std::string_view s);

  std::string* out_;
  int depth_ = 0;
  bool first_ = true;  // no value yet at this depth
};

// The versions a command's JSON reports for itself (Slurm's "meta" object): squeue's
// OpenAPI v0.0.38 by default, sacct's DB v0.0.38 with the other plugin names.
struct JsonMeta {
  std::string plugin_type = "openapi/v0.0.38";
  std::string plugin_name = "Slurm OpenAPI v0.0.38";
  int major = 22;
  int minor = 5;
  int micro = 8;
  std::string release = "22.05.8";
};

// Opens the document as Slurm 22.05's commands begin it: the top object, its "meta" and an
// empty "errors"; the caller adds its list and closes the object.
void BeginSlurmJson(JsonWriter& w, const JsonMeta& meta);

}  // namespace loom::cli::format
