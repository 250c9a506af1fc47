-- bench/benchlib.lua: what the Lua rows (lacc on Lua 5.4 or LuaJIT, and the plain LuaJIT
-- loops) share: a wall clock, the repetition policy, the inputs' formulas and the RESULT
-- lines that bench/run.sh reads. The policy and formulas match bench/c/common.h.
local M = {}

local getenv = os.getenv

-- A monotonic wall clock in seconds (os.clock is CPU time summed over threads).
local function find_clock()
  local ok, ffi = pcall(require, "ffi")
  if ok then
    pcall(ffi.cdef, [[
      typedef struct { long tv_sec; long tv_nsec; } bench_timespec_t;
      int clock_gettime(int clk, bench_timespec_t *ts);
    ]])
    local ts = ffi.new("bench_timespec_t")
    return function()
      ffi.C.clock_gettime(1, ts)   -- CLOCK_MONOTONIC
      return tonumber(ts.tv_sec) + 1e-9 * tonumber(ts.tv_nsec)
    end, "ffi clock_gettime"
  end
  local okc, bc = pcall(require, "benchclock")   -- build/bench/benchclock.so
  if okc then return bc.now, "benchclock" end
  local oks, sys = pcall(require, "system")      -- luasystem
  if oks and sys.monotime then return sys.monotime, "luasystem" end
  local okso, socket = pcall(require, "socket")
  if okso then return socket.gettime, "luasocket" end
  return nil, "no wall clock (build/bench/benchclock.so missing)"
end
M.now, M.clock_name = find_clock()

local function num(name, dflt)
  local v = tonumber(getenv(name) or "")
  return v or dflt
end

M.policy = { warmup = num("BENCH_WARMUP", 1), reps = math.max(1, num("BENCH_REPS", 7)),
             budget = num("BENCH_ROW_BUDGET", 30) }

local function reps_for(first)
  local p, r = M.policy, M.policy.reps
  if first > 0 and first * r > p.budget then
    r = math.max(3, math.floor(p.budget / first))
    r = math.min(r, p.reps)
  end
  return r
end

local function median(t)
  table.sort(t)
  local n = #t
  if n % 2 == 1 then return t[(n + 1) / 2] end
  return 0.5 * (t[n / 2] + t[n / 2 + 1])
end

-- measure(body [, after]) -> median ms, reps, last result. body() is timed; after(r) runs
-- untimed after each run (to free the result), except for the last, which is returned.
function M.measure(body, after)
  if not M.now then error(M.clock_name) end
  local first, r = 0, nil
  for _ = 1, M.policy.warmup do
    collectgarbage("collect")
    local t0 = M.now()
    r = body()
    first = M.now() - t0
    if after then after(r) end
  end
  local n, ts = reps_for(first), {}
  for i = 1, n do
    collectgarbage("collect")
    local t0 = M.now()
    r = body()
    ts[i] = M.now() - t0
    if after and i < n then after(r) end
  end
  return 1e3 * median(ts), n, r
end

local function oneline(s) return (tostring(s):gsub("%s+", " ")) end

function M.result(bench, row, ms, checksum, reps, note)
  io.write(("RESULT %s %s %.4f %.17g %d%s\n"):format(bench, row, ms, checksum, reps,
    note and (" " .. oneline(note)) or ""))
  io.flush()
end

-- A row that cannot run: the driver prints n/a and the reason.
function M.na(bench, row, why)
  io.write(("NA %s %s %s\n"):format(bench, row, oneline(why)))
  io.flush()
end

-- The inputs' formulas, for the plain Lua loops (lacc builds them with lacc.generate).
M.C1, M.C2, M.C3 = 0.6180339887498949, 0.7548776662466927, 0.5698402909980532
local floor = math.floor
function M.frac(k, c) local d = k * c; return d - floor(d) end
function M.u24(k, c) local d = k * c; return d - floor(d) end          -- stored as float
function M.u16(k, c) local d = k * c; return floor(65536 * (d - floor(d))) / 65536 end
function M.b01(k, c) local d = k * c; return floor(2 * (d - floor(d))) end

-- Philox4x32-10 in plain Lua, either VM (the random benchmark's LuaJIT row and lacc row's
-- check): the 32 x 32-bit products in exact f64 halves (every partial product below 2^49),
-- xor from LuaJIT's bit library or Lua 5.4's operator. Returns the four words.
local two32 = 4294967296
local okb, bit = pcall(require, "bit")
local bxor3 = okb and function(a, b, c) return bit.bxor(a, b, c) % two32 end
  or load("return function(a, b, c) return (math.tointeger(a) ~ math.tointeger(b) ~ math.tointeger(c)) + 0.0 end")()
local M0h, M0l, M1h, M1l = floor(0xD2511F53 / 65536), 0xD2511F53 % 65536, floor(0xCD9E8D57 / 65536),
  0xCD9E8D57 % 65536
local function mulhilo(mh, ml, x)
  local ph, pl = mh * x, ml * x               -- m * x = ph * 2^16 + pl
  local r = (ph % 65536) * 65536 + pl
  return floor(ph / 65536) + floor(r / two32), r % two32
end
function M.philox(k0, k1, c0, c1, c2, c3)
  for round = 1, 10 do
    if round > 1 then k0, k1 = (k0 + 0x9E3779B9) % two32, (k1 + 0xBB67AE85) % two32 end
    local hi0, lo0 = mulhilo(M0h, M0l, c0)
    local hi1, lo1 = mulhilo(M1h, M1l, c2)
    c0, c1, c2, c3 = bxor3(hi1, c1, k0), lo1, bxor3(hi0, c3, k1), lo0
  end
  return c0, c1, c2, c3
end
-- An error text when M.philox misses Random123's known answer for counter 0, key 0.
function M.philox_unchecked()
  local a, b, c, d = M.philox(0, 0, 0, 0, 0, 0)
  if a ~= 0x6627e8d5 or b ~= 0xe169c58d or c ~= 0xbc57ac4c or d ~= 0x9b00dbd8 then
    return ("Philox4x32-10 misses the known answer: %08x %08x %08x %08x"):format(a, b, c, d)
  end
end

-- The Mandelbrot grid step: floor(3 * 2^20 / w) / 2^20 (exact in f32).
function M.mandel_dx(w) return floor(3 * 1048576 / w) / 1048576 end

return M
