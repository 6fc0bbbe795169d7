#include "cli/format/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/strings.h"

namespace loom::cli::format {
namespace {

struct CivilTime {
  int64_t year;
  int month;  // 1..12
  int day;    // 1..31
  int hour, minute, second;
  int weekday;  // 0 = Sunday
};

// Days since 1970-01-01 to a proleptic Gregorian date (the era-based method: 400-year eras of
// 146097 days, years starting on March 1st so the leap day falls last).
CivilTime ToCivil(int64_t t, int32_t utc_offset_s) {
  int64_t local = t + utc_offset_s;
  int64_t days = local >= 0 ? local / 86400 : (local - 86399) / 86400;
  int64_t secs = local - days * 86400;
  CivilTime c;
  c.hour = static_cast<int>(secs / 3600);
  c.minute = static_cast<int>(secs / 60 % 60);
  c.second = static_cast<int>(secs % 60);
  c.weekday = static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;                                       // [0, 146096]
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  int64_t mp = (5 * doy + 2) / 153;                                     // [0, 11]
  c.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  c.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  c.year = yoe + era * 400 + (c.month <= 2 ? 1 : 0);
  return c;
}

}  // namespace

void AppendIsoTime(std::string* out, int64_t t, int32_t utc_offset_s) {
  CivilTime c = ToCivil(t, utc_offset_s);
  char buf[48];
  int n = std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d",
                        static_cast<long long>(c.year), c.month, c.day, c.hour, c.minute, c.second);
  out->append(buf, static_cast<size_t>(n));
}

std::string FormatIsoTime(int64_t t, int32_t utc_offset_s) {
  std::string out;
  AppendIsoTime(&out, t, utc_offset_s);
  return out;
}

std::string FormatCtime(int64_t t, int32_t utc_offset_s) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  CivilTime c = ToCivil(t, utc_offset_s);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %s %2d %02d:%02d:%02d %lld", kDays[c.weekday],
                kMonths[c.month - 1], c.day, c.hour, c.minute, c.second,
                static_cast<long long>(c.year));
  return buf;
}

void AppendColumn(std::string* out, std::string_view value, int width, bool right) {
  if (width <= 0) {
    out->append(value);
    return;
  }
  size_t w = static_cast<size_t>(width);
  if (value.size() >= w) {
    out->append(value.substr(0, w));
    return;
  }
  if (right) out->append(w - value.size(), ' ');
  out->append(value);
  if (!right) out->append(w - value.size(), ' ');
}

void AppendAcctRow(std::string* out, const std::vector<AcctCell>& cells,
                   const AcctTableStyle& style) {
  for (size_t i = 0; i < cells.size(); ++i) {
    const AcctCell& c = cells[i];
    if (style.delimiter != 0) {
      out->append(c.value);
      if (style.trailing || i + 1 < cells.size()) out->push_back(style.delimiter);
      continue;
    }
    const size_t w = static_cast<size_t>(std::max(0, c.width));
    std::string_view shown = c.value;
    const bool cut = shown.size() > w;
    if (cut) shown = shown.substr(0, w == 0 ? 0 : w - 1);
    const size_t pad = w - shown.size() - (cut && w > 0 ? 1 : 0);
    if (!c.left) out->append(pad, ' ');
    out->append(shown);
    if (cut && w > 0) out->push_back('+');
    if (c.left) out->append(pad, ' ');
    out->push_back(' ');
  }
  out->push_back('\n');
}

void AppendAcctHeader(std::string* out, const std::vector<AcctCell>& names,
                      const AcctTableStyle& style) {
  AppendAcctRow(out, names, style);
  if (style.delimiter != 0) return;
  for (const AcctCell& c : names) {
    out->append(static_cast<size_t>(std::max(0, c.width)), '-');
    out->push_back(' ');
  }
  out->push_back('\n');
}

std::string FormatMemory(int64_t mb) {
  if (mb == 0) return "0";
  if (mb % (1024 * 1024) == 0) return core::StrCat(mb / (1024 * 1024), "T");
  if (mb % 1024 == 0) return core::StrCat(mb / 1024, "G");
  return core::StrCat(mb, "M");
}

// ---------------------------------------------------------------------------------------------
// JsonWriter

void JsonWriter::Open(std::string_view key) {
  if (depth_ > 0) {
    if (!first_) out_->push_back(',');
    out_->push_back('\n');
    out_->append(static_cast<size_t>(depth_) * 2, ' ');
  }
  first_ = false;
  if (!key.empty()) {
    // Keys are the program's own names, never text that needs escaping.
    out_->push_back('"');
    out_->append(key);
    out_->append("\": ");
  }
}

void JsonWriter::Close(char bracket) {
  --depth_;
  out_->push_back('\n');
  out_->append(static_cast<size_t>(depth_) * 2, ' ');
  out_->push_back(bracket);
  first_ = false;
}

void BeginSlurmJson(JsonWriter& w, const JsonMeta& meta) {
  w.BeginObject();
  w.BeginObject("meta");
  w.BeginObject("plugin");
  w.String("type", meta.plugin_type);
  w.String("name", meta.plugin_name);
  w.EndObject();
  w.BeginObject("Slurm");
  w.BeginObject("version");
  w.Int("major", meta.major);
  w.Int("micro", meta.micro);
  w.Int("minor", meta.minor);
  w.EndObject();
  w.String("release", meta.release);
  w.EndObject();
  w.EndObject();
  w.BeginArray("errors");
  w.EndArray();
}

void JsonWriter::BeginObject(std::string_view key) {
  Open(key);
  out_->push_back('{');
  ++depth_;
  first_ = true;
}

void JsonWriter::EndObject() { Close('}'); }

void JsonWriter::BeginArray(std::string_view key) {
  Open(key);
  out_->push_back('[');
  ++depth_;
  first_ = true;
}

void JsonWriter::EndArray() { Close(']'); }

void JsonWriter::String(std::string_view key, std::string_view value) {
  Open(key);
  AppendString(value);
}

void JsonWriter::Int(std::string_view key, int64_t value) {
  Open(key);
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out_->append(buf, static_cast<size_t>(end - buf));
}

void JsonWriter::Double(std::string_view key, double value) {
  Open(key);
  if (!std::isfinite(value)) {
    out_->append("null");
    return;
  }
  char buf[40];
  int n = std::snprintf(buf, sizeof buf, "%.17g", value);
  std::string_view s(buf, static_cast<size_t>(n));
  out_->append(s);
  if (s.find_first_of(".eE") == std::string_view::npos) out_->append(".0");
}

void JsonWriter::Bool(std::string_view key, bool value) {
  Open(key);
  out_->append(value ? "true" : "false");
}

void JsonWriter::Null(std::string_view key) {
  Open(key);
  out_->append("null");
}

void JsonWriter::AppendString(std::string_view s) {
  out_->push_back('"');
  size_t run = 0;  // start of the pending run of characters that need no escape
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != '/') continue;
    const char* esc = nullptr;
    char ubuf[8];
    switch (c) {
      case '"':
        esc = "\\\"";
        break;
      case '\\':
        esc = "\\\\";
        break;
      case '/':
        esc = "\\/";
        break;
      case '\b':
        esc = "\\b";
        break;
      case '\f':
        esc = "\\f";
        break;
      case '\n':
        esc = "\\n";
        break;
      case '\r':
        esc = "\\r";
        break;
      case '\t':
        esc = "\\t";
        break;
      default:
        if (c < 0x20) {
          std::snprintf(ubuf, sizeof ubuf, "\\u%04x", c);
          esc = ubuf;
        }
    }
    if (esc != nullptr) {
      out_->append(s.substr(run, i - run));
      out_->append(esc);
      run = i + 1;
    }
  }
  out_->append(s.substr(run));
  out_->push_back('"');
}

}  // namespace loom::cli::format
