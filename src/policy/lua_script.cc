#include "policy/lua_script.h"

#include <algorithm>
#include <limits>
#include <lua.hpp>

#include "core/strings.h"

namespace loom::policy {
namespace {

using core::StrCat;
using nlohmann::json;

// The return codes of Slurm's Lua API. Scripts use the names; the numbers are Slurm's error
// numbers where they are known and only need to be distinct.
struct ReturnCode {
  const char* name;
  int64_t value;
  const char* text;
};
constexpr ReturnCode kReturnCodes[] = {
    {"ESLURM_INVALID_PARTITION_NAME", 2000, "Invalid partition name specified"},
    {"ESLURM_ACCESS_DENIED", 2002, "Access/permission denied"},
    {"ESLURM_INVALID_NODE_COUNT", 2006, "Node count specification invalid"},
    {"ESLURM_JOB_MISSING_SIZE_SPECIFICATION", 2008, "Job size specification needs to be provided"},
    {"ESLURM_INVALID_FEATURE", 2029, "Invalid feature specification"},
    {"ESLURM_INVALID_ACCOUNT", 2045, "Invalid account or account/partition combination specified"},
    {"ESLURM_INVALID_LICENSES", 2048, "Invalid license specification"},
    {"ESLURM_ACCOUNTING_POLICY", 2050,
     "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"},
    {"ESLURM_INVALID_TIME_LIMIT", 2051,
     "Requested time limit is invalid (missing or exceeds some limit)"},
    {"ESLURM_INVALID_QOS", 2066, "Invalid qos specification"},
    {"ESLURM_MISSING_TIME_LIMIT", 2096, "Time limit specification required, but not provided"},
};

// What the C functions of the `slurm` table write into: the result of the call under way.
constexpr char kCurrentKey[] = "loom.current_call";

CallResult* Current(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kCurrentKey);
  auto* r = static_cast<CallResult*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return r;
}

// slurm._log(level, text)
int LogFn(lua_State* L) {
  const char* level = luaL_checkstring(L, 1);
  size_t n = 0;
  const char* text = luaL_checklstring(L, 2, &n);
  if (CallResult* r = Current(L)) r->log.push_back({level, std::string(text, n)});
  return 0;
}

// slurm._user_msg(text)
int UserMsgFn(lua_State* L) {
  size_t n = 0;
  const char* text = luaL_checklstring(L, 1, &n);
  if (CallResult* r = Current(L)) r->user_msgs.emplace_back(text, n);
  return 0;
}

// The helpers a script calls as in Slurm, with string.format's arguments.
constexpr char kPrelude[] = R"lua(
local function text(...)
  if select('#', ...) == 0 then return '' end
  return string.format(...)
end
local levels = {'error', 'info', 'verbose', 'debug', 'debug2', 'debug3', 'debug4', 'debug5'}
for _, level in ipairs(levels) do
  slurm['log_' .. level] = function(...) slurm._log(level, text(...)) end
end
slurm.log_user = function(...) slurm._user_msg(text(...)) end
slurm.user_msg = slurm.log_user
)lua";

void SetInteger(lua_State* L, const char* name, int64_t v) {
  lua_pushinteger(L, static_cast<lua_Integer>(v));
  lua_setfield(L, -2, name);
}

void Push(lua_State* L, const json& v) {
  switch (v.type()) {
    case json::value_t::boolean:
      lua_pushboolean(L, v.get<bool>() ? 1 : 0);
      return;
    case json::value_t::number_integer:
      lua_pushinteger(L, v.get<int64_t>());
      return;
    case json::value_t::number_unsigned:
      lua_pushinteger(L, static_cast<lua_Integer>(v.get<uint64_t>()));
      return;
    case json::value_t::number_float:
      lua_pushnumber(L, v.get<double>());
      return;
    case json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
    case json::value_t::array: {
      lua_createtable(L, static_cast<int>(v.size()), 0);
      lua_Integer i = 1;
      for (const json& e : v) {
        Push(L, e);
        lua_rawseti(L, -2, i++);
      }
      return;
    }
    case json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(v.size()));
      for (const auto& [key, e] : v.items()) {
        if (e.is_null()) continue;
        Push(L, e);
        lua_setfield(L, -2, key.c_str());
      }
      return;
    }
    default:
      lua_pushnil(L);
      return;
  }
}

// The value at `index` as JSON: a table whose keys are exactly 1..n is an array, any other
// an object (number keys written as text). Functions and userdata read as null; tables
// nested deeper than 16 levels (or in a cycle) are cut there.
json Read(lua_State* L, int index, int depth = 0) {
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN:
      return lua_toboolean(L, index) != 0;
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) return static_cast<int64_t>(lua_tointeger(L, index));
      return lua_tonumber(L, index);
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, index, &n);
      return std::string(s, n);
    }
    case LUA_TTABLE: {
      if (depth >= 16) return nullptr;
      json object = json::object();
      std::vector<std::pair<lua_Integer, json>> numbered;
      bool only_numbers = true;
      lua_pushnil(L);
      while (lua_next(L, index) != 0) {
        json value = Read(L, -1, depth + 1);
        if (lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2)) {
          numbered.emplace_back(lua_tointeger(L, -2), value);
          object[std::to_string(lua_tointeger(L, -2))] = std::move(value);
        } else {
          only_numbers = false;
          lua_pushvalue(L, -2);  // a copy: lua_tostring must not change the key lua_next reads
          const char* key = lua_tostring(L, -1);
          if (key != nullptr) object[key] = std::move(value);
          lua_pop(L, 1);
        }
        lua_pop(L, 1);
      }
      if (only_numbers && !numbered.empty()) {
        std::sort(numbered.begin(), numbered.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        bool dense = true;
        for (size_t i = 0; i < numbered.size(); ++i) {
          dense = dense && numbered[i].first == static_cast<lua_Integer>(i + 1);
        }
        if (dense) {
          json array = json::array();
          for (auto& [_, v] : numbered) array.push_back(std::move(v));
          return array;
        }
      }
      return object;
    }
    default:
      return nullptr;
  }
}

}  // namespace

std::string ReturnCodeText(int64_t rc) {
  for (const ReturnCode& c : kReturnCodes) {
    if (c.value == rc) return c.text;
  }
  return "Unspecified error";
}

StatusOr<std::unique_ptr<LuaScript>> LuaScript::Load(std::string_view text, std::string_view name) {
  std::unique_ptr<LuaScript> script(new LuaScript());
  script->name_ = std::string(name);
  lua_State* L = luaL_newstate();
  if (L == nullptr) return absl::ResourceExhaustedError("cannot create a Lua state (no memory)");
  script->L_ = L;
  luaL_openlibs(L);

  lua_newtable(L);
  SetInteger(L, "SUCCESS", kSuccess);
  SetInteger(L, "ERROR", kError);
  SetInteger(L, "FAILURE", kError);
  for (const ReturnCode& c : kReturnCodes) SetInteger(L, c.name, c.value);
  SetInteger(L, "NO_VAL", kNoVal);
  SetInteger(L, "NO_VAL16", kNoVal16);
  SetInteger(L, "NO_VAL64", kNoVal64);
  SetInteger(L, "INFINITE", kInfinite);
  SetInteger(L, "INFINITE16", kInfinite16);
  SetInteger(L, "INFINITE64", kInfinite64);
  SetInteger(L, "MEM_PER_CPU", std::numeric_limits<int64_t>::min());
  lua_pushcfunction(L, LogFn);
  lua_setfield(L, -2, "_log");
  lua_pushcfunction(L, UserMsgFn);
  lua_setfield(L, -2, "_user_msg");
  lua_setglobal(L, "slurm");
  if (luaL_dostring(L, kPrelude) != LUA_OK) {
    return absl::InternalError(StrCat("Lua prelude: ", lua_tostring(L, -1)));
  }

  const std::string chunk = StrCat("@", name);
  if (luaL_loadbuffer(L, text.data(), text.size(), chunk.c_str()) != LUA_OK ||
      lua_pcall(L, 0, 0, 0) != LUA_OK) {
    std::string why = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "an error";
    return absl::InvalidArgumentError(why);
  }
  return script;
}

LuaScript::~LuaScript() {
  if (L_ != nullptr) lua_close(L_);
}

bool LuaScript::Defines(const char* function) const {
  const bool is = lua_getglobal(L_, function) == LUA_TFUNCTION;
  lua_pop(L_, 1);
  return is;
}

StatusOr<CallResult> LuaScript::Call(const char* function, std::vector<json> args) {
  CallResult result;
  lua_settop(L_, 0);
  if (lua_getglobal(L_, function) != LUA_TFUNCTION) {
    lua_settop(L_, 0);
    return absl::InvalidArgumentError(StrCat(name_, " defines no function ", function));
  }
  std::vector<int> refs(args.size(), LUA_NOREF);
  for (size_t i = 0; i < args.size(); ++i) {
    Push(L_, args[i]);
    if (lua_istable(L_, -1)) {
      lua_pushvalue(L_, -1);
      refs[i] = luaL_ref(L_, LUA_REGISTRYINDEX);
    }
  }
  lua_pushlightuserdata(L_, &result);
  lua_setfield(L_, LUA_REGISTRYINDEX, kCurrentKey);
  const int status = lua_pcall(L_, static_cast<int>(args.size()), 1, 0);
  lua_pushnil(L_);
  lua_setfield(L_, LUA_REGISTRYINDEX, kCurrentKey);

  Status outcome = absl::OkStatus();
  if (status != LUA_OK) {
    const char* why = lua_tostring(L_, -1);
    outcome = absl::InvalidArgumentError(why != nullptr ? why : StrCat(function, " failed"));
  } else if (lua_isinteger(L_, -1)) {
    result.rc = lua_tointeger(L_, -1);
  } else if (lua_type(L_, -1) == LUA_TNUMBER) {
    result.rc = static_cast<int64_t>(lua_tonumber(L_, -1));
  } else if (!lua_isnil(L_, -1)) {
    outcome = absl::InvalidArgumentError(StrCat(name_, ": ", function, " returned a ",
                                                luaL_typename(L_, -1),
                                                ", not a return code such as slurm.SUCCESS"));
  }
  lua_settop(L_, 0);
  for (size_t i = 0; i < args.size(); ++i) {
    if (refs[i] == LUA_NOREF) {
      result.args.push_back(std::move(args[i]));
      continue;
    }
    lua_rawgeti(L_, LUA_REGISTRYINDEX, refs[i]);
    result.args.push_back(Read(L_, -1));
    lua_pop(L_, 1);
    luaL_unref(L_, LUA_REGISTRYINDEX, refs[i]);
  }
  if (!outcome.ok()) return outcome;
  return result;
}

}  // namespace loom::policy
