#include "store/acct_schema.h"

#include "core/strings.h"

namespace loom::store {

std::vector<std::string> AcctSchemaStep(int version, std::string_view blob_type) {
  const std::string blob(blob_type);
  switch (version) {
    case 1:
      return {
          "CREATE TABLE loom_acct_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
          core::StrCat("CREATE TABLE acct_jobs (cluster TEXT NOT NULL, job_id BIGINT NOT NULL, "
                       "submit_time BIGINT NOT NULL, array_job_id BIGINT NOT NULL, "
                       "array_task_id BIGINT NOT NULL, eligible_time BIGINT NOT NULL, "
                       "start_time BIGINT NOT NULL, end_time BIGINT NOT NULL, uid BIGINT NOT NULL, "
                       "gid BIGINT NOT NULL, user_name TEXT NOT NULL, account TEXT NOT NULL, "
                       "partition_name TEXT NOT NULL, qos TEXT NOT NULL, state TEXT NOT NULL, "
                       "record ",
                       blob, " NOT NULL, PRIMARY KEY (cluster, job_id, submit_time))"),
          // sacct's usual questions: a period (by end), one user's jobs, an array's tasks.
          "CREATE INDEX acct_jobs_end ON acct_jobs (end_time)",
          "CREATE INDEX acct_jobs_uid ON acct_jobs (uid, submit_time)",
          "CREATE INDEX acct_jobs_array ON acct_jobs (array_job_id)",
      };
    case 2:
      return {
          core::StrCat("CREATE TABLE acct_entities (kind TEXT NOT NULL, name TEXT NOT NULL, "
                       "record ",
                       blob, " NOT NULL, PRIMARY KEY (kind, name))"),
      };
    case 3:
      // sacct -u NAME for users the system does not know (their records keep the name).
      return {"CREATE INDEX acct_jobs_user ON acct_jobs (user_name, submit_time)"};
    default:
      return {};
  }
}

}  // namespace loom::store
