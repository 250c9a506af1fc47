-- lacc.util: helpers shared by the surface modules.
-- Owns: finding the user's source place for error messages and nodes, the core
-- binding in use (lacc.core on Lua 5.4, lacc.ffi_core on LuaJIT).
local M = {}

if type(jit) == "table" then
  M.core = require "lacc.ffi_core"
elseif _VERSION ~= "Lua 5.4" then
  error(("lacc runs on Lua 5.4 and LuaJIT, not %s (busted: busted --lua=lua5.4 or " ..
         "--lua=luajit)"):format(_VERSION), 0)
else
  M.core = require "lacc.core"
end

-- The core's limits by name (core/include/lacc.h): rank, elements, args, zip, fields,
-- constructors, nesting, name, depth, stencil_rank, window.
M.limits = M.core.limits

-- Whether a chunk name (short_src, optionally with :line) is one of lacc's own files
-- (lua/lacc/*.lua, lua/lacc/mpi/*.lua).
function M.own_file(src)
  return src:find("lacc[/\\][%w_]+%.lua[:%d]*$") ~= nil or src:find("lacc[/\\]mpi[/\\][%w_]+%.lua[:%d]*$") ~= nil
end

-- own_file of each chunk name seen, kept: where() asks it of every frame it passes, and
-- a node made inside lacc.mpi's handlers passes a dozen or more of lacc's own (its two
-- pattern searches were a quarter of a distributed CG turn's time under LuaJIT). Chunk
-- names are few (files; a program that loads many strings stops adding at the bound).
local own_seen, own_count = {}, 0
local function is_own(src)
  local own = own_seen[src]
  if own == nil then
    own = M.own_file(src)
    if own_count < 4096 then own_seen[src], own_count = own, own_count + 1 end
  end
  return own
end

-- Functions of lacc's own whose frame stands for a place in the user's program, each with
-- a function giving that place: lacc.mpi's evaluation of a distributed node (the place of
-- the combinator's call) while it builds the node's programs on each rank. where() stops
-- at the first such frame: the frames below it (the run's, every node it reads through)
-- were a third of a distributed CG turn's time under LuaJIT, walked for each node built.
M.place_frames = setmetatable({}, { __mode = "k" })

-- Whether each function seen on the stack is lacc's own (or C), by the function: a
-- frame's function alone is cheap to ask for, its source and current line are not (a
-- node built inside lacc.mpi's handlers passes a dozen of lacc's frames).
local own_fn = setmetatable({}, { __mode = "k" })

-- While set, the place every node made takes without a look at the stack: lacc.mpi's
-- evaluation of a distributed node sets it to the node's own place while the node's
-- handler builds its programs (what the walk below would find there, at eval's frame),
-- and tracing a function clears it while the function runs (its nodes take its lines).
M.place = nil

-- f(...) with M.place set to place (nodes made meanwhile take it, where() walks nothing),
-- then M.place as it was, also when f raises (the error raised again as it is).
local function restored(saved, ok, ...)
  M.place = saved
  if not ok then error((...), 0) end
  return ...
end
function M.at_place(place, f, ...)
  local saved = M.place
  M.place = place
  return restored(saved, pcall(f, ...))
end

-- A composite combinator (one built of others: filter, matmul, transpose, ...) that
-- finds its caller's place once: f runs at it, so that the combinators it calls and the
-- functions of its own it gives them (exp.own) make their nodes there without a walk of
-- the stack each.
function M.composite(f)
  return function(...) return M.at_place(M.where(), f, ...) end
end

-- The first stack frame outside lacc's own Lua files: "file.lua:12".
function M.where()
  if M.place then return M.place end
  local stands = M.place_frames
  for level = 3, 40 do
    local info = debug.getinfo(level, "f")
    if not info then break end
    local f = info.func
    local stand = stands[f]
    if stand then return stand() end
    local own = own_fn[f]
    if own == nil then
      local s = debug.getinfo(level, "S")
      own = s.what == "C" or is_own(s.short_src or "?")
      own_fn[f] = own
    end
    if not own then
      local at = debug.getinfo(level, "Sl")
      return (at.short_src or "?") .. ":" .. (at.currentline or 0)
    end
  end
  return "?"
end

-- What a value is, for messages: "a host array", "an array program", "a scalar
-- expression", else its Lua type (the same words on Lua 5.4 and LuaJIT).
function M.describe(x)
  if M.core.is_array(x) then return "a host array" end
  local mt = type(x) == "table" and getmetatable(x)
  if mt and rawget(mt, "__lacc_what") then return mt.__lacc_what end   -- lacc.mpi's values
  if type(x) == "table" and rawget(x, "node") ~= nil then
    return rawget(x, "rank") ~= nil and "an array program" or "a scalar expression"
  end
  return type(x)
end

-- x rounded to the nearest f32 (as a Lua number).
if type(jit) == "table" then
  local ffi = require "ffi"
  local box = ffi.new("float[1]")
  function M.f32(x) box[0] = x; return tonumber(box[0]) end
else
  function M.f32(x) return (string.unpack("f", string.pack("f", x))) end
end

-- Whether x is a Lua number with an integral, finite value.
function M.is_integer(x)
  return type(x) == "number" and x == math.floor(x) and x - x == 0
end

-- An int64_t or uint64_t cdata (LuaJIT's 64-bit integers past 2^53; nothing on Lua 5.4).
local has_ffi, ffi = pcall(require, "ffi")
function M.is_int64_box(x)
  return has_ffi and type(x) == "cdata" and (ffi.istype("int64_t", x) or ffi.istype("uint64_t", x))
end

-- A whole number a 64-bit type takes: a Lua integer or an int64 box.
function M.is_int64_value(x) return M.is_integer(x) or M.is_int64_box(x) end

-- A value for a message: numbers as Lua prints them (NaN as "nan" on every platform and
-- VM), anything else described.
function M.show(x)
  if type(x) == "number" then return x ~= x and "nan" or tostring(x) end
  return M.describe(x)
end

-- Whether x can go to %d as it is: an integral number in int64's range. Lua 5.4's %d
-- raises an error of its own for any other number, LuaJIT's wraps it.
local function fits_d(x)
  return x == math.floor(x) and x >= -2 ^ 63 and x < 2 ^ 63
end

-- Raise an error at the user's place, in the style of the core's messages. A number for
-- %d (or %i) that does not fit is written out as %s (in full where integral: the same
-- text on both VMs), so that a message about a huge value stays that message.
function M.fail(fmt, ...)
  local args, i = { ... }, 0
  fmt = fmt:gsub("%%[-+ #0]*%d*%.?%d*([%a%%])", function(conv)
    if conv == "%" then return nil end
    i = i + 1
    local x = args[i]
    if (conv == "d" or conv == "i") and type(x) == "number" and not fits_d(x) then
      args[i] = x == math.floor(x) and ("%.0f"):format(x) or M.show(x)
      return "%s"
    end
  end)
  error(fmt:format((table.unpack or unpack)(args, 1, select("#", ...))) .. " (at " ..
        M.where() .. ")", 0)
end

-- A surface module's install(lacc): adds its functions to lacc (the table init.lua
-- assembles) and hands lacc to bind, for the module's calls through it.
function M.installer(functions, bind)
  return function(lacc)
    bind(lacc)
    for k, v in pairs(functions) do lacc[k] = v end
  end
end

-- A read-only view of t for users: reads (and pairs on Lua 5.4; LuaJIT ignores __pairs)
-- see t, writes are errors.
function M.readonly(t, name)
  return setmetatable({}, {
    __index = t,
    __newindex = function(_, k) M.fail("%s is read-only (cannot set %s)", name, tostring(k)) end,
    __pairs = function() return next, t, nil end,
  })
end

return M
