// The controller's memory per held job, part by part: the job table (ControllerCore: entries
// by job id, the live set) and the published listing (JobListing: rows and serialized
// records), for N jobs as the reference benchmark submits them (`sbatch -H -J held -o
// /dev/null --wrap=true`, every one the same request), counted with mallinfo2 around each.
// The whole daemon's figure (bench/cluster_bench.sh, ctld_rss_per_held_job) adds the store's
// page cache, the allocator's arenas and what queries leave.
//
//   build/bin/ctld_memory [N]        # N defaults to 10000
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "conf/testing/site_text.h"
#include "ctld/controller_core.h"
#include "ctld/listing.h"

namespace {

size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace loom;
  const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  if (n <= 0) {
    std::fprintf(stderr, "usage: %s [JOBS]  (a positive number of held jobs)\n", argv[0]);
    return 2;
  }
  auto site = conf::testing::SiteFromText(
      "ctld_memory",
      "ClusterName=bench\nSlurmctldHost=localhost\nMaxJobCount=1000000\n"
         "NodeName=n[01-16] CPUs=16 RealMemory=64000\n"
         "PartitionName=batch Nodes=n[01-16] Default=YES MaxTime=1-00:00:00\n");
  if (!site.ok()) {
    std::fprintf(stderr, "ctld_memory: %s\n", std::string(site.status().message()).c_str());
    return 1;
  }
  ctld::ControllerCore core(*site, ctld::CoreOptions{}, 1);
  const ctld::Caller root{0, 0, "root"};

  const size_t before = HeapInUse();
  for (int i = 0; i < n; ++i) {
    model::JobRequest r;
    r.name = "held";
    r.hold = true;
    r.shape.ntasks = 1;
    r.work_dir = "/tmp";
    r.stdout_pattern = "/dev/null";
    ctld::Effects fx;
    auto id = core.Submit(r, root, 1000, &fx);
    if (!id.ok()) {
      std::fprintf(stderr, "ctld_memory: job %d: %s\n", i,
                   std::string(id.status().message()).c_str());
      return 1;
    }
  }
  const size_t with_jobs = HeapInUse();
  auto listing = ctld::JobListing::Build(core, ctld::JobInfoOptions{});
  const size_t with_listing = HeapInUse();

  const double table = static_cast<double>(with_jobs - before) / n;
  const double listed = static_cast<double>(with_listing - with_jobs) / n;
  std::printf("held_jobs=%d jobs\n", n);
  std::printf("job_table_per_job=%.1f bytes\n", table);
  std::printf("listing_per_job=%.1f bytes\n", listed);
  std::printf("total_per_job=%.1f bytes\n", table + listed);
  std::printf("sizeof_job_entry=%zu bytes\n", sizeof(ctld::JobEntry));
  return listing->size() == static_cast<size_t>(n) ? 0 : 1;
}
