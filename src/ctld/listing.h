// The jobs as queries list them (squeue, scancel's filters, sdiag), published by the
// controller after every batch. Each job's v1::JobInfo is converted once, when the job
// changes, and kept serialized (a few hundred bytes, against several KB as a message);
// a new listing shares every unchanged chunk of jobs with the one it was updated from, so
// publishing costs the jobs that changed, not the whole table. The fields of a record that a
// job shares with the jobs submitted alike (AddSharedFields: its request's, its owner's, its
// partition's; most of it) are kept once for all of them (ControllerCore interns identical
// requests).
//
// Thread-safety: a listing is immutable once built; any number of threads may read it.
// Update() is called by one thread at a time for a listing and those made from it (they
// share the cache of serialized shared fields).
#pragma once

#include <google/protobuf/repeated_ptr_field.h>
#include <google/protobuf/unknown_field_set.h>

#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "ctld/controller_core.h"
#include "ctld/wire.h"
#include "loom/v1/loom.pb.h"
#include "model/job_state.h"
#include "rpc/convert.h"

namespace loom::ctld {

// Which jobs a query asks for; an empty set does not filter. Names are Slurm's: the state
// as JobInfo.state prints it ("PENDING"), the user and partition by name.
struct JobFilter {
  std::set<uint64_t> ids;  // a job's id, or its array's
  std::set<std::string> users;
  std::set<std::string> partitions;
  std::set<std::string> states;
  std::set<std::string> names;
};

class JobListing {
 public:
  // Every job of `core`.
  static std::shared_ptr<const JobListing> Build(const ControllerCore& core,
                                                 const JobInfoOptions& options);
  // This listing with the jobs `ids` read again from `core`: converted anew, added, or
  // dropped when the table no longer has them. Ids may repeat. Sets `*holders_changed`
  // when one of them held nodes before or holds them now (node usage may have changed).
  std::shared_ptr<const JobListing> Update(const ControllerCore& core, std::span<const JobId> ids,
                                           const JobInfoOptions& options,
                                           bool* holders_changed = nullptr) const;

  // The records matching `filter`, in table order, the way squeue lists them (rpc::
  // FromEntries): the pending tasks of an array that never started fold into one record
  // with the array's id, placed where the first of them is.
  void AppendTo(const JobFilter& filter,
                google::protobuf::RepeatedPtrField<v1::JobInfo>* out) const;
  // The same records, still serialized, as occurrences of field `field_number` in `out`
  // (the unknown fields of a reply): a reader whose `repeated JobInfo` field has that number
  // reads them as its records. Spares parsing every record only to serialize it again.
  void AppendSerializedTo(const JobFilter& filter, int field_number,
                          google::protobuf::UnknownFieldSet* out) const;
  // The same records appended to `out` as they go on the wire, each as field `field_number`
  // (tag, length, record): bytes a reader parses as the records of that repeated field,
  // whatever else of the message comes before or after them. No record is copied on its own.
  void AppendWireTo(const JobFilter& filter, int field_number, std::string* out) const;

  // Records listed PENDING and RUNNING (a folded array counts once).
  struct Counts {
    int64_t pending = 0;
    int64_t running = 0;
  };
  Counts CountStates() const;

  size_t size() const { return size_; }  // entries (array tasks one by one)

  // One entry, as published: its place, what folding and filters need without reading its
  // record, and where its serialized v1::JobInfo lies in its chunk's bytes.
  struct Row {
    JobId job_id = 0;  // also its place: the table is in job id order
    // Where its own fields begin in Chunk::bytes; they end where the next row's begin.
    uint32_t offset = 0;
    int32_t fold_task = -1;  // a pending array task that never started: its index; else -1
    // An array task's place in its array plus one (its id is the array's plus its place);
    // 0 for a job that is not an array task.
    uint32_t array_place = 0;
    model::JobState state = model::JobState::kPending;  // as listed (COMPLETING when killing)
    uint8_t shared = 0;                                 // its shared fields: Chunk::shared[shared]

    JobId array_job_id() const { return array_place == 0 ? 0 : job_id - (array_place - 1); }
  };
  static_assert(sizeof(Row) == 24, "a row per job: keep it small");

  // One job's serialized v1::JobInfo, in two pieces that are one record when concatenated:
  // its own fields, then those it shares with jobs submitted alike (AddSharedFields), each
  // part in field order.
  struct Record {
    std::string_view own;
    std::string_view shared;
    size_t size() const { return own.size() + shared.size(); }
  };

 private:
  // Entries with consecutive ids and their records, back to back; a chunk is shared by
  // every listing that has it unchanged.
  struct Chunk {
    std::vector<Row> rows;  // ascending job id
    std::string bytes;      // the rows' own fields
    std::vector<std::shared_ptr<const std::string>> shared;  // the shared fields of its rows
    // `row` is one of `rows`.
    Record record(const Row& row) const {
      const size_t i = static_cast<size_t>(&row - rows.data());
      const size_t end = i + 1 < rows.size() ? rows[i + 1].offset : bytes.size();
      return {{bytes.data() + row.offset, end - row.offset}, *shared[row.shared]};
    }
    std::shared_ptr<const std::string> shared_of(const Row& row) const {
      return shared[row.shared];
    }
    void Add(Row row, std::string_view own, std::shared_ptr<const std::string> fields);
    void Shrink();  // once complete: gives back what growing it left over
  };
  static constexpr size_t kChunkRows = 64;
  static_assert(kChunkRows <= 256, "Row::shared indexes a chunk's shared fields in 8 bits");

  // The serialized shared fields of the last few distinct kinds of job listed.
  class SharedCache;

  // Walks the records matching `filter` in table order: sink.Plain(record) for a record
  // listed as it is, sink.Fold(record) for the first unstarted task of an array (returns a
  // handle), and at the end sink.Folded(handle, array id, pending tasks) for each array folded.
  template <typename Sink>
  void Emit(const JobFilter& filter, Sink& sink) const;

  std::vector<std::shared_ptr<const Chunk>> chunks_;  // ascending job id, none empty
  size_t size_ = 0;
  std::shared_ptr<SharedCache> shared_cache_;  // shared with the listings made from this one
};

}  // namespace loom::ctld
