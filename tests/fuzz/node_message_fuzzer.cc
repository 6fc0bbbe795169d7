// libFuzzer target for what a node daemon and its supervisors read: a LaunchBatchRequest or
// LaunchTasksRequest from the controller (or from the loomd above it in the launch tree),
// turned into the job loom-stepd runs (stepd/launch_request.h), and the one-line control
// protocol between loomd and loom-stepd (stepd/control.h). Nothing may crash or trip a
// sanitizer; a control request that parses must print back to a line that parses to it.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "loom/v1/loom.pb.h"
#include "stepd/control.h"
#include "stepd/launch_request.h"

// Protobuf logs every string field that is not UTF-8; the fuzzer makes millions.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int size_int = static_cast<int>(bytes.size());
  switch (data[0] % 4) {
    case 0: {
      loom::v1::LaunchBatchRequest req;
      if (req.ParseFromArray(bytes.data(), size_int)) {
        (void)loom::stepd::BatchJobOf(req, "n1");
        (void)loom::stepd::BatchJobOf(req, req.job().batch_host());
      }
      break;
    }
    case 1: {
      loom::v1::LaunchTasksRequest req;
      if (req.ParseFromArray(bytes.data(), size_int)) {
        (void)loom::stepd::StepJobOf(req, "n1");
        (void)loom::stepd::StepJobOf(req, "n2");
      }
      break;
    }
    case 2: {
      auto r = loom::stepd::ParseRequest(bytes);
      if (r.ok()) {
        auto again = loom::stepd::ParseRequest(loom::stepd::FormatRequest(*r));
        if (!again.ok() || !(*again == *r)) {
          std::fprintf(stderr, "node_message_fuzzer: a control request does not read back\n");
          std::abort();
        }
      }
      break;
    }
    default:
      (void)loom::stepd::ParseReply(bytes);
  }
  return 0;
}
