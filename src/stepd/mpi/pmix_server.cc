#include "stepd/mpi/pmix_server.h"

#include <dlfcn.h>
#include <pmix.h>
#include <pmix_server.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>

#include "core/log.h"
#include "core/mutex.h"
#include "core/strings.h"
#include "stepd/mpi/exchange.h"
#include "stepd/mpi/relay_channel.h"

namespace loom::stepd {
namespace {

using core::StrCat;

// The library's functions, looked up once it is loaded.
struct PmixLibrary {
  decltype(&PMIx_server_init) server_init = nullptr;
  decltype(&PMIx_server_finalize) server_finalize = nullptr;
  decltype(&PMIx_server_register_nspace) register_nspace = nullptr;
  decltype(&PMIx_server_deregister_nspace) deregister_nspace = nullptr;
  decltype(&PMIx_server_register_client) register_client = nullptr;
  decltype(&PMIx_server_deregister_client) deregister_client = nullptr;
  decltype(&PMIx_server_setup_fork) setup_fork = nullptr;
  decltype(&PMIx_server_dmodex_request) dmodex_request = nullptr;
  decltype(&PMIx_Error_string) error_string = nullptr;
  decltype(&PMIx_Get_version) get_version = nullptr;
};

constexpr const char* kLibrary = "libpmix.so.2";

StatusOr<const PmixLibrary*> LoadPmix() {
  static PmixLibrary lib;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    // Global: the library's own plugins resolve its symbols.
    void* h = ::dlopen(kLibrary, RTLD_NOW | RTLD_GLOBAL);
    if (h == nullptr) {
      const char* why = ::dlerror();
      error = StrCat("--mpi=pmix needs the PMIx library ", kLibrary,
                     " on this node (Debian package libpmix2): ", why ? why : "not found");
      return;
    }
    auto find = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
      if (fn == nullptr && error.empty()) {
        error = StrCat("--mpi=pmix: ", kLibrary, " has no ", name, " (PMIx 4 is needed)");
      }
    };
    find(lib.server_init, "PMIx_server_init");
    find(lib.server_finalize, "PMIx_server_finalize");
    find(lib.register_nspace, "PMIx_server_register_nspace");
    find(lib.deregister_nspace, "PMIx_server_deregister_nspace");
    find(lib.register_client, "PMIx_server_register_client");
    find(lib.deregister_client, "PMIx_server_deregister_client");
    find(lib.setup_fork, "PMIx_server_setup_fork");
    find(lib.dmodex_request, "PMIx_server_dmodex_request");
    find(lib.error_string, "PMIx_Error_string");
    find(lib.get_version, "PMIx_Get_version");
  });
  if (!error.empty()) return absl::FailedPreconditionError(error);
  return &lib;
}

// pmix_info_t lists built from values this object owns, so that they stay valid for as
// long as the library may read them.
class Infos {
 public:
  void String(const char* key, std::string value) {
    strings_.push_back(std::move(value));
    pmix_info_t& i = Add(key, PMIX_STRING);
    i.value.data.string = strings_.back().data();
  }
  void Uint32(const char* key, uint32_t value) { Add(key, PMIX_UINT32).value.data.uint32 = value; }
  void Uint16(const char* key, uint16_t value) { Add(key, PMIX_UINT16).value.data.uint16 = value; }
  void Rank(const char* key, pmix_rank_t value) {
    Add(key, PMIX_PROC_RANK).value.data.rank = value;
  }
  void Bool(const char* key, bool value) { Add(key, PMIX_BOOL).value.data.flag = value; }
  // An array of infos under `key` (PMIX_PROC_DATA, PMIX_APP_INFO_ARRAY, ...).
  void Array(const char* key, std::unique_ptr<Infos> inner) {
    pmix_data_array_t& a = arrays_.emplace_back();
    a.type = PMIX_INFO;
    a.size = inner->size();
    a.array = inner->data();
    children_.push_back(std::move(inner));
    Add(key, PMIX_DATA_ARRAY).value.data.darray = &a;
  }
  pmix_info_t* data() { return infos_.data(); }
  size_t size() const { return infos_.size(); }

 private:
  pmix_info_t& Add(const char* key, pmix_data_type_t type) {
    pmix_info_t& i = infos_.emplace_back();
    std::memset(&i, 0, sizeof i);
    std::strncpy(i.key, key, PMIX_MAX_KEYLEN);
    i.value.type = type;
    return i;
  }
  std::vector<pmix_info_t> infos_;
  std::deque<std::string> strings_;
  std::deque<pmix_data_array_t> arrays_;
  std::vector<std::unique_ptr<Infos>> children_;
};

// Waits for one of the library's operation callbacks.
class OpWait {
 public:
  static void Done(pmix_status_t status, void* self) {
    auto* w = static_cast<OpWait*>(self);
    std::lock_guard<std::mutex> lock(w->mu_);
    w->status_ = status;
    w->done_ = true;
    w->cv_.notify_all();
  }
  pmix_status_t Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  pmix_status_t status_ = PMIX_SUCCESS;
};

std::string JoinRanks(const std::vector<int32_t>& ranks) {
  std::string out;
  for (int32_t r : ranks) {
    if (!out.empty()) out.push_back(',');
    out += std::to_string(r);
  }
  return out;
}

class PmixServer;
PmixServer* g_server = nullptr;  // the library's callbacks find the server here

class PmixServer final : public WireUp {
 public:
  PmixServer(const PmixLibrary* lib, WireUpStep step, AbortStep abort_step)
      : lib_(lib),
        step_(std::move(step)),
        nspace_(StrCat("loom.pmix.", step_.JobStep())),
        link_(step_, nspace_, std::move(abort_step)) {}
  ~PmixServer() override;

  Status Start(const std::string& relay_socket);
  StatusOr<std::map<std::string, std::string>> TaskEnvironment(int32_t rank) override;

  // The library's upcalls.
  static pmix_status_t OnConnected(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
    return PMIX_OPERATION_SUCCEEDED;
  }
  static pmix_status_t OnFinalized(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
    return PMIX_OPERATION_SUCCEEDED;
  }
  static pmix_status_t OnAbort(const pmix_proc_t* proc, void*, int status, const char msg[],
                               pmix_proc_t[], size_t, pmix_op_cbfunc_t, void*);
  static pmix_status_t OnFence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[],
                               size_t, char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                               void* cbdata);
  static pmix_status_t OnDirectModex(const pmix_proc_t* proc, const pmix_info_t[], size_t,
                                     pmix_modex_cbfunc_t cbfunc, void* cbdata);

 private:
  std::string Error(pmix_status_t rc) const { return lib_->error_string(rc); }
  std::unique_ptr<Infos> JobInfo() const;
  void Serve(uint32_t rank, StepExchange::ModexDone reply);

  const PmixLibrary* lib_;
  const WireUpStep step_;
  const std::string nspace_;
  StepLink link_;
  std::string tmpdir_;
  bool initialized_ = false;
  bool registered_ = false;
  std::set<int32_t> clients_;
  // What the ranks asked for, said in the log when the server stops.
  std::atomic<int64_t> fences_{0};
  std::atomic<int64_t> modex_asked_{0};   // direct modex requests to other nodes
  std::atomic<int64_t> modex_served_{0};  // and from them
};

std::unique_ptr<Infos> PmixServer::JobInfo() const {
  auto info = std::make_unique<Infos>();
  const uint32_t size = static_cast<uint32_t>(step_.size());
  const std::vector<int32_t>& mine = step_.ranks[static_cast<size_t>(step_.me)];
  info->String(PMIX_JOBID, step_.JobStep());
  info->Uint32(PMIX_UNIV_SIZE, size);
  info->Uint32(PMIX_JOB_SIZE, size);
  info->Uint32(PMIX_MAX_PROCS, size);
  info->Uint32(PMIX_JOB_NUM_APPS, 1);
  info->Uint32(PMIX_APP_SIZE, size);
  info->Uint32(PMIX_APPNUM, 0);
  info->Rank(PMIX_APPLDR, 0);
  info->Uint32(PMIX_NUM_NODES, static_cast<uint32_t>(step_.nodes.size()));
  info->String(PMIX_NODE_MAP, core::Join(step_.nodes, ","));
  std::string proc_map;
  for (const std::vector<int32_t>& ranks : step_.ranks) {
    if (!proc_map.empty()) proc_map.push_back(';');
    proc_map += JoinRanks(ranks);
  }
  info->String(PMIX_PROC_MAP, proc_map);
  info->String(PMIX_TMPDIR, tmpdir_);
  info->String(PMIX_NSDIR, tmpdir_);
  if (!step_.work_dir.empty()) info->String(PMIX_WDIR, step_.work_dir);
  // This node.
  info->String(PMIX_HOSTNAME, step_.nodes[static_cast<size_t>(step_.me)]);
  info->Uint32(PMIX_NODEID, static_cast<uint32_t>(step_.me));
  info->Uint32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(mine.size()));
  info->String(PMIX_LOCAL_PEERS, JoinRanks(mine));
  if (!mine.empty()) info->Rank(PMIX_LOCALLDR, static_cast<pmix_rank_t>(mine.front()));
  // Every rank: where it runs and its place there.
  for (size_t n = 0; n < step_.ranks.size(); ++n) {
    const std::vector<int32_t>& here = step_.ranks[n];
    for (size_t local = 0; local < here.size(); ++local) {
      auto proc = std::make_unique<Infos>();
      const auto rank = static_cast<pmix_rank_t>(here[local]);
      proc->Rank(PMIX_RANK, rank);
      proc->Uint32(PMIX_APPNUM, 0);
      proc->Rank(PMIX_APP_RANK, rank);
      proc->Rank(PMIX_GLOBAL_RANK, rank);
      proc->Uint16(PMIX_LOCAL_RANK, static_cast<uint16_t>(local));
      proc->Uint16(PMIX_NODE_RANK, static_cast<uint16_t>(local));
      proc->Uint32(PMIX_NODEID, static_cast<uint32_t>(n));
      proc->String(PMIX_HOSTNAME, step_.nodes[n]);
      info->Array(PMIX_PROC_DATA, std::move(proc));
    }
  }
  return info;
}

Status PmixServer::Start(const std::string& relay_socket) {
  const std::string node = step_.nodes[static_cast<size_t>(step_.me)];
  // The directory the tasks' clients find the server's socket in: theirs, and private. In
  // memory where the host has /dev/shm, for it also holds Open MPI's shared-memory segments:
  // their names are made of the host's name, the job and the local rank, so two emulated
  // nodes on one host would share them if they shared a directory.
  std::string pattern = WireUpDirPrefix(step_.job_id, step_.step_id, node) + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(StrCat("cannot make ", pattern, ": ", std::strerror(errno)));
  }
  tmpdir_ = pattern;
  if (::chown(tmpdir_.c_str(), step_.uid, step_.gid) != 0 && ::geteuid() == 0) {
    return absl::InternalError(
        StrCat("cannot give ", tmpdir_, " to uid ", step_.uid, ": ", std::strerror(errno)));
  }

  link_.exchange().SetModexServe(
      [this](uint32_t rank, StepExchange::ModexDone reply) { Serve(rank, std::move(reply)); });
  RETURN_IF_ERROR(link_.Connect(relay_socket));

  static pmix_server_module_t module = [] {
    pmix_server_module_t m;
    std::memset(&m, 0, sizeof m);
    m.client_connected = &PmixServer::OnConnected;
    m.client_finalized = &PmixServer::OnFinalized;
    m.abort = &PmixServer::OnAbort;
    m.fence_nb = &PmixServer::OnFence;
    m.direct_modex = &PmixServer::OnDirectModex;
    return m;
  }();
  g_server = this;
  Infos init;
  init.String(PMIX_SERVER_TMPDIR, tmpdir_);
  init.String(PMIX_SYSTEM_TMPDIR, tmpdir_);
  init.Uint32(PMIX_USERID, step_.uid);
  init.Uint32(PMIX_GRPID, step_.gid);
  init.Bool(PMIX_SERVER_TOOL_SUPPORT, false);
  if (pmix_status_t rc = lib_->server_init(&module, init.data(), init.size()); rc != PMIX_SUCCESS) {
    return absl::InternalError(StrCat("PMIx_server_init: ", Error(rc)));
  }
  initialized_ = true;

  std::unique_ptr<Infos> job = JobInfo();
  const std::vector<int32_t>& mine = step_.ranks[static_cast<size_t>(step_.me)];
  {
    OpWait wait;
    pmix_status_t rc = lib_->register_nspace(nspace_.c_str(), static_cast<int>(mine.size()),
                                             job->data(), job->size(), &OpWait::Done, &wait);
    if (rc == PMIX_SUCCESS) rc = wait.Wait();
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
      return absl::InternalError(StrCat("PMIx_server_register_nspace: ", Error(rc)));
    }
    registered_ = true;
  }
  for (int32_t rank : mine) {
    pmix_proc_t proc;
    std::memset(&proc, 0, sizeof proc);
    std::strncpy(proc.nspace, nspace_.c_str(), PMIX_MAX_NSLEN);
    proc.rank = static_cast<pmix_rank_t>(rank);
    OpWait wait;
    pmix_status_t rc =
        lib_->register_client(&proc, step_.uid, step_.gid, nullptr, &OpWait::Done, &wait);
    if (rc == PMIX_SUCCESS) rc = wait.Wait();
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
      return absl::InternalError(StrCat("PMIx_server_register_client: ", Error(rc)));
    }
    clients_.insert(rank);
  }
  core::LogInfo("PMIx {} server for {} ({} of {} ranks here, node {} of {})", lib_->get_version(),
                nspace_, mine.size(), step_.size(), step_.me, step_.nodes.size());
  return absl::OkStatus();
}

StatusOr<std::map<std::string, std::string>> PmixServer::TaskEnvironment(int32_t rank) {
  pmix_proc_t proc;
  std::memset(&proc, 0, sizeof proc);
  std::strncpy(proc.nspace, nspace_.c_str(), PMIX_MAX_NSLEN);
  proc.rank = static_cast<pmix_rank_t>(rank);
  char** env = static_cast<char**>(std::calloc(1, sizeof(char*)));
  if (pmix_status_t rc = lib_->setup_fork(&proc, &env); rc != PMIX_SUCCESS) {
    std::free(env);
    return absl::InternalError(StrCat("PMIx_server_setup_fork: ", Error(rc)));
  }
  std::map<std::string, std::string> out;
  if (!step_.shared_memory_dir_given) {
    out["OMPI_MCA_btl_vader_backing_directory"] = tmpdir_;  // Open MPI 4
    out["OMPI_MCA_btl_sm_backing_directory"] = tmpdir_;     // Open MPI 5
  }
  for (char** e = env; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (const size_t eq = kv.find('='); eq != std::string_view::npos) {
      out[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
    }
    std::free(*e);
  }
  std::free(env);
  return out;
}

PmixServer::~PmixServer() {
  core::LogInfo("{}: {} fences, {} direct modex requests sent, {} served", nspace_, fences_.load(),
                modex_asked_.load(), modex_served_.load());
  link_.Close();  // nothing more comes from the other nodes, nor goes to them
  if (initialized_) {
    for (int32_t rank : clients_) {
      pmix_proc_t proc;
      std::memset(&proc, 0, sizeof proc);
      std::strncpy(proc.nspace, nspace_.c_str(), PMIX_MAX_NSLEN);
      proc.rank = static_cast<pmix_rank_t>(rank);
      lib_->deregister_client(&proc, nullptr, nullptr);
    }
    if (registered_) {
      OpWait wait;
      lib_->deregister_nspace(nspace_.c_str(), &OpWait::Done, &wait);
      (void)wait.Wait();
    }
    lib_->server_finalize();
  }
  g_server = nullptr;
  if (!tmpdir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(tmpdir_, ignored);
  }
}

pmix_status_t PmixServer::OnAbort(const pmix_proc_t* proc, void*, int status, const char msg[],
                                  pmix_proc_t[], size_t, pmix_op_cbfunc_t, void*) {
  if (g_server == nullptr) return PMIX_ERR_INIT;
  v1::StepMessage::Abort a;
  a.set_rank(proc->rank);
  a.set_status(status);
  if (msg != nullptr) a.set_message(msg);
  g_server->link_.Abort(a);
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t PmixServer::OnFence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[],
                                  size_t, char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                                  void* cbdata) {
  PmixServer* s = g_server;
  if (s == nullptr) return PMIX_ERR_INIT;
  // Fences over the whole step: every rank of its namespace (the wildcard, or all of them).
  bool whole = nprocs == static_cast<size_t>(s->step_.size());
  for (size_t i = 0; i < nprocs; ++i) {
    if (std::strncmp(procs[i].nspace, s->nspace_.c_str(), PMIX_MAX_NSLEN) != 0)
      return PMIX_ERR_NOT_SUPPORTED;
    if (procs[i].rank == PMIX_RANK_WILDCARD) whole = true;
  }
  if (!whole) return PMIX_ERR_NOT_SUPPORTED;
  s->fences_++;
  s->link_.exchange().Fence(std::string(data == nullptr ? "" : std::string_view(data, ndata)),
                            [cbfunc, cbdata](std::string all) {
                              auto* kept = new std::string(std::move(all));
                              cbfunc(
                                  PMIX_SUCCESS, kept->data(), kept->size(), cbdata,
                                  [](void* p) { delete static_cast<std::string*>(p); }, kept);
                            });
  return PMIX_SUCCESS;
}

pmix_status_t PmixServer::OnDirectModex(const pmix_proc_t* proc, const pmix_info_t[], size_t,
                                        pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  PmixServer* s = g_server;
  if (s == nullptr) return PMIX_ERR_INIT;
  const int32_t node = s->step_.NodeOf(proc->rank);
  if (node < 0 || std::strncmp(proc->nspace, s->nspace_.c_str(), PMIX_MAX_NSLEN) != 0) {
    return PMIX_ERR_NOT_FOUND;
  }
  s->modex_asked_++;
  s->link_.exchange().Modex(node, proc->rank, [cbfunc, cbdata](int32_t status, std::string data) {
    auto* kept = new std::string(std::move(data));
    cbfunc(
        status, kept->data(), kept->size(), cbdata,
        [](void* p) { delete static_cast<std::string*>(p); }, kept);
  });
  return PMIX_SUCCESS;
}

void PmixServer::Serve(uint32_t rank, StepExchange::ModexDone reply) {
  modex_served_++;
  pmix_proc_t proc;
  std::memset(&proc, 0, sizeof proc);
  std::strncpy(proc.nspace, nspace_.c_str(), PMIX_MAX_NSLEN);
  proc.rank = rank;
  auto* pending = new StepExchange::ModexDone(std::move(reply));
  pmix_status_t rc = lib_->dmodex_request(
      &proc,
      [](pmix_status_t status, char* data, size_t size, void* cbdata) {
        std::unique_ptr<StepExchange::ModexDone> done(
            static_cast<StepExchange::ModexDone*>(cbdata));
        (*done)(status, data == nullptr ? std::string() : std::string(data, size));
      },
      pending);
  if (rc != PMIX_SUCCESS) {
    std::unique_ptr<StepExchange::ModexDone> done(pending);
    (*done)(rc, "");
  }
}

}  // namespace

StatusOr<std::unique_ptr<WireUp>> StartPmixServer(const WireUpStep& step,
                                                  const std::string& relay_socket,
                                                  AbortStep abort_step) {
  ASSIGN_OR_RETURN(const PmixLibrary* lib, LoadPmix());
  auto server = std::make_unique<PmixServer>(lib, step, std::move(abort_step));
  RETURN_IF_ERROR(server->Start(relay_socket));
  return std::unique_ptr<WireUp>(std::move(server));
}

}  // namespace loom::stepd
