-- The targets of issue 23 (tiers): the first run of a new one-kernel program on 1,000
-- elements, and a script that builds 20 distinct kernels over 1M-element arrays, each
-- run once. bench/run.sh runs it in fresh processes: cold under LACC_TIER=auto and =opt
-- (fresh kernel caches), then warm (the cache the opt process filled), and prints the
-- rows in the overhead table.
local lacc = require "lacc"
local B = require "benchlib"
local tag = arg[1] or "auto"
local bench = "overhead"

-- One kernel no other benchmark builds, on 1,000 f32.
local xs = lacc.generate({ 1000 }, function(i) return lacc.cast(i, "f32") * 0.5 end)
xs = lacc.run(xs, { backend = "interp" })
local t0 = B.now()
local r = lacc.run(lacc.map(function(v) return v * 5 + 11 end, xs))
local first = (B.now() - t0) * 1e3
assert(r:get(2) == 16, "wrong result")
B.result(bench, "first_run_" .. tag, first, r:get(2), 1,
  "the first run of a new one-kernel program on 1,000 f32, LACC_TIER=" .. lacc.config().tier)

-- 20 distinct kernels (chains of 1 to 20 operations; every other one a sum) over 1M f32.
local n = 1000000
local ys = lacc.run(lacc.generate({ n }, function(i) return lacc.cast(i % 1000, "f32") end))
local function chain(k)
  return function(x)
    local y = x
    for i = 1, k do y = y * 0.5 + i end
    return y
  end
end
local check = 0
t0 = B.now()
for k = 1, 20 do
  local m = lacc.map(chain(k), ys)
  if k % 2 == 0 then
    check = check + lacc.run(lacc.sum(m)):get()
  else
    check = check + lacc.run(m):get(n)
  end
end
local twenty = (B.now() - t0) * 1e3
local t = lacc.tiers()
B.result(bench, "twenty_" .. tag, twenty, check, 1,
  ("20 new kernels over 1M f32, each run once: runs on interp %d, fast %d, opt %d"):format(
    t.interp, t.fast, t.opt))
