-- The nearest hit of a ray among n primitives (examples/nearest.lua), every row of seed
-- 002 §4.3 and two more: variant-wise split and joined (a collection made by
-- lacc.partition, untimed), and element-wise in the unboxed, rtu and compact layouts, on a
-- scene in random order and one grouped by kind. Usage: nearest.lua ROW SIZE [BACKEND].
-- Each row times a call of the program compiled once with lacc.compile (the result, a
-- pair, is read too).
local lacc = require "lacc"
local B = require "benchlib"
local N = assert(loadfile("examples/nearest.lua"))("library")

local row, n, backend = arg[1], tonumber(arg[2]), arg[3] or "cpu"
if not row or not n then
  io.stderr:write("usage: nearest.lua ROW SIZE [BACKEND]\n")
  os.exit(2)
end
local bench = "nearest_" .. n
local opts = { backend = backend }

local rows = {
  split = { order = "random", strategy = "split" },
  joined = { order = "random", strategy = "joined" },
  unboxed_random = { order = "random", layout = "unboxed" },
  unboxed_sorted = { order = "sorted", layout = "unboxed" },
  rtu_random = { order = "random", layout = "rtu" },
  rtu_sorted = { order = "sorted", layout = "rtu" },
  compact_random = { order = "random", layout = "compact" },
  compact_sorted = { order = "sorted", layout = "compact" },
}
local spec = rows[row:gsub("^lacc_", ""):gsub("_opencl$", "")]
if not spec then
  B.na(bench, row, "unknown row " .. row)
  os.exit(0)
end

lacc.set_layout(spec.layout or "compact")
local xs = lacc.fromtable(N.scene(n, spec.order == "sorted"), N.Prim)
local prims = xs
if spec.strategy then prims = lacc.run(lacc.partition(xs), opts) end
-- compiled once (lacc.compile): each timed call binds the arrays and runs the kernels
local strategy = spec.strategy and { strategy = spec.strategy }
local p = N.nearest(prims, N.origin, N.direction, strategy)
local f = lacc.compile(function(ps) return N.nearest(ps, N.origin, N.direction, strategy) end, opts)
local ok, ms, reps, r = pcall(B.measure, function()
  local res = f(prims)
  res:get()
  return res
end)
if not ok then
  B.na(bench, row, "error: " .. tostring(ms))
  os.exit(0)
end
local _, stats = lacc.explain(p)
local best = r:get()
B.result(bench, row, ms, best[1], reps, ("primitive=%s kernels=%d"):format(tostring(best[2]), stats.kernels))
