-- Derivatives (lacc.vjp, lacc.grad, lacc.value_and_grad, lacc.jvp) on every backend: each
-- rule's pullback against central finite differences of the function itself at f64
-- (relative error 1e-6 at most), and jvp against vjp (the dot-product test <vjp(u), v> =
-- <u, jvp(v)>, 1e-10); shapes with empty, single and odd extents; the errors of bad input.
local H = require "helper"
local lacc = H.lacc
local unpack = table.unpack or unpack

-- A host f64 array of shape sh with random values in [lo, hi), and its flat values.
local function rnd(sh, lo, hi)
  lo, hi = lo or -1, hi or 1
  local flat = {}
  for i = 1, H.size(sh) do flat[i] = lo + (hi - lo) * H.rand() end
  return H.from_flat("f64", sh, flat), flat
end

local function flat_of(a)
  local r = {}
  for i = 1, a:size() do r[i] = H.num(a:at_linear(i - 1)) end
  return r
end

local function dot(a, b)
  local s = 0
  for i = 1, #a do s = s + a[i] * b[i] end
  return s
end

local function shape_of(a)
  local s = {}
  for d, e in ipairs(a:shape()) do s[d] = H.num(e) end
  return s
end

local function close(want, got, tol, what)
  local scale = math.max(math.abs(want), math.abs(got), 1e-3)
  if math.abs(want - got) > tol * scale then
    error(("%s: expected %.15g, got %.15g"):format(what, want, got), 2)
  end
end

for _, b in ipairs(H.backends) do
  describe("derivatives on " .. b, function()
    local function run(p) return lacc.run(p, { backend = b }) end

    -- f of the arrays args (host f64 arrays; Lua numbers pass as they are): for each array
    -- argument, the pullback of a cotangent against finite differences along a direction,
    -- and jvp along it against the pullback. The cotangent and the directions are programs
    -- (values from a hash of the position, in [-1, 1)), and everything is one run: one
    -- compilation per check.
    local function pseudo(x, salt)
      return lacc.map(function(i)
        local k = lacc.cast(lacc.imod(i * 7919 + salt * 104729, 2147483647), "f64")
        return lacc.cos(k * 12.9898) * 0.999
      end, lacc.reshape(lacc.shape(x), lacc.iota(lacc.size(x))))
    end
    local function check(f, args, what)
      local y = f(unpack(args))
      local U = pseudo(y, 1)
      local res = { lacc.vjp(f, unpack(args)) }
      local cots = { res[#res](U) }
      local h = 1e-5
      local progs, at = { y, U }, {}
      for k, x in ipairs(args) do
        if type(x) ~= "number" then
          local V = pseudo(x, k + 1)
          local function moved(s)
            local a = {}
            for i = 1, #args do a[i] = args[i] end
            a[k] = x + s * V
            return f(unpack(a))
          end
          local dxs = {}
          dxs[k] = V
          local jres = { lacc.jvp(f, args, dxs) }
          at[k] = #progs
          for _, p in ipairs { cots[k], V, moved(h), moved(-h), jres[#jres] } do progs[#progs + 1] = p end
        end
      end
      -- a run of the result and cotangent, then one per argument (OpenCL compiles a
      -- run's kernels as one program: a small one compiles faster)
      local r, from = {}, 1
      while from <= #progs do
        local last = from == 1 and 2 or from + 4
        for _, a in ipairs { lacc.run({ unpack(progs, from, last) }, { backend = b }) } do r[#r + 1] = a end
        from = last + 1
      end
      local u = flat_of(r[2])
      for k, x in ipairs(args) do
        if at[k] then
          local c, v, fp, fm, dy = r[at[k] + 1], r[at[k] + 2], r[at[k] + 3], r[at[k] + 4], r[at[k] + 5]
          assert.are.same(shape_of(x), shape_of(c))
          fp, fm = flat_of(fp), flat_of(fm)
          local fd = 0
          for i = 1, #fp do fd = fd + u[i] * (fp[i] - fm[i]) / (2 * h) end
          local an = dot(flat_of(c), flat_of(v))
          close(fd, an, 1e-6, ("%s: argument %d against finite differences"):format(what, k))
          close(an, dot(u, flat_of(dy)), 1e-10, ("%s: argument %d, jvp against vjp"):format(what, k))
        end
      end
    end

    -- OpenCL builds each run's kernels with the device's compiler, which takes seconds: there
    -- (but under LACC_TEST_SWEEP=full) one case per rule runs, `more` the others
    local function more(f, args, what)
      if b ~= "opencl" or H.sweep_mode == "full" then check(f, args, what) end
    end

    it("maps and zipWith of every differentiable scalar function, on " .. b, function()
      H.seed(4701)
      local unary = {
        neg = function(x) return -x end, sq = function(x) return x * x * x end,
        sqrt = function(x) return lacc.sqrt(x * x + 0.1) end, exp = lacc.exp,
        log = function(x) return lacc.log(x * x + 0.5) end, sin = lacc.sin, cos = lacc.cos,
        tan = lacc.tan, asin = function(x) return lacc.asin(x * 0.9) end,
        acos = function(x) return lacc.acos(x * 0.9) end, atan = lacc.atan, sinh = lacc.sinh,
        cosh = lacc.cosh, tanh = lacc.tanh, asinh = lacc.asinh,
        acosh = function(x) return lacc.acosh(x * x + 1.5) end,
        atanh = function(x) return lacc.atanh(x * 0.9) end,
        log2 = function(x) return lacc.log2(x * x + 0.5) end,
        log10 = function(x) return lacc.log10(x * x + 0.5) end,
        log1p = function(x) return lacc.log1p(x * 0.5) end, expm1 = lacc.expm1,
        exp2 = lacc.exp2, cbrt = function(x) return lacc.cbrt(x + 2) end,
        abs = lacc.abs, pow = function(x) return lacc.pow(x * x + 0.5, 1.7) end,
        ipow = function(x) return x ^ 3 end,
        steps = function(x) return lacc.floor(x * 3) + lacc.round(x) + lacc.signum(x) + x end,
        cast = function(x) return lacc.cast(lacc.cast(x * 10, "i32"), "f64") + x * 2 end,
        cond = function(x) return lacc.cond(lacc.lt(x, 0), x * x, lacc.sin(x)) end,
        tuple = function(x) local p = lacc.tuple(x * 2, lacc.exp(x)); return p[1] * p[2] end,
      }
      -- each function on one of the shapes, in turn (every shape meets several functions)
      local shapes, k = { { 7 }, { 0 }, { 1 }, {}, { 3, 5 } }, 0
      local names = {}
      for name in pairs(unary) do names[#names + 1] = name end
      table.sort(names)
      -- OpenCL compiles each run's kernels with the device's compiler, slowly: there the
      -- functions are checked together, as one weighted sum (a wrong rule still shows),
      -- elsewhere one by one
      if b == "opencl" then
        check(function(x)
          return lacc.map(function(e)
            local s = 0
            for i, name in ipairs(names) do s = s + unary[name](e) * (1 + i / 7) end
            return s
          end, x)
        end, { (rnd({ 11 })) }, "every function at once")
      else
        for _, name in ipairs(names) do
          k = k + 1
          check(function(x) return lacc.map(unary[name], x) end, { (rnd(shapes[k % #shapes + 1])) }, name)
        end
      end
      local binary = {
        add = function(x, y) return x + y end, sub = function(x, y) return x - y end,
        mul = function(x, y) return x * y end, div = function(x, y) return x / (y * y + 0.5) end,
        pow = function(x, y) return lacc.pow(x * x + 0.5, y) end, atan2 = lacc.atan2,
        hypot = lacc.hypot, min = lacc.min, max = lacc.max,
        mod = function(x, y) return x % (y * y + 0.5) end,
        where = function(x, y) return lacc.cond(lacc.lt(x, y), x * y, x + y) end,
      }
      local bshapes = { { 13 }, { 0 }, { 2, 3 } }
      names = {}
      for name in pairs(binary) do names[#names + 1] = name end
      table.sort(names)
      if b == "opencl" then
        check(function(x, y)
          return lacc.zipWith(function(p, q)
            local s = 0
            for i, name in ipairs(names) do s = s + binary[name](p, q) * (1 + i / 7) end
            return s
          end, x, y)
        end, { (rnd({ 9 })), (rnd({ 9 })) }, "every function of two at once")
      else
        for i, name in ipairs(names) do
          local sh = bshapes[i % #bshapes + 1]
          check(function(x, y) return lacc.zipWith(binary[name], x, y) end, { (rnd(sh)), (rnd(sh)) }, name)
        end
      end
      more(function(x, y, z) return lacc.zipWith3(lacc.fma, x, y, z) end,
        { (rnd({ 9 })), (rnd({ 9 })), (rnd({ 9 })) }, "fma")
      -- arrays of different extents meet at their intersection
      check(function(x, y) return lacc.zipWith(function(p, q) return p * q end, x, y) end,
        { (rnd({ 5 })), (rnd({ 8 })) }, "intersection")
      -- tuples in, tuples out
      more(function(x, y)
        local z = lacc.map(function(p) return lacc.tuple(p[1] * p[2], lacc.sin(p[1])) end, lacc.zip(x, y))
        return lacc.map(function(p) return p[1] + p[2] end, z)
      end, { (rnd({ 6 })), (rnd({ 6 })) }, "tuples")
    end)

    it("array arithmetic with broadcasting and Lua numbers, on " .. b, function()
      H.seed(4702)
      check(function(a, v) return lacc.exp(a) * v + a / (v * v + 1) - 2 end,
        { (rnd({ 3, 4 })), (rnd({ 4 })) }, "broadcast")
      more(function(a) return (a * a):sum(2) + a:mean(2) end, { (rnd({ 5, 3 })) }, "methods")
      more(function(a) return a:var(1) end, { (rnd({ 6, 2 })) }, "variance")
      -- where: the branch taken, its mask computed from what is differentiated (a ReLU),
      -- a number on either side, and a mask of other arrays' values
      check(function(a) return lacc.where(lacc.map(function(e) return lacc.gt(e, 0) end, a), a * a, 0) end,
        { (rnd({ 7 })) }, "where, a ReLU")
      more(function(a, c)
        return lacc.where(lacc.zipWith(lacc.lt, a, c), 0.5, lacc.sin(c)) + lacc.where(lacc.map(function(e)
          return lacc.gt(e, 0) end, c), a, c)
      end, { (rnd({ 3, 2 })), (rnd({ 3, 2 })) }, "where of two arrays")
    end)

    it("sums, products (with zeros), maxima and minima along each dimension, on " .. b, function()
      H.seed(4703)
      for _, d in ipairs { 1, 2 } do
        local first = d == 1 and check or more
        first(function(a) return lacc.sum(lacc.sin(a), d) end, { (rnd({ 3, 5 })) }, "sum " .. d)
        more(function(a) return lacc.product(a, d) end, { (rnd({ 4, 3 })) }, "product " .. d)
        first(function(a) return lacc.maximum(a, d) end, { (rnd({ 3, 7 })) }, "maximum " .. d)
        more(function(a) return lacc.minimum(a, d) end, { (rnd({ 5, 2 })) }, "minimum " .. d)
        more(function(a) return lacc.fold(function(p, q) return p + q end, 0, a, { dim = d }) end,
          { (rnd({ 2, 9 })) }, "fold + " .. d)
      end
      more(function(a) return lacc.sum(a) end, { (rnd({ 0, 4 })) }, "sum of nothing")
      more(function(a) return lacc.sum(a, 2) end, { (rnd({ 4, 0 })) }, "sum of empty rows")
      more(function(a) return lacc.maximum(a) * 3 end, { (rnd({ 2, 3, 3 })) }, "maximum of all")
      -- products with one zero and with two in a line: no division by zero
      local z = H.from_flat("f64", { 3, 4 }, { 0, 1.5, -2, 0.5, 0, 0, 3, 1, 1, 2, -1, 0.25 })
      check(function(a) return lacc.product(a, 2) end, { z }, "product with zeros")
      more(function(a) return lacc.product(a) end, { (rnd({ 7 })) }, "product of all")
    end)

    it("running sums along each dimension, on " .. b, function()
      H.seed(4704)
      check(function(a) return lacc.scanl1(function(p, q) return p + q end, a) end, { (rnd({ 3, 6 })) }, "scanl1")
      more(function(a) return lacc.scanr1(function(p, q) return p + q end, a) end, { (rnd({ 11 })) }, "scanr1")
      more(function(a) return a:cumsum(1) end, { (rnd({ 4, 3 })) }, "cumsum 1")
    end)

    it("rearrangements: transpose, reshape, replicate, reverse, rotate, slice, take, drop, " ..
       "append, concat, backpermute, gather, on " .. b, function()
      H.seed(4705)
      local A, v = rnd({ 3, 4 }), rnd({ 4 })
      local sq = function(x) return lacc.map(function(e) return e * e end, x) end
      check(function(a) return sq(lacc.transpose(a)) end, { A }, "transpose")
      more(function(a) return sq(lacc.reshape({ 2, 6 }, a)) end, { A }, "reshape")
      check(function(x) return sq(lacc.replicate({ 3, lacc.all }, x)) end, { v }, "replicate")
      more(function(x) return sq(lacc.reverse(x)) * v end, { v }, "reverse")
      more(function(x) return sq(lacc.rotate(1, x)) * v end, { v }, "rotate")
      more(function(a) return sq(lacc.slice(a, { { 2, 3 }, { 1, 4, 2 } })) end, { A }, "slice")
      more(function(x) return sq(lacc.take(2, x)) end, { v }, "take")
      more(function(x) return sq(lacc.drop(1, x)) end, { v }, "drop")
      check(function(x, y) return lacc.append(x, y) * lacc.append(y, x) end, { v, (rnd({ 4 })) }, "append")
      more(function(x, y) return sq(lacc.concat { x, y, x }) end, { v, (rnd({ 2 })) }, "concat")
      -- parts of other outer extents: the lines past the intersection get zeros
      more(function(x, y) return sq(lacc.append(x, y)) end, { (rnd({ 1, 5 })), (rnd({ 3, 2 })) }, "append, other rows")
      more(function(x) return sq(lacc.backpermute({ 6 }, function(i) return lacc.imod(i * 5, 4) + 1 end, x)) end,
        { v }, "backpermute")
      local idx = lacc.fromtable({ 3, 1, 3, 2, 3 }, "i64")
      check(function(x) return sq(lacc.gather(idx, x)) end, { v }, "gather")
    end)

    it("sorts through their permutation, on " .. b, function()
      H.seed(4711)
      local w = rnd({ 3, 7 })
      check(function(a) return lacc.sort(a) * w end, { (rnd({ 3, 7 })) }, "sort")
      more(function(a) return lacc.sort(a, { descending = true }) * w end, { (rnd({ 3, 7 })) }, "sort descending")
      more(function(k, v)
        local sk, sv = lacc.sort_by_key(k, v)
        return sv * w + sk * sk
      end, { (rnd({ 3, 7 })), (rnd({ 3, 7 })) }, "sort_by_key")
    end)

    it("reads of arrays inside functions (generate, map), on " .. b, function()
      H.seed(4706)
      local v, w = rnd({ 5 }), rnd({ 3 })
      check(function(x) return lacc.generate({ 5, 5 }, function(i, j) return x[i] * x[j] + lacc.sin(x[j]) end) end,
        { v }, "generate")
      more(function(x, y) return lacc.map(function(e) return e * y[2] + y[1] * y[1] end, x) end,
        { v, w }, "map reading")
      -- a 3-point stencil written with reads at clamped neighbours
      more(function(x)
        return lacc.generate({ 5 }, function(i)
          local l, r = lacc.max(i - 1, 1), lacc.min(i + 1, 5)
          return x[l] - 2 * x[i] + x[r]
        end)
      end, { v }, "neighbours")
      more(function(x) return lacc.unit(lacc.index(x, 2) * lacc.index(x, 3)) end, { v }, "unit")
      -- reads at some of a generate's dimensions and constants: sums, not scatters
      check(function(p)
        return lacc.generate({ 4, 4, 2 }, function(i, j, k)
          return p:at(i, 1) * p:at(j, 2) + lacc.exp(p:at(j, 1)) * lacc.cast(k, "f64") + p:at(3, 2)
        end)
      end, { (rnd({ 4, 2 })) }, "projections")
    end)

    it("stencils of every boundary, ranks 1 and 2, on " .. b, function()
      H.seed(4710)
      local v, A = rnd({ 7 }), rnd({ 4, 5 })
      local f3 = function(l, c, r) return l * c - 2 * c + lacc.sin(r) end
      for i, bd in ipairs { "clamp", "mirror", "wrap", lacc.constant(0.5, "f64") } do
        local one = i == 1 and check or more
        one(function(x) return lacc.stencil(f3, bd, x) end, { v }, "stencil " .. tostring(bd))
      end
      more(function(a)
        return lacc.stencil(function(...)
          local t, s = { ... }, 0
          for k = 1, 9 do s = s + t[k] * (k / 10) end
          return s * t[5]
        end, "clamp", a)
      end, { A }, "stencil 3x3")
      more(function(a) return lacc.stencil(f3, "wrap", a, { 1, 3 }) end, { A }, "stencil 1x3")
      more(function(a, c)
        return lacc.stencil2(function(...) local t = { ... }; return t[2] * t[5] end, "clamp", a, "wrap", c)
      end, { (rnd({ 6 })), (rnd({ 6 })) }, "stencil2")
    end)

    it("linear stencils (their transposed stencil) of every boundary, windows past the " ..
       "extents, ranks 1 to 3, and a loss through array arithmetic, on " .. b, function()
      H.seed(4711)
      local w5 = function(...)
        local t, s = { ... }, 0
        for k = 1, #t do if k % 3 ~= 0 then s = s + t[k] * (k / 7 - 0.5) end end
        return s
      end
      local heat = function(_, n, _, wst, c, e, _, s, _) return c + 0.2 * (n + s + wst + e - 4 * c) end
      check(function(x)
        local u = x
        for _ = 1, 2 do u = lacc.stencil(heat, "clamp", u) end
        return lacc.sum((u - x) * (u - x))
      end, { (rnd({ 5, 6 })) }, "two heat steps, a loss through array arithmetic")
      for i, bd in ipairs { "clamp", "wrap", lacc.constant(0.25, "f64") } do
        local one = i == 1 and check or more
        one(function(x) return lacc.stencil(w5, bd, x, 5) end, { (rnd({ 3 })) }, "1-D 5 on 3 " .. tostring(bd))
        more(function(x) return lacc.stencil(w5, bd, x, { 5, 3 }) end, { (rnd({ 2, 4 })) },
             "2-D 5x3 on 2x4 " .. tostring(bd))
      end
      more(function(x) return lacc.stencil(w5, "clamp", x, 3) end, { (rnd({ 1 })) }, "one element")
      more(function(x) return lacc.stencil(w5, "clamp", x, { 3, 1, 3 }) end, { (rnd({ 3, 2, 4 })) }, "rank 3")
    end)

    it("folds and scans of any other function (the general rules), on " .. b, function()
      H.seed(4712)
      -- a * b + a + b is (1 + a)(1 + b) - 1: associative, neither + nor *
      local f = function(u, w) return u * w + u + w end
      local A = rnd({ 3, 5 }, -0.5, 0.5)
      check(function(a) return lacc.fold(f, 0.25, a) end, { A }, "fold along rows")
      more(function(a) return lacc.fold1(f, a, { dim = 1 }) end, { A }, "fold1 along columns")
      more(function(a) return lacc.fold1(f, a) end, { (rnd({ 1 })) }, "fold1 of one element")
      -- max as a fold (not fold1) goes this way too: the branch max takes
      more(function(a) return lacc.fold(function(p, q) return lacc.max(p, q) end, -10, a) end, { A }, "fold of max")
      -- scans: the cotangent as a scan of affine maps the other way
      check(function(a) return lacc.scanl1(f, a) end, { A }, "scanl1 along rows")
      more(function(a) return lacc.scanr1(f, a) end, { A }, "scanr1 along rows")
      more(function(a) return lacc.scanl1(f, a, { dim = 1 }) end, { A }, "scanl1 along columns")
      more(function(a) return lacc.scanr1(function(p, q) return lacc.max(p, q) * 0.5 + p * q end, a) end,
           { A }, "scanr1 of another function")
      check(function(a) return lacc.scanl(f, 0.3, a) end, { A }, "scanl with a start value")
      more(function(a) return lacc.scanr(f, -0.2, a, { dim = 1 }) end, { A }, "scanr along columns")
      more(function(a) return lacc.scanl(function(p, q) return p + q end, 0, a) end, { (rnd({ 4 })) }, "scanl of +")
    end)

    it("segmented folds and scans of + (empty segments among them), on " .. b, function()
      H.seed(4713)
      local segs = lacc.fromtable({ 2, 0, 3, 1, 0 }, "i32")
      check(function(a) return lacc.foldSeg(function(p, q) return p + q end, 0, lacc.sin(a), segs) end,
            { (rnd({ 6 })) }, "foldSeg")
      local full = lacc.fromtable({ 2, 3, 1 }, "i64")   -- fold1Seg: no empty segment
      more(function(a) return lacc.fold1Seg(function(p, q) return q + p end, a * a, full) end,
           { (rnd({ 2, 6 })) }, "fold1Seg, rank 2")
      more(function(a) return lacc.scanl1Seg(function(p, q) return p + q end, lacc.exp(a), segs) end,
           { (rnd({ 6 })) }, "scanl1Seg")
      more(function(a) return lacc.scanr1Seg(function(p, q) return p + q end, a * a, segs) end,
           { (rnd({ 3, 6 })) }, "scanr1Seg, rank 2")
      -- with a start value: one more element a segment (empty segments too)
      check(function(a) return lacc.sin(lacc.scanlSeg(function(p, q) return p + q end, 0.5, a, segs)) end,
           { (rnd({ 6 })) }, "scanlSeg")
      more(function(a) return lacc.exp(lacc.scanrSeg(function(p, q) return q + p end, -1.0, a * a, segs)) end,
           { (rnd({ 2, 6 })) }, "scanrSeg, rank 2")
    end)

    it("interleave (lines of other lengths, outer extents intersected), on " .. b, function()
      H.seed(4714)
      check(function(x, y) return lacc.interleave(lacc.sin(x), y * y) end, { (rnd({ 5 })), (rnd({ 3 })) },
            "interleave")
      more(function(x, y) return lacc.interleave(x, lacc.exp(y)) end, { (rnd({ 3, 4 })), (rnd({ 2, 6 })) },
           "interleave rank 2")
    end)

    it("filter and scatter (through the positions kept and written), on " .. b, function()
      -- values away from the predicate's edge, so that a finite difference keeps the set
      local vals = { 0.5, -0.7, 0.9, 0.2, -0.3, 0.8, -0.9, 0.4 }
      local v = lacc.fromtable(vals, "f64")
      check(function(x)
        local kept = lacc.filter(function(e) return lacc.gt(e, 0) end, x)
        return lacc.map(function(e) return e * e end, kept)
      end, { v }, "filter")
      local m = lacc.fromtable({ { 0.5, -0.7, 0.9 }, { 0.2, -0.3, 0.8 } }, "f64")
      more(function(x)
        return (lacc.filter(function(e) return lacc.lt(e, 0.6) end, lacc.sin(x)))
      end, { m }, "filter rank 2")
      -- positions 2 and 5 both write place 3: the later wins; place 4 keeps its default;
      -- index 0 (lacc.ignore) writes nothing
      local to = lacc.fromtable({ 1, 3, 2, 0, 3, 5 }, "i64")
      more(function(x, d)
        return lacc.scatter(lacc.map(function(e) return e * e end, x), to, lacc.exp(d))
      end, { (rnd({ 6 })), (rnd({ 5 })) }, "scatter")
      -- into rank 2: (1, 2) written twice, four places of six kept
      local to2 = lacc.zip(lacc.fromtable({ 1, 2, 1, 2 }, "i64"), lacc.fromtable({ 2, 1, 2, 3 }, "i64"))
      more(function(x, d)
        return lacc.scatter(lacc.sin(x), to2, d * d)
      end, { (rnd({ 4 })), (rnd({ 2, 3 })) }, "scatter into rank 2")
    end)

    it("permute (+) and matmul, on " .. b, function()
      H.seed(4707)
      local v = rnd({ 6 })
      local to = lacc.fromtable({ 2, 1, 2, 0, 3, 1 }, "i64")
      check(function(x, d)
        return lacc.permute(function(p, q) return p + q end, d, function(i) return to[i] end, x)
      end, { v, (rnd({ 3 })) }, "permute")
      more(function(a, c) return lacc.matmul(a, c) end, { (rnd({ 3, 4 })), (rnd({ 4, 5 })) }, "matmul 2x2")
      check(function(a, x) return lacc.matmul(a, x) end, { (rnd({ 3, 4 })), (rnd({ 4 })) }, "matmul 2x1")
      more(function(x, a) return lacc.matmul(x, a) end, { (rnd({ 3 })), (rnd({ 3, 2 })) }, "matmul 1x2")
      more(function(a, c) return lacc.matmul(a, c) end, { (rnd({ 2, 3, 4 })), (rnd({ 2, 4, 2 })) }, "matmul batched")
      more(function(a, c) return lacc.matmul(a, c) end, { (rnd({ 0, 4 })), (rnd({ 4, 2 })) }, "matmul empty")
      -- sums of products along rows and columns (products of sums), and GMM's centred
      -- points: each mean's cotangent a sum over the points of a product's cotangent
      more(function(a, c) return lacc.sum(lacc.matmul(a, c), 1) end, { (rnd({ 3, 4 })), (rnd({ 4, 5 })) }, "sum of rows")
      more(function(a, c) return lacc.sum(lacc.matmul(a, c), 3) end, { (rnd({ 2, 3, 4 })), (rnd({ 2, 4, 5 })) },
           "sum of batched columns")
      for _, n in ipairs { 5, 0 } do
        local xs = rnd({ n, 3 })
        check(function(mu, q)
          local centred = lacc.generate({ 2, n, 3 }, function(j, i, c) return xs:at(i, c) - mu:at(j, c) end)
          return lacc.matmul(centred, q)
        end, { (rnd({ 2, 3 })), (rnd({ 2, 3, 4 })) }, "centred points, " .. n)
      end
    end)

    it("acond: the branch taken, on " .. b, function()
      H.seed(4708)
      for _, c in ipairs { true, false } do
        local one = c and check or more
        one(function(x, y)
          return lacc.acond(lacc.unit(lacc.constant(c)), x * y, lacc.sin(y))
        end, { (rnd({ 4 })), (rnd({ 4 })) }, "acond " .. tostring(c))
        -- over lists: each result from its pair's branch taken
        more(function(x, y)
          local p, q = lacc.acond(lacc.unit(lacc.constant(c)), { x * y, lacc.sum(x) }, { lacc.sin(y), lacc.sum(y * y) })
          return lacc.zipWith(function(u, v) return u * v end, p, lacc.replicate({ 4 }, q))
        end, { (rnd({ 4 })), (rnd({ 4 })) }, "acond of lists " .. tostring(c))
      end
    end)

    it("awhile: each turn's arrays kept, the body's pullback turn by turn, on " .. b, function()
      H.seed(4712)
      -- a float loop whose condition reads its data (the turns: 3 here, far from the
      -- threshold at every moved input), the body reading w from outside the loop
      check(function(x, w)
        return lacc.awhile(function(v) return lacc.lt(lacc.sum(lacc.map(lacc.abs, v)), 8) end,
          function(v) return lacc.zipWith(function(a, c) return a * c + 0.3 * lacc.sin(a) + 0.7 end, v, w) end, x)
      end, { (rnd({ 5 }, 0.1, 0.2)), (rnd({ 5 }, 0.9, 1.1)) }, "awhile of one array")
      -- a list: a matrix, a rank-0 float and an integer counter that the condition reads;
      -- the body reads a scalar from outside through lacc.the and sums it into the matrix
      more(function(m, s, k)
        local g, t = lacc.awhile(function(_, _, n) return lacc.lt(lacc.the(n), 4) end,
          function(a, c, n)
            local a2 = lacc.map(function(e) return lacc.tanh(e) * lacc.the(c) + lacc.the(k) end, a)
            return a2, lacc.sum(lacc.flatten(a2)) * 0.1, lacc.map(function(v) return v + 1 end, n)
          end, { m, s, lacc.unit(lacc.constant(0, "i64")) })
        return lacc.zipWith(function(p, q) return p * q end, g, lacc.replicate({ 3, 2 }, t))
      end, { (rnd({ 3, 2 })), (rnd({}, 0.5, 1)), (rnd({}, -0.5, 0.5)) }, "awhile of a list")
      -- the shape changes every turn: pairwise products halve the array until one is left
      more(function(x)
        return lacc.awhile(function(a) return lacc.gt(lacc.size(a), 1) end, function(a)
          local n = lacc.size(a)
          return lacc.generate({ lacc.idiv(n + 1, 2) }, function(i)
            return lacc.cond(lacc.le(2 * i, n), a[2 * i - 1] * a[2 * i] + a[2 * i], a[2 * i - 1])
          end)
        end, x)
      end, { (rnd({ 7 }, 0.5, 1.5)) }, "awhile halving")
      -- no turn at all, an empty array, and a loop nested in the body
      more(function(x)
        return lacc.awhile(function(v) return lacc.gt(lacc.sum(v), 1e9) end, lacc.sin, x)
      end, { (rnd({ 3 })) }, "awhile never turning")
      more(function(x)
        return lacc.awhile(function(v) return lacc.lt(lacc.size(v), 0) end, lacc.sin, x)
      end, { (rnd({ 0 })) }, "awhile of an empty array")
      more(function(x)
        local r = lacc.awhile(function(v, n) return lacc.lt(lacc.the(n), 2) end, function(v, n)
          local inner = lacc.awhile(function(u, j) return lacc.lt(lacc.the(j), 3) end,
            function(u, j)
              return lacc.map(function(e) return lacc.cos(e) + e * 0.5 end, u), j:map(function(q) return q + 1 end)
            end,
            { v, lacc.unit(lacc.constant(0, "i32")) })
          return inner, n:map(function(q) return q + 1 end)
        end, { x, lacc.unit(lacc.constant(0, "i32")) })
        return r
      end, { (rnd({ 4 })) }, "awhile nested")
    end)

    -- (on OpenCL under LACC_TEST_SWEEP=full: the check is lowered as every backend's checks)
    local tape_spec = b ~= "opencl" or H.sweep_mode == "full"
    if tape_spec then it("awhile's tape past grad_mb is an error naming the setting, on " .. b, function()
      local x = lacc.fromtable({ 1.0, 2.0, 3.0 }, "f64")
      local f = function(v)
        return lacc.sum(lacc.awhile(function(a) return lacc.lt(lacc.maximum(a), 50) end,
          function(a) return a * 1.5 end, v))
      end
      lacc.config { grad_mb = 0.00003 }   -- 31.5 bytes: a turn of three f64 fits, two do not
      local ok, err = pcall(function() return run(lacc.grad(f)(x)) end)
      lacc.config { grad_mb = "" }
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find("vjp: awhile's pullback keeps the loop's arrays of every " ..
        "turn: 0.0 MB, past grad_mb %(0.0 MB%); raise it %(lacc.config{grad_mb = ...} or " ..
        "LACC_GRAD_MB%) %(at [^)]*grad_spec.lua:%d+%)"), tostring(err))
      assert.are.equal(1024, lacc.config().grad_mb)
      -- within it: 1.5^k x while the largest is below 50 (7 turns), d/dx = 1.5^7 each
      local g = flat_of(run(lacc.grad(f)(x)))
      for i = 1, 3 do close(1.5 ^ 7, g[i], 1e-12, "awhile's gradient") end
    end) end

    it("grad and value_and_grad of a scalar objective; compiled, on " .. b, function()
      H.seed(4709)
      local A, x = rnd({ 4, 3 }), rnd({ 3 })
      local f = function(a, v) return lacc.sum(lacc.tanh(lacc.matmul(a, v))) end
      local ga, gv = lacc.grad(f, { 1, 2 })(A, x)
      local _, pb = lacc.vjp(f, A, x)
      local wa, wv = pb(1)
      assert.are.same(flat_of(run(wa)), flat_of(run(ga)))
      assert.are.same(flat_of(run(wv)), flat_of(run(gv)))
      local y, g2 = lacc.value_and_grad(f, 2)(A, x)
      assert.are.same(flat_of(run(f(A, x))), flat_of(run(y)))
      assert.are.same(flat_of(run(wv)), flat_of(run(g2)))
      -- compiled: the derivative program is cached and gives the same numbers
      local cg = lacc.compile(lacc.grad(f, 2), { backend = b })
      local first = flat_of(cg(A, x))
      assert.are.same(flat_of(run(gv)), first)
      assert.are.same(first, flat_of(cg(A, x)))
      -- a Lua number argument is a constant: no gradient
      local _, pbn = lacc.vjp(function(v, s) return v * s end, x, 2.5)
      local gx, gs = pbn(1)
      assert.is_nil(gs)
      for _, e in ipairs(flat_of(run(gx))) do assert.are.equal(2.5, e) end
    end)

    it("compiled, through broadcasts of shapes known only when it runs, on " .. b, function()
      -- d/dv sum(a * v) is a's sum over what v is stretched along; d/da is v stretched
      local g = lacc.compile(lacc.grad(function(a, v) return lacc.sum(a * v) end, { 1, 2 }), { backend = b })
      local a = H.from_flat("f64", { 3, 4 }, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 })
      for _, c in ipairs {
        { { 4 }, { 0.5, -1, 2, 3 }, { 15, 18, 21, 24 } },
        { { 1 }, { 2 }, { 78 } },
        { { 3, 1 }, { 1, -2, 0.25 }, { 10, 26, 42 } },
        { { 1, 4 }, { 1, 1, -1, 2 }, { 15, 18, 21, 24 } },
      } do
        local v = H.from_flat("f64", c[1], c[2])
        local ga, gv = g(a, v)
        assert.are.same(c[3], flat_of(gv))
        local want = {}
        for i = 1, 3 do
          for j = 1, 4 do
            local k = #c[2] == 1 and 1 or (c[1][2] == 1 and i) or j
            want[#want + 1] = c[2][k]
          end
        end
        assert.are.same(want, flat_of(ga))
      end
    end)

    it("says what cannot be differentiated, at the user's line, on " .. b, function()
      local x = lacc.fromtable({ 3.0, 1.0, 2.0 }, "f64")
      local n = lacc.fromtable({ 3, 1, 2 }, "i32")
      local function fails(pattern, f)
        local ok, err = pcall(f)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find(pattern), tostring(err))
      end
      local here = "[^)]*grad_spec.lua:%d+"
      fails("grad: argument 1 is an array of i32: gradients are taken with respect to arrays of floats",
        function() return lacc.grad(function(v) return lacc.sum(lacc.cast(v, "f64")) end)(n) end)
      fails("grad: the function must return one rank%-0 array of floats",
        function() return lacc.grad(function(v) return v * 2 end)(x) end)
      fails("grad: the function must return one rank%-0 array of floats.*got an array of i32",
        function() return lacc.grad(function(v) return lacc.sum(lacc.cast(v, "i32")) end)(x) end)
      fails("vjp: no derivative rule for scanlSeg %(built at " .. here .. "%): its function must be %+", function()
        local _, pb = lacc.vjp(function(v)
          local r = lacc.scanlSeg(function(a, c) return a * c end, 1.0, v, lacc.fromtable({ 2, 1 }, "i64"))
          return r
        end, x)
        return pb(1)
      end)
      fails("vjp: no derivative rule for fold %(built at " .. here .. "%): its elements must be floats", function()
        local _, pb = lacc.vjp(function(v)
          local s = lacc.fold(function(p, q) return p[1] * q[1] + p[2], p[2] + q[2] end,
                              lacc.tuple(lacc.constant(1, "f64"), lacc.constant(0, "f64")), lacc.zip(v, v))
          return lacc.map(function(t) return t[1] end, s)
        end, x)
        return pb(1)
      end)
      fails("derivative: no rule for iterate", function()
        local _, pb = lacc.vjp(function(v)
          local r = lacc.map(function(e) return lacc.iterate(3, function(s) return s * e end, e) end, v)
          return r
        end, x)
        return pb(1)
      end)
      -- an integer result: a constant, its derivative zero
      local _, pbi = lacc.vjp(function(v) return lacc.argmax(v) end, x)
      assert.are.same({ 0, 0, 0 }, flat_of(run(pbi(nil))))
    end)
  end)
end
