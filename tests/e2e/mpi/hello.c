/* The MPI program tests/e2e/mpi.sh runs under srun --mpi: each rank says who and where it
 * is, the ranks add up their numbers (checked against n(n-1)/2) and meet at a barrier.
 * "fail R" makes rank R exit 1 after MPI_Init while the others wait at the barrier;
 * "abort R" makes it call MPI_Abort with 7; "late R" makes task R (SLURM_PROCID) sleep a
 * minute before MPI_Init, so that the others wait in MPI_Init's fence. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* task = getenv("SLURM_PROCID");
  if (argc > 2 && strcmp(argv[1], "late") == 0 && task != NULL && atoi(task) == atoi(argv[2])) {
    sleep(60);
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* node = getenv("SLURMD_NODENAME");
  if (argc > 2 && atoi(argv[2]) == rank) {
    if (strcmp(argv[1], "fail") == 0) exit(1);
    if (strcmp(argv[1], "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 7);
  }
  long mine = rank, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d of %d on %s sum %ld %s\n", rank, size, node ? node : "?", sum,
         sum == (long)size * (size - 1) / 2 ? "ok" : "WRONG");
  MPI_Finalize();
  return 0;
}
