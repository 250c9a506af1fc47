-- colsum: the column sums of an n x n f32 matrix as a plain LuaJIT loop over an FFI array
-- (one thread): the rows added in order into n sums (f64, stored as f32 at the end). Inputs
-- as bench/c/colsum.c (exact sums in any order). Checks: 17 columns summed again down the
-- column, and the row sums of a second loop adding up to the same total. Checksum: the f64
-- sum of the sums. Usage: luajit colsum.lua ROW N
local ffi = require "ffi"
local B = require "benchlib"
local row, n = arg[1], tonumber(arg[2])

local a, s, acc = ffi.new("float[?]", n * n), ffi.new("float[?]", n), ffi.new("double[?]", n)
for i = 1, n do
  for j = 1, n do a[(i - 1) * n + (j - 1)] = ((i * j + 3 * i) % 13 - 6) / 4 end
end

local function colsum()
  for j = 0, n - 1 do acc[j] = 0 end
  for i = 0, n - 1 do
    local r = i * n
    for j = 0, n - 1 do acc[j] = acc[j] + a[r + j] end
  end
  for j = 0, n - 1 do s[j] = acc[j] end
  return s
end

local ms, reps = B.measure(colsum)
local cs, rows = 0, 0
for j = 0, n - 1 do cs = cs + s[j] end
for i = 0, n - 1 do
  local t = 0
  for j = 0, n - 1 do t = t + a[i * n + j] end
  rows = rows + t
end
for k = 0, 16 do
  local j, t = math.floor((n - 1) * k / 16), 0
  for i = 0, n - 1 do t = t + a[i * n + j] end
  if s[j] ~= t then return B.na("colsum", row, ("column %d sums to %g, not %g"):format(j + 1, s[j], t)) end
end
if cs ~= rows then return B.na("colsum", row, "the column sums do not add up to the row sums' total") end
B.result("colsum", row, ms, cs, reps, jit.version:gsub(" ", ""))
