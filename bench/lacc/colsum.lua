-- colsum: the column sums of an n x n f32 matrix in lacc: lacc.sum(xs, 1) (dimension 1, the
-- outermost: rows read in order into one accumulator per column). The plain lacc row also
-- times the row sums lacc.sum(xs, 2) as a second line, lacc_rows. Inputs as
-- bench/c/colsum.c (exact sums in any order), made once (untimed) by lacc.generate.
-- Checks (each row; a failed check prints n/a): the result has n elements, and 33 of its
-- sums (the first, the last, 31 spread between) equal plain Lua loops over the formula.
-- Checksum: the f64 sum of the sums.
local lacc = require "lacc"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local xs = lacc.run(lacc.generate({ n, n }, function(i, j)
  return lacc.cast(lacc.imod(i * j + 3 * i, 13) - 6, "f32") / 4
end))

-- The sum of column j (dim 1) or row i (dim 2) in plain Lua.
local function want(d, k)
  local s = 0
  for m = 1, n do
    local i, j = m, k
    if d == 2 then i, j = k, m end
    s = s + ((i * j + 3 * i) % 13 - 6) / 4
  end
  return s
end
local function checked(d)
  return function(r)
    if r:size() ~= n then error(("%d sums, not %d"):format(r:size(), n)) end
    for q = 0, 32 do
      local k = math.floor((n - 1) * q / 32) + 1
      if r:get(k) ~= want(d, k) then
        error(("%s %d sums to %g, not %g"):format(d == 1 and "column" or "row", k, r:get(k), want(d, k)))
      end
    end
    return R.sum64(r)
  end
end

local function colsum(x) return lacc.sum(x, 1) end
R.run { bench = "colsum", row = row, mode = mode,
        program = colsum(xs), fn = colsum, inputs = { xs }, checksum = checked(1) }

if row == "lacc" then
  local function rowsum(x) return lacc.sum(x, 2) end
  R.run { bench = "colsum", row = "lacc_rows", mode = mode,
          program = rowsum(xs), fn = rowsum, inputs = { xs }, checksum = checked(2) }
end
