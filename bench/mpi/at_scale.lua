-- make bench-mpi-model: the scaling model of lacc.mpi past this machine. One process
-- plays a rank of P = 64, 256 and 1,024 over the simulated transport (lacc.mpi.simulate:
-- it counts what would be sent, sends nothing) for make bench-mpi's four programs at its
-- sizes a rank (weak scaling); the rank shown is the one the formulas give the most
-- bytes. Per program and P: the messages and bytes that rank sends (and whether they are
-- the formulas' of spec/mpi/model.lua), the collectives it joins, its local time (the
-- simulated run: its own block's work, real) and the predicted time per iteration on a
-- network of latency ALPHA_US (default 2) and bandwidth BETA_GBS (default 10 GB/s):
--   local + ALPHA x (messages + collectives x ceil(log2 P)) + bytes / BETA
-- (an agreement is an all-reduce of a few bytes: ceil(log2 P) latencies). cg: per turn.
local lacc = require "lacc"
local model = require "mpi.model"
local clock = assert(require("benchlib").now, "bench/mpi: no wall clock (make bench builds benchclock)")

local scale = tonumber(os.getenv("BENCH_SCALE") or "1") or 1
local REPS = tonumber(os.getenv("BENCH_REPS") or "3") or 3
local ALPHA = (tonumber(os.getenv("ALPHA_US") or "2") or 2) * 1e-6
local BETA = (tonumber(os.getenv("BETA_GBS") or "10") or 10) * 1e9
local sizes = { dot = math.floor(10000000 * scale), rows = math.floor(2048 * scale), w = 1024,
                keys = math.floor(4000000 * scale), bins = 256, turns = 10 }

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

-- the rank the formulas give the most bytes (ties: the first)
local function busiest(name, P)
  local best, most = 1, -1
  for r = 1, P do
    local _, b = model.programs[name].formula(P, r, sizes)
    if b > most then best, most = r, b end
  end
  return best
end

print(("lacc.mpi scaling model (simulated ranks; a network of %.1f us latency, %.1f GB/s; " ..
       "sizes a rank as make bench-mpi's, BENCH_SCALE=%s; medians of %d runs)"):format(
       ALPHA * 1e6, BETA / 1e9, tostring(scale), REPS))
print(("%-10s %6s %6s %9s %11s %7s %6s %10s %12s %8s"):format("program", "P", "rank", "messages",
  "bytes", "model", "coll.", "local ms", "predicted ms", "x local"))
local bad = 0
for _, name in ipairs(model.order) do
  for _, P in ipairs { 64, 256, 1024 } do
    local r = busiest(name, P)
    local secs, msgs, bytes, coll = {}, nil, nil, nil
    for k = 0, REPS do
      local m, b, c, s = model.simulate(lacc, name, P, r, sizes, clock)
      msgs, bytes, coll = m, b, c
      if k > 0 then secs[#secs + 1] = s end
      collectgarbage()
    end
    local wm, wb = model.programs[name].formula(P, r, sizes)
    local same = wm == msgs and wb == bytes
    if not same then bad = bad + 1 end
    local per = name == "cg" and sizes.turns or 1
    local t_local = median(secs) / per
    local log2 = model.ceil_log2(P)
    local t = t_local + ALPHA * (msgs + coll * log2) / per + bytes / BETA / per
    print(("%-10s %6d %6d %9d %11d %7s %6d %10.3f %12.3f %8.3f"):format(name, P, r, msgs, bytes,
      same and "exact" or ("%d/%d"):format(wm, wb), coll, t_local * 1e3, t * 1e3, t / t_local))
  end
end
if bad > 0 then
  print(bad .. " rows differ from the formulas (spec/mpi/model.lua)")
  os.exit(1)
end
