-- bench/lacc/rows.lua: running one lacc row of a benchmark. A row is a mode:
--   default      lacc.run(p)                      (backend from LACC_BACKEND, default cpu)
--   fusion_off   lacc.run(p, {fusion = false})
--   hfuse_off    lacc.run(p, {hfuse = false}): sibling folds not merged into one pass
--   sharing_off  lacc.run(p, {sharing = false})
--   compile      f = lacc.compile(fn) once, then f(inputs...) is timed
--   opencl       lacc.run(p, {backend = "opencl"}): the inputs are on the device after
--                the warm-up run and the result stays there (read after the timing)
--   opencl_read  the same, and the result read back to the host inside the timed run
-- With BENCH_FIRST_RUN=1 (bench/run.sh sets it, with an empty LACC_CACHE, for matmul's
-- plain lacc row) the very first run is timed on its own, before the warm-ups, and given
-- in the note as first_run=MS: it includes generating and compiling the kernels.
-- A program of several results (spec.multi: p a table of programs, fn returning several)
-- gives its checksum function every result, and every result is freed (and, in
-- opencl_read, read back).
-- Inputs are made once, untimed, by lacc itself (lacc.run(lacc.generate(...))) with the
-- formulas of bench/c/common.h, so every row of a benchmark sees the very same data.
local lacc = require "lacc"
local B = require "benchlib"

local R = {}

local function frac(k, c)
  local d = lacc.cast(k, "f64") * c
  return d - lacc.floor(d)
end
-- frac(k, c) of an index expression k: k c - floor(k c) in f64 (bench/c/common.h's frac_k).
R.frac = frac
local gens = {
  u24 = function(k, c) return lacc.cast(frac(k, c), "f32") end,
  u16 = function(k, c) return lacc.cast(lacc.floor(65536 * frac(k, c)) / 65536, "f32") end,
  b01 = function(k, c) return lacc.cast(lacc.floor(2 * frac(k, c)), "f32") end,
}

-- input(n, "u24", B.C1 [, scale, offset]) -> a host f32 array of n elements, element k
-- (1-based) = offset + scale * gen(k, c) computed in f32.
function R.input(n, gen, c, scale, offset)
  return lacc.run(lacc.generate({ n }, function(k)
    local v = gens[gen](k, c)
    if scale then v = offset + scale * v end
    return v
  end))
end

-- The f64 sum of an array of f32 (or of a function of its elements), as a Lua number.
function R.sum64(xs, f)
  f = f or function(x) return x:cast("f64") end
  local s = lacc.run(lacc.sum(lacc.map(f, xs)))
  return s:get()
end

local modes = {
  default = {},
  fusion_off = { fusion = false },
  hfuse_off = { hfuse = false },
  sharing_off = { sharing = false },
  opencl = { backend = "opencl" },
  opencl_read = { backend = "opencl" },
}

-- Reading one element of a device result brings the whole array back to the host.
local function read_back(r)
  if (type(r) == "userdata" or type(r) == "cdata") and r:size() > 0 then r:at_linear(0) end
  return r
end

local function packed(...) return { n = select("#", ...), packed = true, ... } end

local function free(r)
  if type(r) == "table" and r.packed then
    for k = 1, r.n do pcall(function() r[k]:free() end) end
  elseif type(r) == "userdata" or type(r) == "cdata" or type(r) == "table" then
    pcall(function() r:free() end)
  end
end

-- The kernel count lacc reports for p under opts, when explain answers.
local function kernels(p, opts)
  local ok, _, stats = pcall(lacc.explain, p, opts)
  if ok and type(stats) == "table" and stats.kernels then return "kernels=" .. stats.kernels end
  return nil
end

-- run{bench, row, mode, program = p, fn = function(inputs...) -> program, inputs = {...},
--     checksum = function(result) -> number [, multi = true]}: with multi, p is a table
--     of programs (fn returns several) and checksum gets all the results
function R.run(spec)
  local bench, row, mode = spec.bench, spec.row, spec.mode
  local body, note
  if mode == "compile" then
    if lacc.compile == nil then return B.na(bench, row, "lacc.compile does not exist yet") end
    local ok, f = pcall(lacc.compile, spec.fn)
    if not ok then return B.na(bench, row, "lacc.compile failed: " .. tostring(f)) end
    local inputs = spec.inputs or {}
    body = function() return f((table.unpack or unpack)(inputs)) end
  else
    local opts = modes[mode]
    if not opts then return B.na(bench, row, "unknown mode " .. tostring(mode)) end
    local p = spec.program
    note = kernels(p, opts)
    if next(opts) == nil then
      body = function() return lacc.run(p) end
    elseif mode == "opencl_read" and not spec.multi then
      body = function() return read_back(lacc.run(p, opts)) end
    else
      body = function() return lacc.run(p, opts) end
    end
  end
  if spec.multi then
    local one, read = body, mode == "opencl_read"
    body = function()
      local r = packed(one())
      if read then for k = 1, r.n do read_back(r[k]) end end
      return r
    end
  end
  local first
  if os.getenv("BENCH_FIRST_RUN") == "1" then
    local okf, t = pcall(function()
      local t0 = B.now()
      local r0 = body()
      local dt = B.now() - t0
      free(r0)
      return dt
    end)
    if not okf then return B.na(bench, row, "error: " .. tostring(t)) end
    first = ("first_run=%.1fms "):format(1e3 * t)
  end
  local ok, ms, reps, r = pcall(B.measure, body, free)
  if not ok then return B.na(bench, row, "error: " .. tostring(ms)) end
  local okc, cs
  if spec.multi then
    okc, cs = pcall(spec.checksum, (table.unpack or unpack)(r, 1, r.n))
  else
    okc, cs = pcall(spec.checksum, r)
  end
  if not okc then return B.na(bench, row, "checksum failed: " .. tostring(cs)) end
  free(r)
  local vm = type(jit) == "table" and jit.version or _VERSION
  B.result(bench, row, ms, cs, reps,
    (note and note .. " " or "") .. (first or "") .. vm:gsub(" ", ""))
end

-- Command line of every bench/lacc script: ROW MODE SIZE [TYPE] (the element type, for
-- the scripts of benchmarks run at two types: matmul).
function R.args()
  local row, mode, size = arg[1], arg[2] or "default", tonumber(arg[3])
  if not row or not size then
    io.stderr:write("usage: " .. arg[0] .. " ROW MODE SIZE [TYPE]\n")
    os.exit(2)
  end
  return row, mode, size, arg[4]
end

return R
