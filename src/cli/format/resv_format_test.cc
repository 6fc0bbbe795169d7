// The reservation renderings against what Slurm 22.05 printed for the same reservations
// (scontrol show reservation, -o, sinfo -T), captured from a real slurmctld.
#include "cli/format/resv_format.h"

#include <gtest/gtest.h>

namespace loom::cli::format {
namespace {

std::vector<ReservationView> Captured() {
  ReservationView maint;
  maint.name = "root_1";
  maint.start = 1796698928;  // 2026-12-08T03:02:08
  maint.end = 1796742128;
  maint.nodes = "n[001-004]";
  maint.node_count = 4;
  maint.core_count = 256;
  maint.flags = "MAINT,IGNORE_JOBS,SPEC_NODES";
  maint.users = "root";
  ReservationView team;
  team.name = "team";
  team.start = 1796526128;  // 2026-12-06T03:02:08
  team.end = 1796529728;
  team.nodes = "n[001-002]";
  team.node_count = 2;
  team.core_count = 128;
  team.partition = "batch";
  team.users = "root";
  team.active = true;
  return {maint, team};
}

TEST(ReservationFormat, ShowAsSlurm) {
  EXPECT_EQ(RenderReservations(Captured(), false, RenderContext{}),
            "ReservationName=root_1 StartTime=2026-12-08T03:02:08 EndTime=2026-12-08T15:02:08 "
            "Duration=12:00:00\n"
            "   Nodes=n[001-004] NodeCnt=4 CoreCnt=256 Features=(null) PartitionName=(null) "
            "Flags=MAINT,IGNORE_JOBS,SPEC_NODES\n"
            "   TRES=cpu=256\n"
            "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
            "BurstBuffer=(null) Watts=n/a\n"
            "   MaxStartDelay=(null)\n"
            "\n"
            "ReservationName=team StartTime=2026-12-06T03:02:08 EndTime=2026-12-06T04:02:08 "
            "Duration=01:00:00\n"
            "   Nodes=n[001-002] NodeCnt=2 CoreCnt=128 Features=(null) PartitionName=batch Flags=\n"
            "   TRES=cpu=128\n"
            "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE "
            "BurstBuffer=(null) Watts=n/a\n"
            "   MaxStartDelay=(null)\n"
            "\n");
  EXPECT_EQ(RenderReservations({Captured()[1]}, true, RenderContext{}),
            "ReservationName=team StartTime=2026-12-06T03:02:08 EndTime=2026-12-06T04:02:08 "
            "Duration=01:00:00 Nodes=n[001-002] NodeCnt=2 CoreCnt=128 Features=(null) "
            "PartitionName=batch Flags= TRES=cpu=128 Users=root Groups=(null) Accounts=(null) "
            "Licenses=(null) State=ACTIVE BurstBuffer=(null) Watts=n/a MaxStartDelay=(null)\n");
  EXPECT_EQ(RenderReservations({}, false, RenderContext{}), "No reservations in the system\n");
}

TEST(ReservationFormat, TableAsSlurm) {
  EXPECT_EQ(
      RenderReservationTable(Captured(), RenderContext{}),
      "RESV_NAME     STATE           START_TIME             END_TIME     DURATION  NODELIST\n"
      "root_1     INACTIVE  2026-12-08T03:02:08  2026-12-08T15:02:08     12:00:00  n[001-004]\n"
      "team         ACTIVE  2026-12-06T03:02:08  2026-12-06T04:02:08     01:00:00  n[001-002]\n");
  // A long name widens the column.
  std::vector<ReservationView> resvs = Captured();
  ReservationView longer;
  longer.name = "averyveryverylongname";
  longer.start = 1796529740;
  longer.end = 1796623580;
  longer.nodes = "n010";
  resvs.push_back(longer);
  EXPECT_EQ(RenderReservationTable(resvs, RenderContext{}),
            "RESV_NAME                 STATE           START_TIME             END_TIME     "
            "DURATION  NODELIST\n"
            "root_1                 INACTIVE  2026-12-08T03:02:08  2026-12-08T15:02:08     "
            "12:00:00  n[001-004]\n"
            "team                     ACTIVE  2026-12-06T03:02:08  2026-12-06T04:02:08     "
            "01:00:00  n[001-002]\n"
            "averyveryverylongname  INACTIVE  2026-12-06T04:02:20  2026-12-07T06:06:20   "
            "1-02:04:00  n010\n");
}

}  // namespace
}  // namespace loom::cli::format
