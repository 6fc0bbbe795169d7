// Whether this build carries a sanitizer that makes code 10-20 times slower (ASan, TSan).
// Property tests replay a slice of their workloads there, so that the sanitizer build's run
// of the whole suite stays within CI's time; the other builds replay them whole.
#pragma once

namespace loom::test_support {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace loom::test_support
