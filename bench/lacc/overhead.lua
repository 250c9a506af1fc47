-- The fixed costs of issue 4: a warm lacc.compile'd call of a one-kernel program on a
-- 1-element array, the same through lacc.run, and the first (cold) call, which compiles
-- the kernel or finds it in the disk cache. bench/run.sh runs this twice with a fresh
-- LACC_CACHE: the first process compiles, the second must hit the disk cache.
-- Prints RESULT lines in microseconds-as-ms like the other rows (column "median ms").
local lacc = require "lacc"
local B = require "benchlib"
local bench, tag = "overhead", arg[1] or "first"

-- A program distinct from any other benchmark's, so the cold call really compiles.
local function prog(x)
  return lacc.map(function(v) return v * 3 + 7 end, x)
end

local xs = lacc.fromtable({ 2.5 }, "f32")
local f = lacc.compile(prog)

local t0 = B.now()
local r = f(xs)
local cold = (B.now() - t0) * 1e3
assert(r:get(1) == 14.5, "wrong result")
B.result(bench, "cold_" .. tag, cold, r:get(1), 1,
  tag == "first" and "first call: trace, fuse, generate C, cc, dlopen"
                  or "first call of a second process: the disk cache")

-- Warm calls: many per sample, so the clock's resolution does not matter.
local inner = 2000
local function per_call(body)
  local ms = B.measure(function()
    for _ = 1, inner do body() end
  end)
  return ms / inner
end
if tag == "first" then
  local c = per_call(function() return f(xs) end)
  B.result(bench, "warm_compile", c, r:get(1), B.policy.reps, "lacc.compile'd call, 1 element")
  local p = prog(xs)
  local c2 = per_call(function() return lacc.run(p) end)
  B.result(bench, "warm_run", c2, r:get(1), B.policy.reps, "lacc.run of a built program, 1 element")
  -- a program built anew each call, as a loop of lacc.run(lacc.map(f, xs)) builds it:
  -- traced and simplified each time, its plan found again (programs of one shape)
  local c5 = per_call(function() return lacc.run(prog(xs)) end)
  B.result(bench, "anew_run", c5, r:get(1), B.policy.reps,
           "lacc.run of a program built anew each call, 1 element")
  -- one call at a time, after a collection, as the other benches time a call (the opencl
  -- rows below have the same)
  local h = lacc.compile(function(x) return lacc.sum(x) end)
  local c3 = B.measure(function() return h(xs):get() end)
  B.result(bench, "single_sum_read", c3, h(xs):get(), B.policy.reps,
           "lacc.compile'd sum on cpu, 1 element, its value read, one call after a collection")
end
-- the same on the default OpenCL device (issue 26): what a run costs there beyond the
-- kernel (arguments, launches, the device buffers from the pool, waiting for the queue)
if tag == "first" and #lacc.devices() > 0 then
  local cl = { backend = "opencl" }
  local g = lacc.compile(prog, cl)
  assert(g(xs):get(1) == 14.5, "wrong result on opencl")
  local c = per_call(function() return g(xs) end)
  B.result(bench, "warm_compile_opencl", c, r:get(1), B.policy.reps, "lacc.compile'd call on opencl, 1 element")
  local p = prog(xs)
  assert(lacc.run(p, cl):get(1) == 14.5, "wrong result on opencl")
  local c2 = per_call(function() return lacc.run(p, cl) end)
  B.result(bench, "warm_run_opencl", c2, r:get(1), B.policy.reps, "lacc.run of a built program on opencl, 1 element")
  -- a fold whose value the host reads, as bench/opencl/latency.c's hand-written kernel
  -- and read: back to back, and one call at a time as the other benches time them
  local h = lacc.compile(function(x) return lacc.sum(x) end, cl)
  assert(h(xs):get() == 2.5, "wrong sum on opencl")
  local c3 = per_call(function() return h(xs):get() end)
  B.result(bench, "warm_sum_read_opencl", c3, h(xs):get(), B.policy.reps,
           "lacc.compile'd sum on opencl, 1 element, its value read, calls back to back")
  local c4 = B.measure(function() return h(xs):get() end)
  B.result(bench, "single_sum_read_opencl", c4, h(xs):get(), B.policy.reps,
           "the same, one call after a collection")
end
