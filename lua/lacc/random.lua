-- lacc.random: counter-based random numbers, Philox4x32-10 ("Parallel Random Numbers: As
-- Easy as 1, 2, 3", Salmon et al., the generator of Random123, cuRAND and JAX).
-- Owns: the generator as scalar expressions (integer arithmetic only, so every backend,
-- thread count and chunking gives the same bits), how an array's elements take the
-- generator's words (element p, 0-based row-major, of a 32-bit draw is word p mod 4 of
-- block p / 4; of a 64-bit draw words 2(p mod 2) and 2(p mod 2) + 1 of block p / 2), and
-- the conversions: uniform floats, unbiased integers, normals by Box-Muller with a log and
-- a sine made of + - * / only (libm's and OpenCL's built-ins differ in the last bits).
-- Must not: keep state: the same seed gives the same numbers.
local types = require "lacc.types"
local util = require "lacc.util"
local exp = require "lacc.exp"
local fail = util.fail

local M = {}
local lacc

local function u32(v) return exp.constant(v, "u32") end
local function u64(v) return exp.constant(v, "u64") end

-- The high and low words of the 64-bit product of two u32 expressions.
local function mulhilo(m, x)
  local p = exp.cast(x, "u64") * u64(m)
  return exp.cast(exp.shr(p, 32), "u32"), exp.cast(p, "u32")
end

-- Philox4x32-10 of the counter (c0..c3) under the key (k0, k1): four u32 expressions.
local M0, M1 = 0xD2511F53, 0xCD9E8D57
local W0, W1 = 0x9E3779B9, 0xBB67AE85
local function philox(k0, k1, c0, c1, c2, c3)
  for round = 1, 10 do
    if round > 1 then k0, k1 = k0 + u32(W0), k1 + u32(W1) end
    local hi0, lo0 = mulhilo(M0, c0)
    local hi1, lo1 = mulhilo(M1, c2)
    c0, c1, c2, c3 = exp.bxor(exp.bxor(hi1, c1), k0), lo1, exp.bxor(exp.bxor(hi0, c3), k1), lo0
  end
  return c0, c1, c2, c3
end
M.philox = philox

-- A seed (a Lua integer, an int64_t or uint64_t cdata on LuaJIT, or an integer expression) as
-- the key's two words.
local function key_of(seed, what)
  if exp.is_exp(seed) then
    if not types.is_scalar[seed.t] or not types.is_int(seed.t) then
      fail("%s: expected an integer seed, got an expression of %s", what, seed.t)
    end
  elseif not util.is_int64_value(seed) then
    fail("%s: expected an integer seed, got %s", what, util.show(seed))
  end
  local s = exp.constant(seed, "u64")
  return exp.cast(s, "u32"), exp.cast(exp.shr(s, 32), "u32")
end

-- The words of block b (a u64 expression) with c2 = extra (retries of integers).
local function block(k0, k1, b, extra)
  return philox(k0, k1, exp.cast(b, "u32"), exp.cast(exp.shr(b, 32), "u32"), extra or u32(0), u32(0))
end

-- Word i (a u64 expression, 0..3) of four.
local function pick(i, w0, w1, w2, w3)
  return exp.cond(exp.lt(i, 2), exp.cond(exp.eq(i, 0), w0, w1), exp.cond(exp.eq(i, 2), w2, w3))
end

-- The 32 bits element p (u64) of a 32-bit draw gets, or the two words of a 64-bit draw.
local function word32(k0, k1, p, extra)
  local w0, w1, w2, w3 = block(k0, k1, exp.shr(p, 2), extra)
  return pick(exp.band(p, 3), w0, w1, w2, w3)
end
local function words64(k0, k1, p, extra)
  local w0, w1, w2, w3 = block(k0, k1, exp.shr(p, 1), extra)
  local odd = exp.eq(exp.band(p, 1), 1)
  return exp.cond(odd, w2, w0), exp.cond(odd, w3, w1)
end

-- Uniform in [0, 1): 24 bits for f32, 53 for f64 (every value a multiple of 2^-24 or 2^-53).
local function unit32(w) return exp.cast(exp.shr(w, 8), "f64") * 2 ^ -24 end
local function unit64(a, b)
  return (exp.cast(exp.shr(a, 5), "f64") * 67108864 + exp.cast(exp.shr(b, 6), "f64")) * 2 ^ -53
end

-- The array of `shape` whose element p is f(p) (p a u64 position, row-major, 0-based): a
-- rank-1 generate, reshaped at rank 2 and more, so that the lowering sees the position as
-- the row-major index itself (neighbouring elements then share a Philox block in a grouped
-- producer, at every rank).
local function by_position(shape, what, f)
  local sh = exp.shape_exp(shape, what)
  local rank = type(shape) == "table" and not exp.is_exp(shape) and #shape or 1
  local function at(i) return f(exp.cast(i - 1, "u64")) end
  if rank == 0 then return lacc.generate(shape, function() return f(exp.constant(0, "u64")) end) end
  if rank == 1 then return lacc.generate(shape, at) end
  local n = sh[1]
  for d = 2, rank do n = n * sh[d] end
  return lacc.reshape(shape, lacc.generate(n, at))
end

local function float_type(what, t)
  t = t or "f64"
  if t ~= "f32" and t ~= "f64" then fail("%s: expected the type f32 or f64, got %s", what, util.show(t)) end
  return t
end

local function number(what, name, v)
  if type(v) ~= "number" and not exp.is_exp(v) then
    fail("%s: expected a number for %s, got %s", what, name, util.show(v))
  end
  return v
end

-- The largest value of t below hi (hi a finite expression of t): where lo + (hi - lo) * u
-- rounds up to hi, the result stays below it.
local function below(hi, t)
  local it = t == "f32" and "u32" or "u64"
  local bits = exp.bitcast(hi, it)
  return exp.cond(exp.gt(hi, 0), exp.bitcast(bits - 1, t),
    exp.cond(exp.lt(hi, 0), exp.bitcast(bits + 1, t), exp.constant(-0.0, t) - exp.bitcast(exp.constant(1, it), t)))
end

-- uniform(shape, seed [, type, lo, hi]): numbers in [lo, hi) (default [0, 1), f64).
function M.uniform(shape, seed, t, lo, hi)
  t = float_type("random.uniform", t)
  local k0, k1 = key_of(seed, "random.uniform")
  local scaled = lo ~= nil or hi ~= nil
  lo, hi = number("random.uniform", "lo", lo or 0), number("random.uniform", "hi", hi or 1)
  return by_position(shape, "random.uniform", function(p)
    -- f32: the 24 bits and the scaling exact in f32 itself (the same values as through f64)
    local u = t == "f32" and exp.cast(exp.shr(word32(k0, k1, p), 8), "f32") * exp.constant(2 ^ -24, "f32")
      or exp.cast(unit64(words64(k0, k1, p)), t)
    if not scaled then return u end
    local l, h = exp.constant(lo, t), exp.constant(hi, t)
    local x = l + (h - l) * u
    return exp.cond(exp.lt(x, h), x, exp.max(below(h, t), l))
  end)
end

-- log(x) for x in (0, 1], f64, from + - * / alone: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
-- log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the series to s^25 (error below
-- 1e-17).
local LN2 = 0.69314718055994530942
local function log01(x)
  local bits = exp.bitcast(x, "u64")
  local e = exp.cast(exp.shr(bits, 52), "i64") - 1023
  local m = exp.bitcast(exp.bor(exp.band(bits, u64(4503599627370495)), exp.shl(u64(1023), 52)), "f64")
  local big = exp.gt(m, 1.4142135623730951)
  m = exp.cond(big, m * 0.5, m)
  e = exp.cond(big, e + 1, e)
  local s = (m - 1) / (m + 1)
  local s2 = s * s
  local sum = exp.constant(1 / 25, "f64")
  for k = 23, 1, -2 do sum = sum * s2 + 1 / k end
  return exp.cast(e, "f64") * LN2 + 2 * s * sum
end

-- cos and sin of 2 pi u for u in [0, 1), f64: u * 4 split into the nearest quarter turn q
-- and x in [-pi/4, pi/4], then the Taylor series of sin x and cos x (to x^17 and x^16).
local function sincos_turn(u)
  local v = u * 4
  local qf = exp.floor(v + 0.5)
  local x = (v - qf) * (math.pi / 2)
  local q = exp.band(exp.cast(qf, "i64"), 3)
  local x2 = x * x
  local sn, cs = exp.constant(0, "f64"), exp.constant(0, "f64")
  local sf, cf = {}, {}
  local f = 1
  for k = 1, 17 do f = f * k; if k % 2 == 1 then sf[k] = 1 / f else cf[k] = 1 / f end end
  for k = 17, 3, -2 do sn = (sn + (((k - 1) / 2) % 2 == 1 and -sf[k] or sf[k])) * x2 end
  sn = x * (sn + 1)
  for k = 16, 2, -2 do cs = (cs + ((k / 2) % 2 == 1 and -cf[k] or cf[k])) * x2 end
  cs = cs + 1
  local c = exp.cond(exp.lt(q, 2), exp.cond(exp.eq(q, 0), cs, -sn), exp.cond(exp.eq(q, 2), -cs, sn))
  local s = exp.cond(exp.lt(q, 2), exp.cond(exp.eq(q, 0), sn, cs), exp.cond(exp.eq(q, 2), -sn, -cs))
  return c, s
end

-- normal(shape, seed [, type, mean, sd]): Box-Muller: a pair of uniforms (u1 in (0, 1],
-- u2 in [0, 1)) gives sqrt(-2 log u1) times cos and sin of 2 pi u2, two elements in a row.
-- f32 elements take a pair of words, f64 ones two pairs.
function M.normal(shape, seed, t, mean, sd)
  t = float_type("random.normal", t)
  local k0, k1 = key_of(seed, "random.normal")
  mean, sd = number("random.normal", "mean", mean or 0), number("random.normal", "sd", sd or 1)
  return by_position(shape, "random.normal", function(p)
    local u1, u2
    local second = exp.eq(exp.band(p, 1), 1)
    if t == "f32" then   -- elements 2j and 2j + 1 share words 2(j mod 2), 2(j mod 2) + 1
      local w0, w1, w2, w3 = block(k0, k1, exp.shr(p, 2))
      local upper = exp.eq(exp.band(p, 2), 2)
      u1 = unit32(exp.cond(upper, w2, w0)) + 2 ^ -24
      u2 = unit32(exp.cond(upper, w3, w1))
    else                 -- elements 2j and 2j + 1 share block j
      local w0, w1, w2, w3 = block(k0, k1, exp.shr(p, 1))
      u1 = unit64(w0, w1) + 2 ^ -53
      u2 = unit64(w2, w3)
    end
    local r = exp.sqrt(-2 * log01(u1))
    local c, s = sincos_turn(u2)
    local z = r * exp.cond(second, s, c)
    return exp.cast(z * sd + mean, t)
  end)
end

-- integers(shape, seed, lo, hi [, type]): integers from lo to hi inclusive (as Lua's
-- math.random(lo, hi)), unbiased: a word below the largest multiple of the range is
-- reduced modulo it, any other is drawn again from the next block column (c2 = attempt).
function M.integers(shape, seed, lo, hi, t)
  t = t or "i64"
  if not types.is_scalar[t] or not types.is_int(t) then
    fail("random.integers: expected an integer type, got %s", util.show(t))
  end
  local k0, k1 = key_of(seed, "random.integers")
  if not util.is_int64_value(lo) or not util.is_int64_value(hi) then
    fail("random.integers: expected integer bounds lo and hi, got %s and %s", util.show(lo), util.show(hi))
  end
  if hi < lo then fail("random.integers: hi (%s) is below lo (%s)", util.show(hi), util.show(lo)) end
  local l = exp.constant(lo, t)
  local m = exp.cast(exp.constant(hi, t), "u64") - exp.cast(l, "u64") + 1   -- 0: all 2^64
  local full = exp.eq(m, 0)
  local safe_m = exp.cond(full, exp.constant(1, "u64"), m)
  local wide = (tonumber(hi) + 0.0) - (tonumber(lo) + 0.0) >= 4294967295.5   -- in doubles: hi - lo may wrap
  return by_position(shape, "random.integers", function(p)
    local function draw(attempt)
      if wide then
        local a, b = words64(k0, k1, p, exp.cast(attempt, "u32"))
        return exp.bor(exp.shl(exp.cast(a, "u64"), 32), exp.cast(b, "u64"))
      end
      return exp.cast(word32(k0, k1, p, exp.cast(attempt, "u32")), "u64")
    end
    -- draw again while x is at or above the largest multiple of m the words reach (2^32,
    -- or 2^64 where m is 0 for the whole range, which takes every x)
    local retry
    if wide then
      local all = exp.bnot(exp.constant(0, "u64"))
      local r = exp.imod(all - safe_m + 1, safe_m)   -- 2^64 mod m
      retry = function(x) return exp.land(exp.lnot(full), exp.gt(x, all - r)) end
    else
      local span = exp.constant(4294967296, "u64")
      local limit = span - exp.imod(span, m)
      retry = function(x) return exp.ge(x, limit) end
    end
    local x = lacc.while_(function(st) return retry(st[2]) end,
      function(st) return st[1] + 1, draw(st[1] + 1) end,
      lacc.tuple(exp.constant(0, "i64"), draw(exp.constant(0, "i64"))))
    local v = x[2]
    local r = exp.cond(full, v, exp.imod(v, safe_m))
    return exp.cast(exp.cast(l, "u64") + r, t)
  end)
end

-- at(seed, counter): inside a scalar function, the four u32 words of Philox4x32-10 for the
-- key seed and the counter (a 64-bit integer: words 0 and 1; words 2 and 3 are 0), as a
-- tuple.
function M.at(seed, counter)
  local k0, k1 = key_of(seed, "random.at")
  if not exp.is_exp(counter) and not util.is_int64_value(counter) then
    fail("random.at: expected an integer counter, got %s", util.show(counter))
  end
  return lacc.tuple(block(k0, k1, exp.constant(counter, "u64")))
end

function M.install(l)
  lacc = l
  lacc.random = util.readonly({ uniform = M.uniform, normal = M.normal, integers = M.integers,
                                at = M.at }, "lacc.random")
end

return M
