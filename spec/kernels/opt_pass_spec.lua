-- The optimised pass: the cpu backend's optimised kernels (cc) of every combinator family,
-- checked against the interpreter. make test runs the cpu specs on the fast tier (tcc
-- compiles the same generated C in milliseconds) and this file, tagged #opt, on the
-- optimised tier: every program of the explain corpus (at least one of every combinator
-- and feature, at small sizes), and one program per family at a size that the thread
-- pool splits (the parallel folds and scans, the atomic scatter of permute, which the
-- fast tier never runs). Owns: nothing but these checks. Must not: compare the cpu
-- backend against itself; every reference is the interpreter's run.
local H = require "helper"
local lacc = H.lacc

local on_cpu = false
for _, b in ipairs(H.backends) do on_cpu = on_cpu or b == "cpu" end

-- Two results the same: shapes, types and elements (floats within tol of each other:
-- the parallel folds associate differently; NaN matches NaN).
local function same_value(a, b, tol, where)
  if type(a) == "table" and type(b) == "table" then
    assert.are.equal(#a, #b, where .. ": lengths")
    for k, v in pairs(a) do same_value(v, b[k], tol, where .. "[" .. tostring(k) .. "]") end
    return
  end
  if not H.same(a, b, tol) then
    error(("%s: interp %s, cpu %s"):format(where, tostring(a), tostring(b)), 0)
  end
end

local function same_result(want, got, where)
  if type(want) ~= "table" and type(want) ~= "userdata" and type(want) ~= "cdata" then
    return same_value(want, got, 1e-9, where)
  end
  if getmetatable(want) and want.shape then
    assert.are.same(want:shape(), got:shape(), where .. ": shape")
    assert.are.equal(want:type(), got:type(), where .. ": type")
    local t = want:type()
    local tol = (t:find("f32") and 1e-5) or (t:find("f64") and 1e-9) or nil
    return same_value(want:totable(), got:totable(), tol, where)
  end
  assert.are.equal(#want, #got, where .. ": results")
  for k = 1, #want do same_result(want[k], got[k], where .. " #" .. k) end
end

local function run_both(p, opts, where)
  local function with(backend)
    local o = { backend = backend }
    for k, v in pairs(opts or {}) do o[k] = v end
    return o
  end
  -- a program that fails (the corpus is explained, not run: some of its programs index
  -- outside their arrays) fails the same way on both
  local want = table.pack(pcall(lacc.run, p, with "interp"))
  local got = table.pack(pcall(lacc.run, p, with "cpu"))
  if not want[1] then
    assert.are.equal(tostring(want[2]), tostring(got[2]), where .. ": the error")
    return
  end
  assert.is_true(got[1], where .. ": " .. tostring(got[2]))
  assert.are.equal(want.n, got.n, where .. ": results")
  for k = 2, want.n do same_result(want[k], got[k], where .. " result " .. k - 1) end
end

-- The programs of one family at a size the pool splits into parts: n is odd, and not a
-- multiple of any part or tile.
local N = 3 * 65536 + 7
local function f64s(n, seed)
  return lacc.generate({ n }, function(i)
    local x = lacc.cast(lacc.imod(i * 7919 + seed, 1009), "f64")
    return x / 17 - 29
  end)
end
local function i32s(n, seed, m)
  return lacc.generate({ n }, function(i) return lacc.imod(i * 104729 + seed, m) end)
end
local add = function(a, b) return a + b end

local FAMILIES = {
  { "map and zipWith, fused", function()
    return lacc.zipWith(function(a, b) return a * b + lacc.sqrt(lacc.abs(a)) end, f64s(N, 1), f64s(N, 2))
  end },
  { "folds: sum, maximum, and rows of a matrix", function()
    local m = lacc.reshape({ 611, 321 }, lacc.take(611 * 321, f64s(N, 3)))
    -- "the later one" is associative but not commutative: it keeps operands in order
    local last = function(_, b) return b end
    return { lacc.sum(f64s(N, 4)), lacc.maximum(i32s(N, 5, 100003)), lacc.sum(m),
             lacc.fold(add, 0, m, { dim = 1 }), lacc.argmax(f64s(N, 6)),
             lacc.fold1(last, m), lacc.fold1(last, lacc.flatten(m)) }
  end },
  { "scans: left, right, exclusive, inclusive", function()
    local xs = i32s(N, 7, 13)
    return { lacc.scanl(add, 0, xs), lacc.scanr1(add, xs), lacc.scanl1(lacc.max, f64s(N, 8)) }
  end },
  { "segmented folds and scans", function()
    local segs = lacc.generate({ 1001 }, function(i) return lacc.imod(i * 37, 401) end)
    local total = lacc.the(lacc.sum(segs))
    local xs = lacc.generate({ total }, function(i) return lacc.imod(i, 7) - 3 end)
    return { lacc.foldSeg(add, 0, xs, segs), lacc.scanlSeg(add, 0, xs, segs) }
  end },
  { "filter", function()
    return (lacc.filter(function(x) return lacc.gt(x, 0) end, f64s(N, 9)))
  end },
  { "permute with a combine (the atomic scatter) and backpermute", function()
    local xs = i32s(N, 10, 1000)
    local hist = lacc.permute(add, lacc.fill({ 1000 }, lacc.constant(0, "i32")),
      function(i) return xs[i] + 1 end,
      lacc.fill({ N }, lacc.constant(1, "i32")))
    local fmax = lacc.permute(lacc.max, lacc.fill({ 777 }, lacc.constant(-1e300, "f64")),
      function(i) return lacc.imod(i * 31, 777) + 1 end, f64s(N, 11))
    local back = lacc.backpermute({ N }, function(i) return N + 1 - i end, f64s(N, 12))
    return { hist, fmax, back }
  end },
  { "stencils and a matrix product", function()
    local img = lacc.reshape({ 401, 403 }, lacc.take(401 * 403, f64s(N, 13)))
    local blur = lacc.stencil(function(...)
      local s = 0
      for k = 1, select("#", ...) do s = s + select(k, ...) * k end
      return s / 45
    end, "clamp", img)
    local a = lacc.reshape({ 97, 131 }, lacc.take(97 * 131, f64s(N, 14)))
    local b = lacc.reshape({ 131, 89 }, lacc.take(131 * 89, f64s(N, 15)))
    return { blur, lacc.matmul(a, b) }
  end },
  { "sort and awhile", function()
    local sorted = lacc.sort(i32s(N, 16, 1000003))
    local loop = lacc.awhile(function(xs) return lacc.lt(lacc.the(lacc.sum(xs)), 1e7) end,
      function(xs) return lacc.map(function(x) return x * 2 + 1 end, xs) end, f64s(4097, 17))
    return { sorted, loop }
  end },
}

describe("the optimised kernels against the interpreter #opt", function()
  local corpus = dofile("spec/golden/explain_corpus.lua")(lacc)
  local function opt_tier(f)
    return function()
      local before = lacc.config().tier
      lacc.config { tier = "opt" }
      local ok, err = pcall(f)
      lacc.config { tier = before }
      if not ok then error(err, 0) end
    end
  end

  if on_cpu then
    -- the corpus's compiled functions run themselves on the interpreter (their texts
    -- are captured): the family "compiled functions" below checks compiled ones
    for _, e in ipairs(corpus) do
      local name, f = e[1], e[2]
      if not name:find("^compiled_") then
        it("on the corpus program " .. name, opt_tier(function()
          local p, opts = f(lacc)
          assert.is_not_nil(p, name .. " returned no program (a captured entry is named compiled_...)")
          run_both(p, opts, name)
        end))
      end
    end
    it("on compiled functions with scalar and array arguments", opt_tier(function()
      local function step(xs, k)
        local ys = lacc.map(function(v) return v * k + 1 end, xs)
        return { lacc.sum(ys), lacc.scanl(add, 0, ys) }
      end
      local ref, fast = lacc.compile(step, { backend = "interp" }), lacc.compile(step, { backend = "cpu" })
      for _, n in ipairs { 0, 1, 1001, N } do
        local xs = lacc.run(f64s(n, n))
        for _, k in ipairs { 0.5, -3 } do
          local w, g = table.pack(ref(xs, k)), table.pack(fast(xs, k))
          same_result({ w[1], w[2] }, { g[1], g[2] }, ("n %d, k %g"):format(n, k))
        end
      end
    end))
    for _, fam in ipairs(FAMILIES) do
      it("on " .. fam[1] .. " at " .. N .. " elements", opt_tier(function()
        local opt_before = lacc.tiers().opt
        run_both(fam[2](), nil, fam[1])
        assert.is_true(lacc.tiers().opt > opt_before, "the cpu run was not on the optimised tier")
      end))
    end
  end
end)
