--[[
job_submit.lua: the submit-time policy of a shared GPU cluster.

Install it beside slurm.conf and set JobSubmitPlugins=lua; `scontrol reconfigure` loads a
new version. It runs unchanged on Slurm 22.05 and on Loom (docs/admin/job-submit.md).

1. Every GPU job binds its tasks to the GPUs beside their CPUs and uses one thread per core,
   as `--gpu-bind=closest --hint=nomultithread` would: relying on users to ask is the same
   as not doing it. A job that asks for its own binding or threads keeps them.
2. A job that names no partition is routed by its time limit: up to 1 hour to debug, up to
   2 days to normal, up to 14 days to long (each only where the cluster has it). Longer
   jobs are refused with a message saying why, and so is an update (`scontrol update job`)
   that would make a job longer than that.
]]

local HOUR = 60  -- time limits are in minutes
local DAY = 24 * HOUR

local routes = {
  { limit = HOUR, partition = "debug" },
  { limit = 2 * DAY, partition = "normal" },
  { limit = 14 * DAY, partition = "long" },
}

local function too_long(limit)
  return limit == slurm.INFINITE or limit > routes[#routes].limit
end

local function asks_for_gpus(job_desc)
  for _, field in ipairs({ "tres_per_node", "tres_per_job", "tres_per_task", "tres_per_socket" }) do
    local tres = job_desc[field]
    if tres ~= nil and string.find(tres, "gpu", 1, true) then
      return true
    end
  end
  return false
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  if asks_for_gpus(job_desc) then
    if job_desc.tres_bind == nil then
      job_desc.tres_bind = "gres/gpu:closest"
    end
    if job_desc.threads_per_core == slurm.NO_VAL16 then
      job_desc.threads_per_core = 1
    end
    slurm.log_info("GPU job of uid %d: tres_bind=%s threads_per_core=%d",
                   submit_uid, job_desc.tres_bind, job_desc.threads_per_core)
  end

  local limit = job_desc.time_limit
  if job_desc.partition == nil and limit ~= slurm.NO_VAL then
    if too_long(limit) then
      slurm.user_msg("jobs may run for 14 days at most; ask for less with --time")
      return slurm.ESLURM_INVALID_TIME_LIMIT
    end
    for _, route in ipairs(routes) do
      if limit <= route.limit and part_list[route.partition] ~= nil then
        job_desc.partition = route.partition
        break
      end
    end
  end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  if job_desc.time_limit ~= slurm.NO_VAL and too_long(job_desc.time_limit) then
    slurm.user_msg("job %d may run for 14 days at most", job_rec.job_id)
    return slurm.ESLURM_INVALID_TIME_LIMIT
  end
  return slurm.SUCCESS
end
