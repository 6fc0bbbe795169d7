#include "sim/builtin_trace.h"

// The assembler copies the file's bytes into read-only data.
__asm__(".section .rodata\n"
        ".global loom_builtin_trace_begin\n"
        ".global loom_builtin_trace_end\n"
        ".balign 16\n"
        "loom_builtin_trace_begin:\n"
        ".incbin \"" LOOM_BUILTIN_TRACE_PATH "\"\n"
        "loom_builtin_trace_end:\n"
        ".previous\n");

extern "C" const char loom_builtin_trace_begin[];
extern "C" const char loom_builtin_trace_end[];

namespace loom::sim {

std::string_view BuiltinTraceName() { return LOOM_BUILTIN_TRACE_NAME; }

std::string_view BuiltinTraceGz() {
  return std::string_view(loom_builtin_trace_begin,
                          static_cast<size_t>(loom_builtin_trace_end - loom_builtin_trace_begin));
}

}  // namespace loom::sim
