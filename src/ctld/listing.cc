#include "ctld/listing.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "model/job_request.h"

namespace loom::ctld {
namespace {

using google::protobuf::internal::WireFormatLite;
using model::JobState;
using Row = JobListing::Row;
using Record = JobListing::Record;

// The fields of a serialized JobInfo that filters look at, read without parsing the rest.
struct FilterFields {
  std::string_view name, user, partition;
};

// Reads them from one part of a record (Record) into `out`: each part is in field order.
void ReadFilterFields(std::string_view bytes, FilterFields* out) {
  constexpr int kName = v1::JobInfo::kNameFieldNumber;
  constexpr int kUser = v1::JobInfo::kUserFieldNumber;
  constexpr int kPartition = v1::JobInfo::kPartitionFieldNumber;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    // Known fields are written in field order: nothing filters look at comes later.
    if (number > kPartition) break;
    if (WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED &&
        (number == kName || number == kUser || number == kPartition)) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) break;
      const std::string_view value = bytes.substr(in.CurrentPosition(), length);
      if (number == kName) out->name = value;
      if (number == kUser) out->user = value;
      if (number == kPartition) out->partition = value;
      if (!in.Skip(static_cast<int>(length))) break;
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) break;
  }
}

bool In(const std::set<std::string>& set, std::string_view value) {
  return set.empty() || set.count(std::string(value)) > 0;
}

// Whether the record of `row` matches `f`; `id` is its listed id (the array's for a folded
// record).
bool Matches(const Row& row, const Record& record, JobId id, const JobFilter& f) {
  if (!f.ids.empty() && !f.ids.count(id) && !f.ids.count(row.array_job_id())) return false;
  if (!In(f.states, model::JobStateName(row.state))) return false;
  if (f.users.empty() && f.partitions.empty() && f.names.empty()) return true;
  FilterFields fields;
  ReadFilterFields(record.own, &fields);
  ReadFilterFields(record.shared, &fields);
  return In(f.users, fields.user) && In(f.partitions, fields.partition) &&
         In(f.names, fields.name);
}

bool HoldsNodes(JobState listed) {
  return listed == JobState::kRunning || listed == JobState::kSuspended ||
         listed == JobState::kCompleting;
}

// The row of `e`; its own fields go to `own`.
Row RowOf(const JobEntry& e, const sched::Cluster& cluster, const JobInfoOptions& options,
          std::string* own) {
  Row row;
  row.job_id = e.job.id;
  row.array_place = e.array_place;
  if (e.array_place != 0 && e.job.state == JobState::kPending && e.job.start_time == 0) {
    row.fold_task = e.array_task;
  }
  row.state = e.shown_state();
  JobFieldsOf(e, cluster, options).SerializeToString(own);
  return row;
}

// The whole record, parsed.
void Parse(const Record& record, v1::JobInfo* info) {
  std::string bytes;
  bytes.reserve(record.size());
  bytes.append(record.own).append(record.shared);
  info->ParseFromString(bytes);
}

// A folded array's record: its first unstarted task's, with the array's id and the
// pending tasks as Slurm prints them ("3-10%2").
void MakeFolded(JobId array_id, model::ArraySpec tasks, v1::JobInfo* info) {
  tasks.max_running = static_cast<int32_t>(info->array_max_tasks());
  info->set_job_id(array_id);
  info->set_array_task_id(-1);
  info->set_array_task_string(tasks.ToString());
}

}  // namespace

class JobListing::SharedCache {
 public:
  // The fields `e` shares with the jobs submitted alike (AddSharedFields), serialized.
  std::shared_ptr<const std::string> For(const JobEntry& e, const JobInfoOptions& options) {
    const Key key{e.request,
                  e.array_place != 0,
                  e.completing,
                  e.job.state,
                  e.job.reason,
                  e.job.uid,
                  e.job.gid,
                  e.job.user,
                  e.job.partition,
                  options.cluster_name,
                  options.group_name != nullptr,
                  options.gpu_tres,
                  options.requeue_by_default,
                  options.with_script,
                  options.with_environment};
    for (const Slot& slot : slots_) {
      if (slot.fields != nullptr && slot.key == key) return slot.fields;
    }
    v1::JobInfo only;
    AddSharedFields(e, options, &only);
    Slot& slot = slots_[next_++ % slots_.size()];
    slot = Slot{key, std::make_shared<const std::string>(only.SerializeAsString())};
    return slot.fields;
  }

 private:
  // What AddSharedFields reads. A listing and those updated from it are made with the same
  // group_name function (a reconfigure builds a new listing), so whether there is one will do.
  struct Key {
    std::shared_ptr<const model::JobRequest> request;  // kept, so its address stays its own
    bool task = false;                                 // an array task
    bool completing = false;
    model::JobState state = model::JobState::kPending;
    model::PendingReason reason = model::PendingReason::kNone;
    uint32_t uid = 0;
    uint32_t gid = 0;
    core::Interned user;
    core::Interned partition;
    std::string cluster_name;
    bool group_name = false;
    bool gpu_tres = false;
    bool requeue_by_default = false;
    bool with_script = false;
    bool with_environment = false;
    bool operator==(const Key&) const = default;
  };
  struct Slot {
    Key key;
    std::shared_ptr<const std::string> fields;
  };
  std::array<Slot, 16> slots_;
  size_t next_ = 0;
};

void JobListing::Chunk::Shrink() {
  rows.shrink_to_fit();
  bytes.shrink_to_fit();
  shared.shrink_to_fit();
}

void JobListing::Chunk::Add(Row row, std::string_view own,
                            std::shared_ptr<const std::string> fields) {
  row.offset = static_cast<uint32_t>(bytes.size());
  bytes.append(own);
  // A chunk's rows share few kinds, mostly one: a look back over them finds it.
  auto it = std::find(shared.rbegin(), shared.rend(), fields);
  if (it == shared.rend()) {
    shared.push_back(std::move(fields));
    row.shared = static_cast<uint8_t>(shared.size() - 1);
  } else {
    row.shared = static_cast<uint8_t>(shared.rend() - it - 1);
  }
  rows.push_back(row);
}

std::shared_ptr<const JobListing> JobListing::Build(const ControllerCore& core,
                                                    const JobInfoOptions& options) {
  auto out = std::make_shared<JobListing>();
  out->shared_cache_ = std::make_shared<SharedCache>();
  std::shared_ptr<Chunk> chunk;
  std::string own;
  for (const auto& [id, e] : core.jobs()) {
    if (chunk == nullptr || chunk->rows.size() == kChunkRows) {
      if (chunk != nullptr) chunk->Shrink();
      chunk = std::make_shared<Chunk>();
      chunk->rows.reserve(kChunkRows);
      out->chunks_.push_back(chunk);
    }
    Row row = RowOf(e, core.cluster(), options, &own);
    chunk->Add(row, own, out->shared_cache_->For(e, options));
  }
  if (chunk != nullptr) chunk->Shrink();
  out->size_ = core.jobs().size();
  return out;
}

std::shared_ptr<const JobListing> JobListing::Update(const ControllerCore& core,
                                                     std::span<const JobId> ids_in,
                                                     const JobInfoOptions& options,
                                                     bool* holders_changed) const {
  std::vector<JobId> ids(ids_in.begin(), ids_in.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto out = std::make_shared<JobListing>();
  out->chunks_.reserve(chunks_.size() + 1);
  out->size_ = size_;
  out->shared_cache_ = shared_cache_ ? shared_cache_ : std::make_shared<SharedCache>();
  bool holders = false;
  std::string own;

  // The entry of job `id` as it is now, or null when the table no longer has it.
  const auto current = [&](JobId id) -> const JobEntry* {
    auto it = core.jobs().find(id);
    return it == core.jobs().end() ? nullptr : &it->second;
  };
  // Adds the entry of job `id` as it is now to `chunk`, if the table still has it.
  const auto add_current = [&](JobId id, Chunk* chunk) {
    const JobEntry* e = current(id);
    if (e == nullptr) return;
    Row row = RowOf(*e, core.cluster(), options, &own);
    holders = holders || HoldsNodes(row.state);
    chunk->Add(row, own, out->shared_cache_->For(*e, options));
    ++out->size_;
  };
  auto next = ids.begin();
  for (const std::shared_ptr<const Chunk>& chunk : chunks_) {
    const JobId last = chunk->rows.back().job_id;
    if (next == ids.end() || *next > last) {
      out->chunks_.push_back(chunk);  // unchanged: shared
      continue;
    }
    auto copy = std::make_shared<Chunk>();
    copy->rows.reserve(kChunkRows);
    copy->bytes.reserve(chunk->bytes.size());
    // Keep chunks from thinning out as old jobs are purged: a small one joins the one before.
    const bool join = !out->chunks_.empty() && chunk->rows.size() < kChunkRows / 2 &&
                      out->chunks_.back()->rows.size() + chunk->rows.size() <= kChunkRows;
    if (join) {
      const Chunk& before = *out->chunks_.back();
      for (const Row& row : before.rows)
        copy->Add(row, before.record(row).own, before.shared_of(row));
      out->chunks_.pop_back();
    }
    auto row = chunk->rows.begin();
    for (; next != ids.end() && *next <= last; ++next) {
      for (; row != chunk->rows.end() && row->job_id < *next; ++row) {
        copy->Add(*row, chunk->record(*row).own, chunk->shared_of(*row));
      }
      if (row != chunk->rows.end() && row->job_id == *next) {
        holders = holders || HoldsNodes(row->state);
        ++row;
        --out->size_;
      }
      add_current(*next, copy.get());
    }
    for (; row != chunk->rows.end(); ++row) {
      copy->Add(*row, chunk->record(*row).own, chunk->shared_of(*row));
    }
    copy->Shrink();
    if (!copy->rows.empty()) out->chunks_.push_back(std::move(copy));
  }
  // Keys past the last listed one: new entries, appended.
  std::shared_ptr<Chunk> tail;  // the last chunk, once this listing has its own copy
  for (; next != ids.end(); ++next) {
    if (current(*next) == nullptr) continue;
    if (tail == nullptr && !out->chunks_.empty() && out->chunks_.back()->rows.size() < kChunkRows) {
      tail = std::make_shared<Chunk>();
      tail->rows.reserve(kChunkRows);
      const Chunk& last = *out->chunks_.back();
      tail->rows = last.rows;
      tail->bytes = last.bytes;
      tail->shared = last.shared;
      out->chunks_.back() = tail;
    }
    if (tail == nullptr || tail->rows.size() >= kChunkRows) {
      tail = std::make_shared<Chunk>();
      tail->rows.reserve(kChunkRows);
      out->chunks_.push_back(tail);
    }
    add_current(*next, tail.get());
  }
  if (holders_changed != nullptr) *holders_changed = holders;
  if (tail != nullptr) tail->Shrink();
  return out;
}

template <typename Sink>
void JobListing::Emit(const JobFilter& filter, Sink& sink) const {
  // Folded arrays: the sink's handle (-1: filtered out) and the pending tasks.
  struct Folded {
    int handle = -1;
    model::ArraySpec tasks;
  };
  std::map<JobId, Folded> folded;
  for (const std::shared_ptr<const Chunk>& chunk : chunks_) {
    for (const Row& row : chunk->rows) {
      const Record record = chunk->record(row);
      if (row.fold_task < 0) {
        if (Matches(row, record, row.job_id, filter)) sink.Plain(record);
        continue;
      }
      auto [it, first] = folded.try_emplace(row.array_job_id());
      if (first && Matches(row, record, row.array_job_id(), filter)) {
        it->second.handle = sink.Fold(record);
      }
      it->second.tasks.ranges.push_back(model::ArrayRange{row.fold_task, row.fold_task, 1});
    }
  }
  for (auto& [array_id, f] : folded) {
    if (f.handle >= 0) sink.Folded(f.handle, array_id, std::move(f.tasks));
  }
}

void JobListing::AppendTo(const JobFilter& filter,
                          google::protobuf::RepeatedPtrField<v1::JobInfo>* out) const {
  struct Sink {
    google::protobuf::RepeatedPtrField<v1::JobInfo>* out;
    void Plain(const Record& record) { Parse(record, out->Add()); }
    int Fold(const Record& record) {
      Plain(record);
      return out->size() - 1;
    }
    void Folded(int handle, JobId array_id, model::ArraySpec tasks) {
      MakeFolded(array_id, std::move(tasks), out->Mutable(handle));
    }
  } sink{out};
  Emit(filter, sink);
}

void JobListing::AppendSerializedTo(const JobFilter& filter, int field_number,
                                    google::protobuf::UnknownFieldSet* out) const {
  struct Sink {
    int field;
    google::protobuf::UnknownFieldSet* out;
    void Plain(const Record& record) {
      std::string* bytes = out->AddLengthDelimited(field);
      bytes->reserve(record.size());
      bytes->assign(record.own).append(record.shared);
    }
    int Fold(const Record& record) {
      Plain(record);
      return out->field_count() - 1;
    }
    void Folded(int handle, JobId array_id, model::ArraySpec tasks) {
      std::string* bytes = out->mutable_field(handle)->mutable_length_delimited();
      v1::JobInfo info;
      info.ParseFromString(*bytes);
      MakeFolded(array_id, std::move(tasks), &info);
      info.SerializeToString(bytes);
    }
  } sink{field_number, out};
  Emit(filter, sink);
}

namespace {

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

}  // namespace

void JobListing::AppendWireTo(const JobFilter& filter, int field_number, std::string* out) const {
  struct Sink {
    uint64_t tag;  // length-delimited field `field_number`
    std::string* out;
    // The first record of each folded array: where it lies in `out` (tag and length
    // included), and the record it becomes once the array's tasks are known.
    struct Place {
      size_t start = 0;
      size_t size = 0;
      std::string folded;
    };
    std::vector<Place> places;
    void Plain(const Record& record) {
      AppendVarint(tag, out);
      AppendVarint(record.size(), out);
      out->append(record.own).append(record.shared);
    }
    int Fold(const Record& record) {
      const size_t start = out->size();
      Plain(record);
      places.push_back(Place{start, out->size() - start, {}});
      return static_cast<int>(places.size()) - 1;
    }
    void Folded(int handle, JobId array_id, model::ArraySpec tasks) {
      Place& p = places[handle];
      std::string_view wire(out->data() + p.start, p.size);
      wire.remove_prefix(wire.size() - RecordSize(wire));
      v1::JobInfo info;
      info.ParseFromArray(wire.data(), static_cast<int>(wire.size()));
      MakeFolded(array_id, std::move(tasks), &info);
      std::string record = info.SerializeAsString();
      AppendVarint(tag, &p.folded);
      AppendVarint(record.size(), &p.folded);
      p.folded += record;
    }
    // The record's own length at the end of its tag and length prefix.
    static size_t RecordSize(std::string_view wire) {
      size_t i = 0;
      while (i < wire.size() && (static_cast<unsigned char>(wire[i]) & 0x80)) ++i;  // tag
      ++i;
      uint64_t size = 0;
      for (int shift = 0; i < wire.size(); shift += 7, ++i) {
        size |= static_cast<uint64_t>(static_cast<unsigned char>(wire[i]) & 0x7f) << shift;
        if (!(static_cast<unsigned char>(wire[i]) & 0x80)) break;
      }
      return static_cast<size_t>(size);
    }
  } sink{(static_cast<uint64_t>(field_number) << 3) | 2, out, {}};
  Emit(filter, sink);
  if (sink.places.empty()) return;
  // Put each folded array's record in place of its first task's (places ascend).
  std::string rebuilt;
  rebuilt.reserve(out->size());
  size_t at = 0;
  for (const Sink::Place& p : sink.places) {
    rebuilt.append(*out, at, p.start - at);
    if (p.folded.empty()) {
      rebuilt.append(*out, p.start, p.size);
    } else {
      rebuilt += p.folded;
    }
    at = p.start + p.size;
  }
  rebuilt.append(*out, at, std::string::npos);
  out->swap(rebuilt);
}

JobListing::Counts JobListing::CountStates() const {
  Counts c;
  JobId last_folded = 0;
  for (const std::shared_ptr<const Chunk>& chunk : chunks_) {
    for (const Row& row : chunk->rows) {
      if (row.fold_task >= 0) {
        // An array's unstarted tasks have consecutive ids: one record for each run of them.
        if (row.array_job_id() != last_folded) ++c.pending;
        last_folded = row.array_job_id();
        continue;
      }
      c.pending += row.state == JobState::kPending;
      c.running += row.state == JobState::kRunning;
    }
  }
  return c;
}

}  // namespace loom::ctld
