-- stats_softmax (issue 44): a softmax over the rows of an n x n f32 matrix in lacc, as a
-- user writes it: the maximum of each row, the sum of exp(x - max) along each row
-- reading that maximum, then each element's exp(x - max) divided by its row's sum:
--   local mx = lacc.maximum(xs, 2)
--   local e = lacc.generate({n, n}, function(i, j) return lacc.exp(xs:at(i, j) - mx[i]) end)
--   local s = lacc.sum(e, 2)
--   lacc.generate({n, n}, function(i, j) return e:at(i, j) / s[i] end)
-- (e is used twice, so lacc computes it once into an array). The sum reads the maximum:
-- the two folds cannot share a pass (horizontal fusion keeps them apart), so this is the
-- benchmark where lacc_hfuse_off should change nothing. Inputs as bench/c/stats_softmax.c,
-- x[i][j] = ((i j + 3 i) mod 13 - 6) / 4 + 16 (i mod 7) (i, j 1-based; rows up to 99.5,
-- where exp(x) alone overflows f32), made once (untimed) by lacc.generate. Checks (a failed
-- check prints n/a): 9 rows (the first, the last, 7 spread between) sum to 1 within 1e-3,
-- and 5 elements of each of them are within 1e-4 (relative) of the softmax computed in
-- plain Lua (f64). Checksum: the f64 sum of the outputs weighted by their column j
-- (1-based): the sum over rows of each row's expected column.
local lacc = require "lacc"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n = R.args()

local xs = lacc.run(lacc.generate({ n, n }, function(i, j)
  return lacc.cast(lacc.imod(i * j + 3 * i, 13) - 6, "f32") / 4 + lacc.cast(16 * lacc.imod(i, 7), "f32")
end))

local function softmax(x)
  local mx = lacc.maximum(x, 2)
  local e = lacc.generate({ n, n }, function(i, j) return lacc.exp(x:at(i, j) - mx[i]) end)
  local s = lacc.sum(e, 2)
  return lacc.generate({ n, n }, function(i, j) return e:at(i, j) / s[i] end)
end

local function x_at(i, j) return ((i * j + 3 * i) % 13 - 6) / 4 + 16 * (i % 7) end
local function checked(r)
  local shape = r:shape()
  if shape[1] ~= n or shape[2] ~= n then
    error(("a %d x %d result, not %d x %d"):format(shape[1], shape[2], n, n))
  end
  for q = 0, 8 do
    local i = math.floor((n - 1) * q / 8) + 1
    local mx, s, got = -math.huge, 0, 0
    for j = 1, n do mx = math.max(mx, x_at(i, j)) end
    for j = 1, n do
      s = s + math.exp(x_at(i, j) - mx)
      got = got + r:get(i, j)
    end
    if math.abs(got - 1) > 1e-3 then error(("row %d sums to %.9g, not 1"):format(i, got)) end
    for t = 0, 4 do
      local j = math.floor((n - 1) * t / 4) + 1
      local want = math.exp(x_at(i, j) - mx) / s
      if math.abs(r:get(i, j) - want) > 1e-4 * want then
        error(("element (%d, %d) is %.9g, not %.9g"):format(i, j, r:get(i, j), want))
      end
    end
  end
  local weighted = lacc.imap(function(_, j, v) return v:cast("f64") * lacc.cast(j, "f64") end, r)
  return lacc.run(lacc.sum(weighted)):get()
end

R.run { bench = "stats_softmax", row = row, mode = mode,
        program = softmax(xs), fn = softmax, inputs = { xs }, checksum = checked }
