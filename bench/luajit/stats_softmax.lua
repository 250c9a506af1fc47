-- stats_softmax (issue 44): a softmax over the rows of an n x n f32 matrix as a plain
-- LuaJIT loop over FFI float arrays (one thread): per row the maximum, then math.exp(x -
-- max) into the output row while summing it (f64), then the row divided by the sum.
-- Inputs as bench/c/stats_softmax.c. Checks: every row sums to 1 within 1e-3, and 5
-- elements of each of 9 rows are within 1e-4 (relative) of the softmax computed apart.
-- Checksum: the f64 sum of the outputs weighted by their column j (1-based). Usage:
-- luajit stats_softmax.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])
local exp = math.exp

local function x_at(i, j) return ((i * j + 3 * i) % 13 - 6) / 4 + 16 * (i % 7) end
local a, out = ffi.new("float[?]", n * n), ffi.new("float[?]", n * n)
for i = 1, n do
  for j = 1, n do a[(i - 1) * n + (j - 1)] = x_at(i, j) end
end

local function softmax()
  for i = 0, n - 1 do
    local r = i * n
    local m = -math.huge
    for j = r, r + n - 1 do
      if a[j] > m then m = a[j] end
    end
    local s = 0
    for j = r, r + n - 1 do
      local e = exp(a[j] - m)
      out[j] = e
      s = s + e
    end
    for j = r, r + n - 1 do out[j] = out[j] / s end
  end
  return out
end

local ms, reps = B.measure(softmax)
local cs = 0
for i = 0, n - 1 do
  local t = 0
  for j = 0, n - 1 do
    t = t + out[i * n + j]
    cs = cs + out[i * n + j] * (j + 1)
  end
  if math.abs(t - 1) > 1e-3 then
    return B.na("stats_softmax", row, ("row %d sums to %.9g, not 1"):format(i + 1, t))
  end
end
for q = 0, 8 do
  local i = math.floor((n - 1) * q / 8) + 1
  local mx, s = -math.huge, 0
  for j = 1, n do mx = math.max(mx, x_at(i, j)) end
  for j = 1, n do s = s + exp(x_at(i, j) - mx) end
  for t = 0, 4 do
    local j = math.floor((n - 1) * t / 4) + 1
    local want, got = exp(x_at(i, j) - mx) / s, out[(i - 1) * n + (j - 1)]
    if math.abs(got - want) > 1e-4 * want then
      return B.na("stats_softmax", row, ("element (%d, %d) is %.9g, not %.9g"):format(i, j, got, want))
    end
  end
end
B.result("stats_softmax", row, ms, cs, reps, jit.version:gsub(" ", ""))
