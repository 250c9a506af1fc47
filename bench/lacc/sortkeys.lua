-- Sort of n keys in lacc: lacc.sort(keys) (stable radix sort of the rows' keys), keys of the
-- type TYPE (u32, f32 or i64) as bench/c/sortkeys.c builds them, made once (untimed) by a
-- lacc.generate of the same hash. The plain lacc row also times lacc.argsort(keys) and
-- prints it as a second line, lacc_argsort (1-based positions; checksum as NumPy_argsort's).
-- Checks (each row; a failed check prints n/a): the output is in order (a lacc fold over all
-- neighbours, compared as numbers) and holds the input's keys (the sums of the keys' bits
-- and of their squares, mod 2^64, against the input's); for argsort, every position occurs
-- once (a scatter of ones) and the positions give the keys in stable order.
-- Checksum: the f64 sum of the sorted keys at positions floor((n - 1) j / 1000) + 1,
-- j = 0..1000, in that order (as every row of the benchmark).
local lacc = require "lacc"
local B = require "benchlib"
local R = dofile((arg[0]:match("^(.*)/") or ".") .. "/rows.lua")
local row, mode, n, t = R.args()
t = t or "u32"
local bench = "sort_" .. t
if t ~= "u32" and t ~= "f32" and t ~= "i64" then
  return B.na(bench, row, "unknown key type " .. tostring(t))
end

local function u32(v) return lacc.constant(v, "u32") end
local function fmix32(h)
  h = lacc.bxor(h, lacc.shr(h, 16))
  h = h * u32(0x85ebca6b)
  h = lacc.bxor(h, lacc.shr(h, 13))
  h = h * u32(0xc2b2ae35)
  return lacc.bxor(h, lacc.shr(h, 16))
end
local keys = lacc.run(lacc.generate({ n }, function(k)
  local k32 = lacc.cast(k, "u32")
  local h = fmix32(k32)
  if t == "f32" then
    return lacc.cast(lacc.bitcast(h, "i32"), "f32") * 2 ^ -31
  elseif t == "i64" then
    return lacc.bitcast(lacc.bor(lacc.shl(lacc.cast(h, "u64"), 32),
      lacc.cast(fmix32(lacc.bnot(k32)), "u64")), "i64")
  end
  return h
end))

-- The keys' bits as u64, and the sums (mod 2^64) of them and of their squares.
local function bits(x)
  if t == "f32" then return lacc.cast(lacc.bitcast(x, "u32"), "u64") end
  if t == "i64" then return lacc.bitcast(x, "u64") end
  return lacc.cast(x, "u64")
end
local function multiset(xs)
  local s1, s2 = lacc.run({ lacc.sum(lacc.map(bits, xs)),
    lacc.sum(lacc.map(function(x) local b = bits(x); return b * b end, xs)) })
  return tostring(s1:get()) .. " " .. tostring(s2:get())
end
local want = multiset(keys)

local function sample_sum(r)
  local s = 0.0
  for j = 0, 1000 do s = s + tonumber(r:get(math.floor((n - 1) * j / 1000) + 1)) end
  return s
end

local function sorted(r)
  if n < 2 then return true end
  return lacc.run(lacc.and_(lacc.generate({ n - 1 }, function(i)
    return lacc.le(r[i], r[i + 1])
  end))):get()
end

local function sort(x) return lacc.sort(x) end
R.run { bench = bench, row = row, mode = mode,
        program = sort(keys), fn = sort, inputs = { keys },
        checksum = function(r)
          if not sorted(r) then error("the output is not in order") end
          if multiset(r) ~= want then error("the output does not hold the input's keys") end
          return sample_sum(r)
        end }

if row == "lacc" then
  local function argsort(x) return lacc.argsort(x) end
  R.run { bench = bench, row = "lacc_argsort", mode = mode,
          program = argsort(keys), fn = argsort, inputs = { keys },
          checksum = function(p)
            local ones = lacc.map(function() return lacc.constant(1, "i32") end, p)
            local hits = lacc.permute(function(a, b) return a + b end,
              lacc.fill({ n }, lacc.constant(0, "i32")), function(i) return p[i] end, ones)
            if not lacc.run(lacc.all(function(h) return lacc.eq(h, 1) end, hits)):get() then
              error("the positions are not a permutation")
            end
            local stable = n < 2 or lacc.run(lacc.and_(lacc.generate({ n - 1 }, function(i)
              local a, b = keys[p[i]], keys[p[i + 1]]
              return lacc.lor(lacc.lt(a, b), lacc.land(lacc.eq(a, b), lacc.lt(p[i], p[i + 1])))
            end))):get()
            if not stable then error("the positions do not give the keys in stable order") end
            return sample_sum(p)
          end }
end
