#include "sim/swf.h"

#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/strings.h"

namespace loom::sim {
namespace {

// Parses one number (SWF fields are integers, sometimes with a fraction). Advances *p.
bool ParseField(const char*& p, const char* end, double* out) {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  if (p >= end) return false;
  bool neg = false;
  if (*p == '-' || *p == '+') {
    neg = *p == '-';
    ++p;
  }
  const char* start = p;
  double v = 0;
  while (p < end && *p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
  if (p < end && *p == '.') {
    ++p;
    double scale = 0.1;
    while (p < end && *p >= '0' && *p <= '9') {
      v += (*p++ - '0') * scale;
      scale *= 0.1;
    }
  }
  if (p == start) return false;
  if (p < end && *p != ' ' && *p != '\t' && *p != '\r') return false;
  *out = neg ? -v : v;
  return true;
}

// The number after "Key:" in a header comment line, if it is that key's line.
bool HeaderValue(std::string_view line, std::string_view key, int64_t* out) {
  std::string_view body = core::Trim(line.substr(1));
  if (body.size() <= key.size() || !core::EqualsIgnoreCase(body.substr(0, key.size()), key) ||
      body[key.size()] != ':') {
    return false;
  }
  std::string_view rest = core::Trim(body.substr(key.size() + 1));
  size_t n = 0;
  while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
  std::optional<int64_t> v = core::ParseInt(rest.substr(0, n));
  if (!v) return false;
  *out = *v;
  return true;
}

}  // namespace

StatusOr<SwfTrace> ParseSwf(std::string_view text, std::string_view name,
                            const SwfReadOptions& opts) {
  SwfTrace trace;
  trace.name = std::string(name);
  trace.estimates_from_runtime = opts.estimate_from_runtime;
  struct Raw {
    double f[18];
    int64_t line;
  };
  std::vector<Raw> raws;
  raws.reserve(text.size() / 80);
  int64_t max_procs = 0, max_nodes = 0;
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    std::string_view t = core::Trim(line);
    if (t.empty()) continue;
    if (t.front() == ';') {
      HeaderValue(t, "MaxProcs", &max_procs) || HeaderValue(t, "MaxNodes", &max_nodes);
      continue;
    }
    Raw r;
    r.line = line_no;
    const char* p = t.data();
    const char* end = t.data() + t.size();
    int n = 0;
    bool ok = true;
    for (; n < 18 && ok; ++n) ok = ParseField(p, end, &r.f[n]);
    while (ok && p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
    if (!ok || p != end) {
      if (opts.skip_bad_lines) {
        ++trace.bad_lines;
        continue;
      }
      return absl::InvalidArgumentError(core::StrCat(
          name, ":", line_no, ": malformed SWF job line (expected 18 numeric fields): '",
          t.substr(0, 120), "'; pass --skip-bad-lines to skip such lines"));
    }
    raws.push_back(r);
  }
  trace.job_lines = static_cast<int64_t>(raws.size());
  trace.max_nodes = max_nodes;
  int64_t m = opts.machine_procs > 0 ? opts.machine_procs : (max_procs > 0 ? max_procs : max_nodes);
  if (m <= 0) {
    return absl::InvalidArgumentError(core::StrCat(
        name, ": the header gives no machine size (no '; MaxProcs:' or '; MaxNodes:' line); "
              "give it with --machine-procs"));
  }
  trace.machine_procs = m;
  trace.jobs.reserve(raws.size());
  for (const Raw& r : raws) {
    // Rule 3, in this order (fields are 1-based in the conventions).
    double f2 = r.f[1], f4 = r.f[3], f5 = r.f[4], f8 = r.f[7], f9 = r.f[8];
    if (opts.estimate_from_runtime && f9 <= 0) f9 = f4;
    bool keep = true;
    if (f5 > m) keep = false;
    if (keep && f8 > m) keep = false;
    if (keep && f8 <= 0) {
      if (f5 > 0) {
        f8 = f5;
      } else {
        keep = false;
      }
    }
    if (keep && f4 <= 0) keep = false;
    if (keep && f9 <= 0) keep = false;
    if (keep && f9 < f4) f4 = f9;
    if (keep && f2 < 0) keep = false;
    if (!keep) {
      ++trace.dropped;
      continue;
    }
    SwfJob j;
    j.id = static_cast<int64_t>(r.f[0]);
    j.line = r.line;
    j.submit = static_cast<int64_t>(std::floor(f2));
    j.run = std::max<int64_t>(1, static_cast<int64_t>(std::floor(f4)));
    j.procs = static_cast<int32_t>(f8);
    j.estimate = static_cast<int64_t>(std::ceil(f9));
    if (j.run > j.estimate) j.run = j.estimate;
    j.user = static_cast<int32_t>(r.f[11]);
    trace.jobs.push_back(j);
  }
  return trace;
}

StatusOr<SwfTrace> ReadSwfFile(const std::string& path, const SwfReadOptions& opts) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(
        core::StrCat("cannot open trace '", path, "': ", std::strerror(errno)));
  }
  gzbuffer(f, 1 << 17);
  std::string text;
  char buf[1 << 16];
  while (true) {
    int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      return absl::DataLossError(core::StrCat("cannot read trace '", path, "': ", msg));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  gzclose(f);
  std::string_view base = path;
  if (size_t slash = base.rfind('/'); slash != std::string_view::npos) {
    base = base.substr(slash + 1);
  }
  return ParseSwf(text, base, opts);
}

}  // namespace loom::sim
