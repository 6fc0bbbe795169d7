#include "sim/swf.h"

#include <libdeflate.h>
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

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
  int64_t whole = 0;
  while (p < end && static_cast<unsigned>(*p - '0') < 10 && p - start < 18) {
    whole = whole * 10 + (*p++ - '0');
  }
  double v = static_cast<double>(whole);
  while (p < end && static_cast<unsigned>(*p - '0') < 10) v = v * 10 + (*p++ - '0');
  if (p < end && *p == '.') {
    ++p;
    double scale = 0.1;
    while (p < end && static_cast<unsigned>(*p - '0') < 10) {
      v += (*p++ - '0') * scale;
      scale *= 0.1;
    }
  }
  if (p == start) return false;
  if (p < end && *p != ' ' && *p != '\t') return false;
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

namespace {

// The fields the conventions use (1-based): 1, 2, 4, 5, 8, 9, 12; and 13 (fair share's
// accounts) and 17 (dependencies).
struct Raw {
  double f1, f2, f4, f5, f8, f9, f12, f13, f17;
  int64_t line;  // within its chunk until the chunks are joined
};

// What one stretch of whole lines of a trace holds.
struct Chunk {
  std::vector<Raw> raws;
  int64_t lines = 0;
  int64_t max_procs = 0, max_nodes = 0, unix_start = 0;
  int64_t bad_lines = 0;
  int64_t error_line = -1;  // first malformed line (when not skipping), within the chunk
  std::string error_text;
};

void ParseChunk(std::string_view text, bool skip_bad, Chunk* c) {
  c->raws.reserve(text.size() / 64);
  const char* p = text.data();
  const char* const text_end = text.data() + text.size();
  while (p < text_end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', text_end - p));
    if (nl == nullptr) nl = text_end;
    const char* q = p;
    const char* line_end = nl;
    p = nl + 1;
    ++c->lines;
    while (q < line_end && (*q == ' ' || *q == '\t' || *q == '\r')) ++q;
    while (line_end > q && (line_end[-1] == ' ' || line_end[-1] == '\t' || line_end[-1] == '\r')) {
      --line_end;
    }
    if (q == line_end) continue;
    std::string_view t(q, static_cast<size_t>(line_end - q));
    if (*q == ';') {
      HeaderValue(t, "MaxProcs", &c->max_procs) || HeaderValue(t, "MaxNodes", &c->max_nodes) ||
          HeaderValue(t, "UnixStartTime", &c->unix_start);
      continue;
    }
    double f[18];
    int n = 0;
    bool ok = true;
    for (; n < 18 && ok; ++n) ok = ParseField(q, line_end, &f[n]);
    if (!ok || q != line_end) {
      if (skip_bad) {
        ++c->bad_lines;
        continue;
      }
      c->error_line = c->lines;
      c->error_text = std::string(t.substr(0, 120));
      return;
    }
    c->raws.push_back(Raw{f[0], f[1], f[3], f[4], f[7], f[8], f[11], f[12], f[16], c->lines});
  }
}

}  // namespace

StatusOr<SwfTrace> ParseSwf(std::string_view text, std::string_view name,
                            const SwfReadOptions& opts) {
  SwfTrace trace;
  trace.name = std::string(name);
  trace.estimates_from_runtime = opts.estimate_from_runtime;
  // Large traces are parsed as two halves at once, split at a line boundary.
  Chunk parts[2];
  size_t split = text.size();
  if (text.size() > (1u << 20)) {
    size_t nl = text.find('\n', text.size() / 2);
    if (nl != std::string_view::npos) split = nl + 1;
  }
  if (split < text.size()) {
    std::thread second(ParseChunk, text.substr(split), opts.skip_bad_lines, &parts[1]);
    ParseChunk(text.substr(0, split), opts.skip_bad_lines, &parts[0]);
    second.join();
  } else {
    ParseChunk(text, opts.skip_bad_lines, &parts[0]);
  }
  std::vector<Raw> raws = std::move(parts[0].raws);
  int64_t max_procs = 0, max_nodes = 0, offset = 0;
  for (int i = 0; i < 2; ++i) {
    Chunk& c = parts[i];
    if (c.error_line >= 0) {
      return absl::InvalidArgumentError(
          core::StrCat(name, ":", offset + c.error_line,
                       ": malformed SWF job line (expected 18 numeric fields): '", c.error_text,
                       "'; pass --skip-bad-lines to skip such lines"));
    }
    if (i == 1) {
      for (Raw& r : c.raws) r.line += offset;
      raws.insert(raws.end(), c.raws.begin(), c.raws.end());
    }
    if (max_procs == 0) max_procs = c.max_procs;
    if (max_nodes == 0) max_nodes = c.max_nodes;
    if (trace.unix_start == 0) trace.unix_start = c.unix_start;
    trace.bad_lines += c.bad_lines;
    offset += c.lines;
  }
  trace.job_lines = static_cast<int64_t>(raws.size());
  trace.max_nodes = max_nodes;
  int64_t m = opts.machine_procs > 0 ? opts.machine_procs : (max_procs > 0 ? max_procs : max_nodes);
  if (m <= 0) {
    return absl::InvalidArgumentError(
        core::StrCat(name,
                     ": the header gives no machine size (no '; MaxProcs:' or '; MaxNodes:' line); "
                     "give it with --machine-procs"));
  }
  trace.machine_procs = m;
  trace.jobs.reserve(raws.size());
  for (const Raw& r : raws) {
    // Rule 3, in this order (fields are 1-based in the conventions).
    double f2 = r.f2, f4 = r.f4, f5 = r.f5, f8 = r.f8, f9 = r.f9;
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
    j.id = static_cast<int64_t>(r.f1);
    j.line = r.line;
    j.submit = static_cast<int64_t>(std::floor(f2));
    j.run = std::max<int64_t>(1, static_cast<int64_t>(std::floor(f4)));
    j.procs = static_cast<int32_t>(f8);
    j.estimate = static_cast<int64_t>(std::ceil(f9));
    if (j.run > j.estimate) j.run = j.estimate;
    j.user = static_cast<int32_t>(r.f12);
    j.group = static_cast<int32_t>(r.f13);
    j.preceding = r.f17 > 0 ? static_cast<int64_t>(r.f17) : -1;
    trace.jobs.push_back(j);
  }
  return trace;
}

namespace {

// Reads the whole file into memory.
StatusOr<std::string> ReadAll(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(
        core::StrCat("cannot open trace '", path, "': ", std::strerror(errno)));
  }
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::DataLossError(core::StrCat("cannot read trace '", path, "'"));
  return data;
}

// Inflates a gzip file held in memory. A single-member file whose trailer states its size
// is inflated in one call (libdeflate, several times faster than zlib's streaming); any
// other gzip file is streamed through zlib.
StatusOr<std::string> Gunzip(const std::string& path, const std::string& gz) {
  if (gz.size() >= 18) {
    uint32_t isize = 0;
    std::memcpy(&isize, gz.data() + gz.size() - 4, 4);  // little-endian on every target
    std::string out(isize, '\0');
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    size_t in_used = 0, out_size = 0;
    libdeflate_result r = libdeflate_gzip_decompress_ex(d, gz.data(), gz.size(), out.data(),
                                                        out.size(), &in_used, &out_size);
    libdeflate_free_decompressor(d);
    if (r == LIBDEFLATE_SUCCESS && in_used == gz.size() && out_size == isize) return out;
  }
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return absl::InternalError("zlib init failed");
  std::string out;
  char buf[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END && zs.avail_in > 0) {
      out.append(buf, sizeof buf - zs.avail_out);
      inflateReset(&zs);  // concatenated gzip members
      rc = Z_OK;
      continue;
    }
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return absl::DataLossError(core::StrCat("trace '", path, "' is not valid gzip data (",
                                              zs.msg ? zs.msg : "corrupt stream", ")"));
    }
    out.append(buf, sizeof buf - zs.avail_out);
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

StatusOr<SwfTrace> DecodeSwf(std::string data, std::string_view name, const SwfReadOptions& opts) {
  bool gzip = data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
              static_cast<unsigned char>(data[1]) == 0x8b;
  if (gzip) {
    ASSIGN_OR_RETURN(data, Gunzip(std::string(name), data));
  }
  return ParseSwf(data, name, opts);
}

StatusOr<SwfTrace> ReadSwfFile(const std::string& path, const SwfReadOptions& opts) {
  ASSIGN_OR_RETURN(std::string data, ReadAll(path));
  std::string_view base = path;
  if (size_t slash = base.rfind('/'); slash != std::string_view::npos) {
    base = base.substr(slash + 1);
  }
  return DecodeSwf(std::move(data), base, opts);
}

}  // namespace loom::sim
