-- The scalar functions of issue 27 (sinh cosh tanh asinh acosh atanh log2 log10 log1p
-- expm1 cbrt hypot round_even isinf isfinite) and exp2 on every backend and type: at the ends
-- (zeros and their signs, infinities, NaN, the edges of each domain) exactly, as C99
-- Annex F states them; elsewhere against textbook formulas evaluated in doubles, within
-- a tolerance (the guide: libm within an ulp or two, OpenCL's built-ins within 4 ulp).
local H = require "helper"
local sweep = H.sweeper(it)   -- the type sweeps run where spec/helper.lua says
local lacc = H.lacc

local INF, NAN = math.huge, 0 / 0
local function f32(x) return H.f32(x) end
local function fr(t, x) if t == "f32" and type(x) == "number" then return f32(x) end return x end

-- ---- references (doubles), independent of lacc's own plain-Lua fallbacks
local function series(x, terms)   -- sum of terms(k) * x^k for small x
  local s, p = 0, 1
  for k = 1, #terms do
    p = p * x
    s = s + terms[k] * p
  end
  return s
end
local ref = {}
function ref.expm1(x)
  if math.abs(x) < 1e-5 then return series(x, { 1, 1 / 2, 1 / 6, 1 / 24 }) end
  return math.exp(x) - 1
end
function ref.log1p(x)
  if math.abs(x) < 1e-5 then return series(x, { 1, -1 / 2, 1 / 3, -1 / 4 }) end
  return math.log(1 + x)
end
function ref.sinh(x)
  if math.abs(x) < 1e-3 then return series(x, { 1, 0, 1 / 6, 0, 1 / 120 }) end
  return (math.exp(x) - math.exp(-x)) / 2
end
function ref.cosh(x) return (math.exp(x) + math.exp(-x)) / 2 end
function ref.tanh(x)
  if math.abs(x) < 1e-3 then return series(x, { 1, 0, -1 / 3, 0, 2 / 15 }) end
  if math.abs(x) > 20 then return x > 0 and 1 or -1 end
  local a, b = math.exp(x), math.exp(-x)
  return (a - b) / (a + b)
end
function ref.asinh(x)
  if math.abs(x) < 1e-3 then return series(x, { 1, 0, -1 / 6, 0, 3 / 40 }) end
  local a = math.abs(x)
  local r = math.log(a + math.sqrt(a * a + 1))
  return x < 0 and -r or r
end
function ref.acosh(x) return math.log(x + math.sqrt(x * x - 1)) end
function ref.atanh(x)
  if math.abs(x) < 1e-3 then return series(x, { 1, 0, 1 / 3, 0, 1 / 5 }) end
  return 0.5 * math.log((1 + x) / (1 - x))
end
function ref.log2(x) return math.log(x) / math.log(2) end
function ref.log10(x) return math.log(x) / math.log(10) end
function ref.cbrt(x)
  local r = math.abs(x) ^ (1 / 3)
  return x < 0 and -r or r
end
function ref.hypot(x, y) return math.sqrt(x * x + y * y) end
function ref.exp2(x) return math.exp(x * math.log(2)) end   -- within 1e-14 for |x| <= 100

-- ordinary arguments inside each domain (the ends are in `ends` below)
local domain = {
  sinh = { -20, 20 }, cosh = { -20, 20 }, tanh = { -10, 10 }, asinh = { -1e6, 1e6 },
  acosh = { 1.001, 1e6 }, atanh = { -0.999, 0.999 }, log2 = { 1e-6, 1e12 },
  log10 = { 1e-6, 1e12 }, log1p = { -0.999, 1e6 }, expm1 = { -30, 30 }, cbrt = { -1e9, 1e9 },
  exp2 = { -100, 100 },
}
local function samples(name, t)
  local lo, hi = domain[name][1], domain[name][2]
  local v = { 1e-4, -1e-4, 0.3, -0.3, 1.5, 2, 3, 0.999, -0.5, 7.25, 100, 8, -27 }
  H.seed(#name * 31)
  for _ = 1, 30 do v[#v + 1] = lo + (hi - lo) * H.rand() end
  local out = {}
  for _, x in ipairs(v) do
    if x >= lo and x <= hi then out[#out + 1] = fr(t, x) end
  end
  return out
end

-- exact values at the ends: { input, result } (NaN results: NAN)
local ends = {
  sinh = { { 0, 0 }, { -0.0, -0.0 }, { INF, INF }, { -INF, -INF }, { NAN, NAN } },
  cosh = { { 0, 1 }, { -0.0, 1 }, { INF, INF }, { -INF, INF }, { NAN, NAN } },
  tanh = { { 0, 0 }, { -0.0, -0.0 }, { INF, 1 }, { -INF, -1 }, { NAN, NAN } },
  asinh = { { 0, 0 }, { -0.0, -0.0 }, { INF, INF }, { -INF, -INF }, { NAN, NAN } },
  acosh = { { 1, 0 }, { INF, INF }, { 0.5, NAN }, { -1, NAN }, { -INF, NAN }, { NAN, NAN } },
  atanh = { { 0, 0 }, { -0.0, -0.0 }, { 1, INF }, { -1, -INF }, { 2, NAN }, { -INF, NAN }, { NAN, NAN } },
  log2 = { { 1, 0 }, { 8, 3 }, { 0.25, -2 }, { 0, -INF }, { -0.0, -INF }, { INF, INF }, { -1, NAN }, { NAN, NAN } },
  log10 = { { 1, 0 }, { 1000, 3 }, { 0, -INF }, { INF, INF }, { -1, NAN }, { NAN, NAN } },
  log1p = { { 0, 0 }, { -0.0, -0.0 }, { -1, -INF }, { -2, NAN }, { INF, INF }, { NAN, NAN } },
  expm1 = { { 0, 0 }, { -0.0, -0.0 }, { -INF, -1 }, { INF, INF }, { NAN, NAN } },
  cbrt = { { 0, 0 }, { -0.0, -0.0 }, { INF, INF }, { -INF, -INF }, { NAN, NAN } },
  exp2 = { { 0, 1 }, { -0.0, 1 }, { 10, 1024 }, { -3, 0.125 }, { INF, INF }, { -INF, 0 }, { NAN, NAN },
           { 1024, INF }, { -1075, 0 }, { -1074, 2 ^ -1074 } },
}

local function same(g, w)
  if w ~= w then return g ~= g end
  return g == w and (w ~= 0 or 1 / g == 1 / w)
end

local function close(t, g, w)
  local tol = t == "f32" and 2e-6 or 1e-12
  return math.abs(g - w) <= tol * math.max(math.abs(w), t == "f32" and 1e-30 or 1e-300)
end

local function run1(name, t, xs, backend)
  local a = lacc.fromtable(xs, t)
  return lacc.run(lacc.map(lacc[name], a), { backend = backend }):totable()
end

for _, backend in ipairs(H.backends) do
  describe("scalar functions of issue 27 on " .. backend, function()
    for _, t in ipairs { "f32", "f64" } do
      for name in pairs(ends) do
        sweep(t, backend, name .. " on " .. t .. ": the ends exactly, the domain within a tolerance", function()
          local xs, want = {}, {}
          for i, e in ipairs(ends[name]) do xs[i], want[i] = fr(t, e[1]), fr(t, e[2]) end
          local got = run1(name, t, xs, backend)
          for i = 1, #xs do
            assert(same(got[i], want[i]), ("%s(%s) on %s: %s, expected %s"):format(name,
              tostring(xs[i]), t, tostring(got[i]), tostring(want[i])))
          end
          xs = samples(name, t)
          got = run1(name, t, xs, backend)
          for i, x in ipairs(xs) do
            local w = fr(t, ref[name](x))
            assert(close(t, got[i], w), ("%s(%.17g) on %s: %.17g, expected about %.17g"):format(
              name, x, t, got[i], w))
          end
        end)
      end

      sweep(t, backend, "hypot on " .. t, function()
        local xs = { 3, 0, -0.0, 1e-3, -5, 1e20, INF, -INF, NAN, NAN, 0, 2.5, 1e-30 }
        local ys = { 4, 0, -0.0, -1e-3, 12, 1e20, NAN, 3, INF, 1, -7, -6, 1e-30 }
        local want = { 5, 0, 0, nil, 13, nil, INF, INF, INF, NAN, 7, 6.5, nil }
        for i = 1, #xs do xs[i], ys[i] = fr(t, xs[i]), fr(t, ys[i]) end
        local got = lacc.run(lacc.zipWith(lacc.hypot, lacc.fromtable(xs, t), lacc.fromtable(ys, t)),
                             { backend = backend }):totable()
        for i = 1, #xs do
          if want[i] ~= nil then
            assert(same(got[i], fr(t, want[i])), ("hypot(%s, %s): %s"):format(xs[i], ys[i], got[i]))
          else
            assert(close(t, got[i], fr(t, ref.hypot(xs[i], ys[i]))),
                   ("hypot(%s, %s): %s"):format(xs[i], ys[i], got[i]))
          end
        end
      end)

      sweep(t, backend, "round_even ties to even, round away from zero, on " .. t, function()
        local xs = { 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7, -3.2, 0, -0.0, INF, -INF, NAN,
                     4503599627370497, 1e30, 0.49999997 }
        local even = { 0, 2, 2, -0.0, -2, -2, 4, -3, 0, -0.0, INF, -INF, NAN, 4503599627370497, 1e30, 0 }
        local away = { 1, 2, 3, -1, -2, -3, 4, -3, 0, -0.0, INF, -INF, NAN, 4503599627370497, 1e30, 0 }
        for i = 1, #xs do xs[i], even[i], away[i] = fr(t, xs[i]), fr(t, even[i]), fr(t, away[i]) end
        local a = lacc.fromtable(xs, t)
        local ge = lacc.run(lacc.map(lacc.round_even, a), { backend = backend }):totable()
        local ga = lacc.run(lacc.map(function(x) return x:round() end, a), { backend = backend }):totable()
        for i = 1, #xs do
          assert(same(ge[i], even[i]), ("round_even(%.17g): %s"):format(xs[i], ge[i]))
          assert(same(ga[i], away[i]), ("round(%.17g): %s"):format(xs[i], ga[i]))
        end
      end)

      sweep(t, backend, "isinf and isfinite on " .. t, function()
        local xs = { 0, -0.0, 1, -1e30, INF, -INF, NAN, 1e-40 }
        local a = lacc.fromtable(xs, t)
        local gi = lacc.run(lacc.map(lacc.isinf, a), { backend = backend }):totable()
        local gf = lacc.run(lacc.map(function(x) return x:isfinite() end, a), { backend = backend }):totable()
        for i, x in ipairs(xs) do
          assert.are.equal(x == INF or x == -INF, gi[i])
          assert.are.equal(x == x and x ~= INF and x ~= -INF, gf[i])
        end
      end)
    end
  end)
end

describe("the new functions on plain Lua numbers", function()
  it("give the reference's values and ends", function()
    for name, list in pairs(ends) do
      for _, e in ipairs(list) do
        assert(same(lacc[name](e[1]), e[2]), ("%s(%s): %s"):format(name, e[1], tostring(lacc[name](e[1]))))
      end
      for _, x in ipairs(samples(name, "f64")) do
        assert(close("f64", lacc[name](x), ref[name](x)), ("%s(%.17g): %.17g"):format(name, x, lacc[name](x)))
      end
    end
    assert.are.equal(5, lacc.hypot(3, 4))
    assert.are.equal(INF, lacc.hypot(INF, NAN))
    assert.are.equal(2, lacc.round_even(2.5))
    assert.is_true(lacc.isinf(-INF))
    assert.is_false(lacc.isfinite(NAN))
  end)
end)

-- lacc's own math (core/base/ownmath.h) on the interpreter, the cpu backend and an OpenCL
-- CPU device (all but f32 exp and log where it has f64): f32 exp, log, log2, log10, log1p,
-- expm1, sinh, cosh, tanh, sin, cos, tan, atan, atan2, pow and exp2, and f64 exp, log, log2,
-- log10, log1p, expm1, sinh, cosh, tanh, sin, cos, tan, atan, atan2, pow and exp2: within 1 ulp of the exact values,
-- the ends as C99 Annex F says (spec/opencl_math.lua, in a process of its own), and the
-- same bits on every backend that runs it.
describe("f32 exp, log and the rest, lacc's own", function()
  local lua = H.vm
  local function output(cmd)
    local h = io.popen(cmd .. " 2>&1")
    local out = h:read("a") or h:read("*a")
    h:close()
    return out
  end
  for _, b in ipairs(H.backends) do
    if b ~= "opencl" then
      it("on " .. b .. ": within 1 ulp of the exact values, the ends exactly", function()
        assert.are.equal("ok own", output(("LACC_MATH_BACKEND=%s %s spec/opencl_math.lua"):format(b, lua)))
      end)
    end
  end
  it("the same bits on every backend that runs it", function()
    H.seed(2612)
    local xs = { 0, -0.0, 1e-45, -1e-45, 1.17549435e-38, 88.72283172607422, 89, -103.97, -104,
                 INF, -INF, NAN, 3.4028234663852886e38, 0.78539819, -0.78539813, 1.5707964, 3.1415927,
                 1e10, -7.5e37, 102940.0 }
    for _ = 1, 20000 do xs[#xs + 1] = f32((H.rand() - 0.5) * 2 ^ H.randint(-140, 127)) end
    local arr = lacc.fromtable(xs, "f32")
    local names = { "exp", "log", "log2", "log10", "log1p", "expm1", "sinh", "cosh", "tanh", "sin", "cos", "tan",
                    "atan", "atan2", "pow", "exp2", "exp", "log", "log2", "log10", "log1p", "expm1", "sinh",
                    "cosh", "tanh", "sin", "cos", "tan", "atan", "atan2", "pow", "exp2" }
    local wide = lacc.map(function(x) return lacc.cast(x, "f64") * 7.25 end, arr)
    local other = lacc.map(function(x) return x * -0.375 end, lacc.reverse(arr))
    local other64 = lacc.map(function(x) return lacc.cast(x, "f64") end, other)
    local p = {}
    for k, name in ipairs(names) do
      local a, b = k >= 17 and wide or arr, k >= 17 and other64 or other
      p[k] = (name == "atan2" or name == "pow") and lacc.zipWith(lacc[name], a, b) or lacc.map(lacc[name], a)
    end
    local function run_all(opts)   -- at most 16 results a run
      local r = { lacc.run({ (table.unpack or unpack)(p, 1, 16) }, opts) }
      for _, v in ipairs({ lacc.run({ (table.unpack or unpack)(p, 17, #p) }, opts) }) do r[#r + 1] = v end
      return r
    end
    local want = run_all({ backend = "interp" })
    for _, b in ipairs(H.backends) do
      local text = b == "opencl" and lacc.explain(p[1], { backend = "opencl" }) or ""
      local own = b ~= "opencl" or text:find("lacc's own", 1, true) ~= nil
      local own_more = b ~= "opencl" or text:find("log2, log10", 1, true) ~= nil
      if own then
        local got = run_all({ backend = b })
        for k = 1, own_more and #names or 2 do
          local r, g = want[k]:totable(), got[k]:totable()
          for i = 1, #xs do
            if not (r[i] == g[i] and 1 / r[i] == 1 / g[i] or (r[i] ~= r[i] and g[i] ~= g[i])) then
              error(("%s: %s(%.9g) = %.9g, the interpreter's %.9g"):format(b, names[k], xs[i], g[i], r[i]))
            end
          end
        end
      end
    end
  end)
end)
