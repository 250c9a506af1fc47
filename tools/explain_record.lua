-- explain_record.lua: records what `explain` prints for every program the specs run, to
-- show that a change to the core's structure changes no program (tools/explain_diff.sh).
-- Loaded before busted through LUA_INIT (Lua 5.4 only); LACC_EXPLAIN_RECORD names the
-- folder. Each run's program is explained three ways (plain, with the C source, with the
-- OpenCL C source) under the options in force, and each text stored once, named by a
-- hash of its contents, so that two folders compare with `diff`.
local dir = os.getenv("LACC_EXPLAIN_RECORD")
if not dir or dir == "" then return end
local core = require "lacc.core"
require "lacc"

local function hash(s)   -- FNV-1a, 64 bits
  local h = -3750763034362895579
  for i = 1, #s do h = (h ~ s:byte(i)) * 1099511628211 end
  return string.format("%016x", h)
end

local function store(kind, text)
  local name = dir .. "/" .. kind .. "-" .. hash(text) .. ".txt"
  local f = io.open(name, "r")
  if f then f:close() return end
  f = io.open(name, "w")
  if f then f:write(text) f:close() end
end

local function record(...)
  local ok, text = pcall(core.explain, nil, ...)
  store("plain", ok and tostring(text) or "error: " .. tostring(text))
  core.set_option("source", true)
  ok, text = pcall(core.explain, nil, ...)
  core.set_option("source", false)
  if ok then store("c", text) end
  core.set_option("source_opencl", true)
  ok, text = pcall(core.explain, nil, ...)
  core.set_option("source", false)
  if ok then store("opencl", text) end
end

local run = core.run
core.run = function(backend, ...)
  record(...)
  return run(backend, ...)
end
