// The workload trace built into the binary (the bundled KTH SP2 log, gzip'd), so that
// `loom sim` runs with no files at hand. Immutable; thread-safe.
#pragma once

#include <string_view>

namespace loom::sim {

std::string_view BuiltinTraceName();
std::string_view BuiltinTraceGz();  // the .swf.gz bytes

}  // namespace loom::sim
