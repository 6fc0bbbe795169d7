// srun's step on the wire: the key srun's job carries reaches the store and the nodes (a
// submission survives ToWire and FromWire whole); ctld's wire_records_test checks it never
// reaches a query's JobInfo.
#include <gtest/gtest.h>

#include "rpc/convert.h"

namespace loom::rpc {
namespace {

model::JobRequest SrunJob() {
  model::JobRequest r;
  r.name = "hostname";
  r.srun = model::SrunStep{{"hostname", "-f"},
                           "10.0.0.7",
                           41234,
                           std::string("k\0y", 3),
                           false,
                           "",
                           "",
                           "",
                           "cores",
                           "closest",
                           "1",
                           "cyclic",
                           std::nullopt};
  return r;
}

TEST(SrunStepWireTest, TheKeyTravelsWithTheSubmission) {
  const v1::JobSpec spec = ToWire(SrunJob());
  EXPECT_EQ(spec.srun().io_key(), std::string("k\0y", 3));
  StatusOr<model::JobRequest> back = FromWire(spec);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, SrunJob());
}

}  // namespace
}  // namespace loom::rpc
