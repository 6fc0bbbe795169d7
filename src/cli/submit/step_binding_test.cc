#include "cli/submit/step_binding.h"

#include <gtest/gtest.h>

namespace loom::cli::submit {
namespace {

TEST(ValidateCpuBind, SlurmsTypes) {
  for (const char* ok :
       {"cores", "none", "no", "rank", "sockets", "threads", "ldoms", "verbose,cores",
        "q,rank_ldom", "map_cpu:0,2,4", "mask_cpu:0x3,0xc", "map_ldom:0*4,1", "mask_cpu:f0"}) {
    EXPECT_TRUE(ValidateCpuBind(ok).ok()) << ok;
  }
}

TEST(ValidateCpuBind, BadValuesInSlurmsWords) {
  EXPECT_EQ(ValidateCpuBind("corez").message(),
            "srun: error: unrecognized --cpu-bind argument \"corez\"");
  EXPECT_EQ(ValidateCpuBind("map_cpu:").message(),
            "srun: error: missing list for \"--cpu-bind=map_cpu:<list>\"");
  EXPECT_EQ(ValidateCpuBind("map_cpu:a,b").message(),
            "srun: error: unrecognized --cpu-bind argument \"map_cpu:a\"");
  EXPECT_FALSE(ValidateCpuBind("cores,threads").ok());  // one type only
}

TEST(ValidateGpuBind, SlurmsTypesAndError) {
  for (const char* ok : {"closest", "none", "verbose,closest", "map_gpu:0,1", "mask_gpu:0x3,0xc",
                         "per_task:2", "single:1"}) {
    EXPECT_TRUE(ValidateGpuBind(ok).ok()) << ok;
  }
  EXPECT_EQ(ValidateGpuBind("nearest").message(),
            "srun: error: Invalid --gpu-bind argument: nearest");
  EXPECT_FALSE(ValidateGpuBind("per_task:0").ok());
  EXPECT_FALSE(ValidateGpuBind("map_gpu:").ok());
}

}  // namespace
}  // namespace loom::cli::submit
