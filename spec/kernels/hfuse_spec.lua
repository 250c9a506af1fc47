-- Horizontal fusion (core/ast/hfuse.c): sibling folds over the same rows computed in one
-- loop. Every result is checked against a plain Lua loop (exactly, where the data make
-- the sums exact: small integers, integer arithmetic, min and max) and bit for bit against
-- the same program with the merge off ({hfuse = false}), on every backend; explain's
-- kernel counts say which folds were merged and which were not, and why.
local H = require "helper"
local lacc = H.lacc

local function sq(x) return x * x end
-- a value as text that tells every double apart, the sign of a zero included
local function bits(v)
  v = H.num(v)
  if type(v) ~= "number" then return tostring(v) end
  if v ~= v then return "nan" end
  return ("%.17g%s"):format(v, 1 / v > 0 and "+" or "-")
end

-- Runs programs ps on backend b with the merge on and off: the results' values (as bits)
-- must agree, and the kernel counts are returned (on, off).
local function both(ps, b)
  local on = { lacc.run(ps, { backend = b }) }
  local off = { lacc.run(ps, { backend = b, hfuse = false }) }
  assert.are.equal(#ps, #on)
  for i = 1, #ps do
    assert.are.equal(bits(off[i]:get()), bits(on[i]:get()), "result " .. i .. " on " .. b)
  end
  local _, son = lacc.explain(ps, { backend = b == "interp" and "cpu" or b })
  local _, soff = lacc.explain(ps, { backend = b == "interp" and "cpu" or b, hfuse = false })
  return on, son.kernels, soff.kernels
end

-- n elements: small integers (every f32 sum of them exact), random floats ("finite"),
-- or random floats with NaN, infinities and signed zeros now and then
local function data(n, kind)
  local t = {}
  for i = 1, n do
    if kind == "int" then t[i] = H.randint(-50, 50)
    elseif kind == "finite" then t[i] = H.f32(H.rand() * 20 - 10)
    else
      local r = H.rand()
      if r < 0.01 then t[i] = 0 / 0 elseif r < 0.02 then t[i] = -0.0
      elseif r < 0.025 then t[i] = math.huge else t[i] = H.f32(H.rand() * 20 - 10) end
    end
  end
  return t
end

-- a xor b of two integers in [0, 2^32), by arithmetic (both VMs)
local function bxor32(a, b)
  local r, p = 0, 1
  for _ = 1, 32 do
    local x, y = a % 2, b % 2
    if x ~= y then r = r + p end
    a, b, p = (a - x) / 2, (b - y) / 2, p * 2
  end
  return r
end

-- programs(xs, ys) index ys (3 elements) with xs's elements 1..5: the first bad index, 4,
-- is reported merged and apart alike.
local function same_error(b, programs)
  local xs = lacc.fromtable({ 1, 2, 3, 4, 5 }, "i32")
  local ys = lacc.fromtable({ 10, 20, 30 }, "i32")
  local p = programs(xs, ys)
  local ok1, e1 = pcall(lacc.run, p, { backend = b })
  local ok2, e2 = pcall(lacc.run, p, { backend = b, hfuse = false })
  assert.is_false(ok1)
  assert.is_false(ok2)
  assert.truthy(tostring(e1):find("index (4) out of bounds for shape (3)", 1, true), tostring(e1))
  assert.are.equal(tostring(e2), tostring(e1))
end

local SIZES = { 0, 1, 7, 300, 1000, 70001 }   -- 70001: past two partials' grain (chunks)

for _, b in ipairs(H.backends) do
  describe("sibling folds in one loop on " .. b, function()
    it("sum and sum of squares (per-lane accumulators): one kernel, each result as alone", function()
      H.seed(41)
      for _, n in ipairs(SIZES) do
        local t = data(n, "int")
        local xs = lacc.fromtable(t, "f64")   -- f64: every sum of squares here exact
        local m = lacc.map(function(x) return x * 3 end, xs)
        local r, kon, koff = both({ lacc.sum(m), lacc.sum(lacc.map(sq, m)) }, b)
        local s, s2 = 0, 0
        for i = 1, n do s, s2 = s + 3 * t[i], s2 + (3 * t[i]) ^ 2 end
        assert.are.equal(s, r[1]:get())
        assert.are.equal(s2, r[2]:get())
        assert.are.equal(1, kon)
        assert.are.equal(3, koff)   -- apart, m is materialised and each fold a kernel
      end
    end)

    it("float sums with NaN, infinities and -0: bit for bit as apart, near the Lua sum", function()
      H.seed(42)
      for _, case in ipairs { "finite", "special" } do for _, n in ipairs(SIZES) do
        local t = data(n, case)
        local xs = lacc.fromtable(t, "f32")
        local r = both({ lacc.sum(xs), lacc.sum(lacc.map(function(x) return x * 0.5 end, xs)),
                         lacc.product(lacc.map(function(x) return x * 0 + 1 end, xs)) }, b)
        local s = 0
        for i = 1, n do s = s + t[i] end
        assert.is_true(H.same(s, r[1]:get(), 1e-3), n .. ": " .. bits(r[1]:get()) .. " vs " .. s)
        assert.is_true(H.same(s * 0.5, r[2]:get(), 1e-3))
      end end
    end)

    it("minimum and maximum of floats (in order): one kernel, NaN where a loop in order has it", function()
      H.seed(43)
      for _, n in ipairs { 1, 7, 1000, 70001 } do
        local t = data(n, "float")
        local xs = lacc.fromtable(t, "f32")
        local r, kon = both({ lacc.minimum(xs), lacc.maximum(xs) }, b)
        assert.are.equal(1, kon)
        -- the interpreter folds in order: its results are the reference for NaN's place
        local ref = { lacc.run({ lacc.minimum(xs), lacc.maximum(xs) }, { backend = "interp" }) }
        assert.are.equal(bits(ref[1]:get()), bits(r[1]:get()))
        assert.are.equal(bits(ref[2]:get()), bits(r[2]:get()))
        local finite = {}
        for i = 1, n do if t[i] == t[i] then finite[#finite + 1] = t[i] end end
        if #finite == n then   -- no NaN: the plain extremes
          assert.are.equal(math.min((table.unpack or unpack)(finite)), r[1]:get())
          assert.are.equal(math.max((table.unpack or unpack)(finite)), r[2]:get())
        end
      end
    end)

    it("integer folds of one width (+, max, bxor, with wrapping): one kernel, exact", function()
      H.seed(44)
      for _, n in ipairs(SIZES) do
        local t = {}
        for i = 1, n do t[i] = H.rand() < 0.05 and (H.rand() < 0.5 and -2 ^ 31 or 2 ^ 31 - 1) or H.randint(-1000, 1000) end
        local xs = lacc.fromtable(t, "i32")
        local r, kon = both({
          lacc.sum(xs),
          lacc.fold(function(a, c) return lacc.max(a, c) end, lacc.constant(-2 ^ 31, "i32"), xs),
          lacc.fold(function(a, c) return lacc.bxor(a, c) end, lacc.constant(0, "i32"), xs),
        }, b)
        assert.are.equal(1, kon)
        local s, mx, x = 0, -2 ^ 31, 0
        for i = 1, n do
          s = (s + t[i] + 2 ^ 31) % 2 ^ 32 - 2 ^ 31
          mx = math.max(mx, t[i])
          x = bxor32(x, t[i] % 2 ^ 32)
        end
        if x >= 2 ^ 31 then x = x - 2 ^ 32 end
        assert.are.equal(s, r[1]:get())
        assert.are.equal(mx, r[2]:get())
        assert.are.equal(x, r[3]:get())
      end
    end)

    it("tuple folds and folds over a sum type's matches: one kernel, exact", function()
      H.seed(45)
      local n = 5000
      local shapes, vals = {}, {}
      for i = 1, n do
        local k = H.randint(1, 3)
        if k == 1 then shapes[i] = { tag = "Circle", H.randint(1, 9) }
        elseif k == 2 then shapes[i] = { tag = "Rect", H.randint(1, 9), H.randint(1, 9) }
        else shapes[i] = { tag = "Empty" } end
        vals[i] = H.randint(-100, 100)
      end
      local ss = lacc.fromtable(shapes, H.Shape)
      local function area(s)
        return lacc.match(s, { Circle = function(r) return r * r end,
                               Rect = function(w, h) return w * h end,
                               Empty = function() return lacc.constant(0, "f32") end })
      end
      local function sides(s)
        return lacc.match(s, { Circle = function() return lacc.constant(1, "f32") end,
                               Rect = function() return lacc.constant(4, "f32") end,
                               Empty = function() return lacc.constant(0, "f32") end })
      end
      local r, kon = both({ lacc.sum(lacc.map(area, ss)), lacc.sum(lacc.map(sides, ss)) }, b)
      assert.are.equal(1, kon)
      local a, c = 0, 0
      for i = 1, n do
        local s = shapes[i]
        if s.tag == "Circle" then a, c = a + s[1] * s[1], c + 1
        elseif s.tag == "Rect" then a, c = a + s[1] * s[2], c + 4 end
      end
      assert.are.equal(a, r[1]:get())
      assert.are.equal(c, r[2]:get())
      -- (value, index) pairs: the first largest and the first smallest, two tuple folds
      local xs = lacc.fromtable(vals, "i32")
      local pairs_ = lacc.generate({ n }, function(i) return lacc.tuple(xs[i], lacc.cast(i, "i32")) end)
      local function pick(better)
        return function(p, q)
          local pv, pi = p:unpack()
          local qv, qi = q:unpack()
          local take_q = lacc.lor(better(qv, pv), lacc.land(lacc.eq(qv, pv), lacc.lt(qi, pi)))
          return lacc.tuple(lacc.cond(take_q, qv, pv), lacc.cond(take_q, qi, pi))
        end
      end
      local hi = lacc.fold1(pick(lacc.gt), pairs_)
      local lo = lacc.fold1(pick(lacc.lt), pairs_)
      local on = { lacc.run({ hi, lo }, { backend = b }) }
      local off = { lacc.run({ hi, lo }, { backend = b, hfuse = false }) }
      local bi, li = 1, 1
      for i = 2, n do
        if vals[i] > vals[bi] then bi = i end
        if vals[i] < vals[li] then li = i end
      end
      assert.are.same({ vals[bi], bi }, on[1]:get())
      assert.are.same({ vals[li], li }, on[2]:get())
      assert.are.same(off[1]:get(), on[1]:get())
      assert.are.same(off[2]:get(), on[2]:get())
      local _, st = lacc.explain({ hi, lo }, { backend = b == "interp" and "cpu" or b })
      assert.are.equal(1, st.kernels)
    end)

    it("a compiled function's sibling results: one kernel, the same values", function()
      H.seed(46)
      local f = lacc.compile(function(x)
        return lacc.sum(x), lacc.sum(lacc.map(sq, x)), lacc.maximum(lacc.map(sq, x))
      end, { backend = b })
      for _, n in ipairs { 1, 1000, 70001 } do
        local t = data(n, "int")
        local s, s2, mx = f(lacc.fromtable(t, "f64"))
        local rs, rs2, rmx = 0, 0, -math.huge
        for i = 1, n do rs, rs2, rmx = rs + t[i], rs2 + t[i] ^ 2, math.max(rmx, t[i] ^ 2) end
        assert.are.equal(rs, s:get())
        assert.are.equal(rs2, s2:get())
        assert.are.equal(rmx, mx:get())
      end
    end)

    it("an index error inside a merged loop reports the same element and words", function()
      same_error(b, function(xs, ys)
        return { lacc.sum(xs), lacc.sum(lacc.map(function(x) return ys[x] end, xs)) }
      end)
    end)

    it("folds of every element of maps of one rank-2 array, flattened where its shape is " ..
       "known when it runs: one pass, each result as apart and as a Lua loop", function()
      H.seed(53)
      local function folds(xs)
        return lacc.sum(lacc.flatten(xs)),
               lacc.maximum(lacc.flatten(lacc.map(function(x) return x * x end, xs))),
               lacc.sum(lacc.flatten(lacc.map(function(x) return x * 2 end, xs)))
      end
      local on_f = lacc.compile(folds, { backend = b })
      local off_f = lacc.compile(folds, { backend = b, hfuse = false })
      for _, sh in ipairs { { 1, 1 }, { 7, 13 }, { 301, 233 } } do
        local n = sh[1] * sh[2]
        local t = data(n, "int")
        local xs = lacc.run(lacc.reshape(sh, lacc.fromtable(t, "f64")))
        local on, off = { on_f(xs) }, { off_f(xs) }
        local s, mx = 0, -math.huge
        for i = 1, n do s, mx = s + t[i], math.max(mx, t[i] * t[i]) end
        assert.are.equal(s, on[1]:get())
        assert.are.equal(mx, on[2]:get())
        assert.are.equal(2 * s, on[3]:get())
        for i = 1, 3 do assert.are.equal(bits(off[i]:get()), bits(on[i]:get())) end
      end
      -- an awhile's body, as a compiled function, reads its arrays' extents when it runs
      local zero = lacc.unit(lacc.constant(0, "f64"))
      local p = lacc.awhile(function(_, _, _, _, i) return lacc.lt(i, 1) end,
        function(x, _, _, _, i)
          local a, c, d = folds(x)
          return x, a, c, d, lacc.map(function(v) return v + 1 end, i)
        end, { lacc.fromtable({ { 1, 2 }, { 3, -4 } }, "f64"), zero, zero, zero,
               lacc.unit(lacc.constant(0, "i64")) })
      local text = lacc.explain(p, { backend = b == "interp" and "cpu" or b })
      assert.truthy(text:find("= fold, fold1, fold (one pass over the same rows), rank 0 f64", 1, true), text)
    end)
  end)
end

for _, b in ipairs(H.backends) do
  describe("sibling maps in one loop on " .. b, function()
    it("several results over one array's rows, of other types, ranks 1 and 2, a sum type " ..
       "among them: one kernel, every element as apart and as a Lua loop", function()
      H.seed(47)
      for _, shape in ipairs { { 0 }, { 1 }, { 300 }, { 1001 }, { 7, 13 }, { 0, 4 } } do
        local n = H.size(shape)
        local t = {}
        for i = 1, n do t[i] = H.randint(-20, 20) end
        local flat = lacc.fromtable(t, "i32")
        local xs = #shape == 1 and flat or lacc.run(lacc.reshape(shape, flat))
        local Maybe = lacc.Maybe("i32")
        local p = {
          lacc.map(function(x) return x * 3 end, xs),
          lacc.map(function(x) return lacc.cast(x, "f64") / 4 end, xs),
          lacc.map(function(x) return lacc.cond(lacc.gt(x, 0), Maybe.Just(x), Maybe.Nothing()) end, xs),
          lacc.map(function(x) return lacc.tuple(x, lacc.lt(x, 0)) end, xs),
        }
        local on = { lacc.run(p, { backend = b }) }
        local off = { lacc.run(p, { backend = b, hfuse = false }) }
        for k = 1, #p do assert.are.same(off[k]:totable(), on[k]:totable()) end
        local a1, a2, a3, a4 = flat, lacc.run(lacc.reshape({ n }, on[2])), lacc.run(lacc.reshape({ n }, on[3])),
                               lacc.run(lacc.reshape({ n }, on[4]))
        local r1 = lacc.run(lacc.reshape({ n }, on[1]))
        for i = 1, n do
          local x = a1[i]
          assert.are.equal(x * 3, r1[i])
          assert.are.equal(x / 4, a2[i])
          if x > 0 then assert.are.same({ tag = "Just", x }, a3[i]) else assert.are.same({ tag = "Nothing" }, a3[i]) end
          assert.are.same({ x, x < 0 }, a4[i])
        end
        local _, st = lacc.explain(p, { backend = b == "interp" and "cpu" or b })
        assert.are.equal(1, st.kernels)
        local _, st_off = lacc.explain(p, { backend = b == "interp" and "cpu" or b, hfuse = false })
        assert.are.equal(4, st_off.kernels)
      end
    end)

    it("a map's bad index in a merged loop reports the same element and words", function()
      same_error(b, function(xs, ys)
        return { lacc.map(function(x) return x + 1 end, xs), lacc.map(function(x) return ys[x] end, xs) }
      end)
    end)
  end)
end

for _, b in ipairs(H.backends) do
  describe("a map both returned and folded on " .. b, function()
    it("is written by the folds' loop (a dot product of the map with itself too, the map " ..
       "scaled by a rank-0 array's value): one kernel, the map and the folds as apart and " ..
       "as a Lua loop", function()
      H.seed(48)
      local k = lacc.unit(lacc.constant(2, "f64"))
      for _, n in ipairs(SIZES) do
        local t = data(n, "int")
        local xs = lacc.fromtable(t, "f64")
        local m = lacc.map(function(x) return x * x - lacc.the(k) end, xs)
        local p = { m, lacc.sum(m), lacc.sum(lacc.map(function(x) return x * 3 end, m)),
                    lacc.sum(lacc.zipWith(function(u, v) return u * v end, m, m)) }
        local on = { lacc.run(p, { backend = b }) }
        local off = { lacc.run(p, { backend = b, hfuse = false }) }
        assert.are.same(off[1]:totable(), on[1]:totable())
        local s, s2 = 0, 0
        for i = 1, n do
          local v = t[i] * t[i] - 2
          assert.are.equal(v, on[1][i])
          s, s2 = s + v, s2 + v * v
        end
        assert.are.equal(s, on[2]:get())
        assert.are.equal(3 * s, on[3]:get())
        assert.are.equal(s2, on[4]:get())
        for i = 2, 4 do assert.are.equal(bits(off[i]:get()), bits(on[i]:get())) end
        local text, st = lacc.explain(p, { backend = b == "interp" and "cpu" or b })
        assert.are.equal(1, st.kernels)
        assert.truthy(text:find("writes a%d+ too, rank 1 f64"), text)
        local _, soff = lacc.explain(p, { backend = b == "interp" and "cpu" or b, hfuse = false })
        assert.are.equal(4, soff.kernels)
      end
    end)

    it("fold1 (an integer maximum, per-lane accumulators) and float sums with NaN: bit for " ..
       "bit as apart", function()
      H.seed(49)
      for _, n in ipairs { 1, 7, 1000, 70001 } do
        local t = data(n, "special")
        local xs = lacc.fromtable(t, "f32")
        local k = lacc.map(function(x) return lacc.cast(lacc.cond(lacc.isnan(x), 0, x) * 100, "i32") end, xs)
        local p = { k, lacc.fold1(function(a, c) return lacc.max(a, c) end, k) }
        local on = { lacc.run(p, { backend = b }) }
        local off = { lacc.run(p, { backend = b, hfuse = false }) }
        assert.are.same(off[1]:totable(), on[1]:totable())
        assert.are.equal(off[2]:get(), on[2]:get())
        local mx = -math.huge
        for i = 1, n do mx = math.max(mx, on[1][i]) end
        assert.are.equal(mx, on[2]:get())
        local f = lacc.map(function(x) return x * 0.5 end, xs)
        local q = { f, lacc.sum(f) }
        on, off = { lacc.run(q, { backend = b }) }, { lacc.run(q, { backend = b, hfuse = false }) }
        assert.are.equal(bits(off[2]:get()), bits(on[2]:get()))
        local a1, a2 = on[1]:totable(), off[1]:totable()
        for i = 1, n do assert.are.equal(bits(a2[i]), bits(a1[i])) end
      end
    end)

    it("a bad index in the map reports the same element and words", function()
      same_error(b, function(xs, ys)
        local m = lacc.map(function(x) return ys[x] end, xs)
        return { m, lacc.sum(m) }
      end)
    end)

    -- (in a compiled function the flatten reads its array's size at run time, as in an
    -- awhile's body; built on host arrays of known shape it is a reshape to a constant
    -- count, whose check lacc cannot prove passes, and the fold stays a loop of its own)
    it("a sum and a maximum of every element of a map of rank 2 and itself, in a compiled " ..
       "function: one kernel, as apart and as a Lua loop", function()
      H.seed(51)
      local function f(xs, k)
        local m = lacc.map(function(x) return x * k - 1 end, xs)
        local squares = lacc.flatten(lacc.zipWith(function(u, v) return u * v end, m, m))
        return m, lacc.sum(squares), lacc.fold(function(a, c) return lacc.max(a, c) end,
                                               lacc.constant(-1, "f64"), squares)
      end
      local on_f = lacc.compile(f, { backend = b })
      local off_f = lacc.compile(f, { backend = b, hfuse = false })
      for _, sh in ipairs { { 0, 5 }, { 3, 0 }, { 1, 1 }, { 7, 13 }, { 300, 301 } } do
        local n = sh[1] * sh[2]
        local t = data(n, "int")
        local xs = lacc.run(lacc.reshape(sh, lacc.fromtable(t, "f64")))
        local on, off = { on_f(xs, 3) }, { off_f(xs, 3) }
        assert.are.same(off[1]:totable(), on[1]:totable())
        local got = lacc.run(lacc.flatten(on[1])):totable()
        local s, mx = 0, -1
        for i = 1, n do
          local v = t[i] * 3 - 1
          assert.are.equal(v, got[i])
          s, mx = s + v * v, math.max(mx, v * v)
        end
        assert.are.equal(s, on[2]:get())
        assert.are.equal(mx, on[3]:get())
        for i = 2, 3 do assert.are.equal(bits(off[i]:get()), bits(on[i]:get())) end
      end
      local p = lacc.awhile(function(_, i) return lacc.lt(i, 1) end,
        function(xs, i)
          local m, s = f(xs, 3)
          return lacc.map(function(x) return x + lacc.the(s) end, m), lacc.map(function(v) return v + 1 end, i)
        end, { lacc.fromtable({ { 1, 2 }, { 3, 4 } }, "f64"), lacc.unit(lacc.constant(0, "i64")) })
      local text = lacc.explain(p, { backend = b == "interp" and "cpu" or b })
      assert.truthy(text:find("writes a%d+ too, rank 2 f64"), text)
      -- m = {2, 5, 8, 11}: sum of squares 214
      assert.are.same({ { 216, 219 }, { 222, 225 } }, lacc.run(p, { backend = b }):totable())
    end)

    it("float sums with NaN of a flattened map folded with itself and another array: bit " ..
       "for bit as apart", function()
      H.seed(52)
      local function f(xs, ys)
        local m = lacc.zipWith(function(x, y) return x * 0.5 + y end, xs, ys)
        return m, lacc.sum(lacc.flatten(lacc.zipWith(function(a, c) return a * a - c end, m, ys)))
      end
      local on_f = lacc.compile(f, { backend = b })
      local off_f = lacc.compile(f, { backend = b, hfuse = false })
      for _, sh in ipairs { { 1, 1 }, { 3, 333 }, { 270, 259 } } do
        local n = sh[1] * sh[2]
        local t, u = data(n, "special"), data(n, "finite")
        local xs = lacc.run(lacc.reshape(sh, lacc.fromtable(t, "f32")))
        local ys = lacc.run(lacc.reshape(sh, lacc.fromtable(u, "f32")))
        local on, off = { on_f(xs, ys) }, { off_f(xs, ys) }
        assert.are.equal(bits(off[2]:get()), bits(on[2]:get()))
        local a1 = lacc.run(lacc.flatten(on[1])):totable()
        local a2 = lacc.run(lacc.flatten(off[1])):totable()
        for i = 1, n do assert.are.equal(bits(a2[i]), bits(a1[i])) end
      end
    end)

    it("a fold whose rows may raise an error stays at its place: the first error is the " ..
       "one apart", function()
      same_error(b, function(xs, ys)
        local m = lacc.map(function(x) return x * 2 end, xs)
        return { m, lacc.map(function(x) return ys[x] end, xs),
                 lacc.sum(lacc.map(function(x) return lacc.idiv(10, x - x) end, m)) }
      end)
    end)

    it("stays two loops where the fold also reads a shorter array beside the map, or the " ..
       "map reads an array at an index", function()
      local t = { 1, 2, 3, 4, 5, 6 }
      local xs = lacc.reshape({ 2, 3 }, lacc.fromtable(t, "i64"))
      local ys = lacc.fromtable({ { 10, 20 }, { 30, 40 } }, "i64")
      local m = lacc.map(function(x) return x * 2 end, xs)
      -- the zip's extents are {2, 2}: the fold reads 4 of m's 6 elements
      local p = { m, lacc.sum(lacc.flatten(lacc.zipWith(function(a, c) return a * c end, m, ys))) }
      local on = { lacc.run(p, { backend = b }) }
      assert.are.same({ { 2, 4, 6 }, { 8, 10, 12 } }, on[1]:totable())
      assert.are.equal(2 * 10 + 4 * 20 + 8 * 30 + 10 * 40, on[2]:get())
      local text, st = lacc.explain(p, { backend = b == "interp" and "cpu" or b })
      assert.falsy(text:find("writes a%d+ too"), text)
      assert.are.equal(2, st.kernels)
      local v = lacc.fromtable({ 5, 6, 7 }, "i64")
      local q = lacc.imap(function(i, j, x) return x + v[j] end, xs)
      local pq = { q, lacc.sum(lacc.flatten(lacc.zipWith(function(a, c) return a * c end, q, q))) }
      local r = { lacc.run(pq, { backend = b }) }
      assert.are.same({ { 6, 8, 10 }, { 9, 11, 13 } }, r[1]:totable())
      assert.are.equal(36 + 64 + 100 + 81 + 121 + 169, r[2]:get())
      assert.are.equal(2, select(2, lacc.explain(pq, { backend = b == "interp" and "cpu" or b })).kernels)
    end)
  end)
end

describe("sibling folds that stay apart", function()
  local xs = lacc.fromtable({ 1, 2, 3, 4, 5, 6 }, "f32")
  local function kernels(ps) return select(2, lacc.explain(ps, { backend = "cpu" })).kernels end

  it("a fold that reads the other's result (a softmax's denominator after its maximum)", function()
    local mx = lacc.maximum(xs)
    local den = lacc.sum(lacc.map(function(x) return lacc.exp(x - lacc.the(mx)) end, xs))
    assert.are.equal(2, kernels({ mx, den }))
    local r = { lacc.run({ mx, den }) }
    local want = 0
    for i = 1, 6 do want = want + math.exp(i - 6) end
    assert.is_true(H.same(want, r[2]:get(), 1e-6))
  end)

  it("a scan beside a fold it cannot share a loop with says why", function()
    local m = lacc.fromtable({ { 1, 2, 3 }, { 4, 5, 6 } }, "i32")
    -- the fold after the scan divides integers: planned where the scan is, its error
    -- could come before the steps between them
    local p = { lacc.scanl(function(a, c) return a + c end, 0, m),
                lacc.fold(function(a, c) return lacc.idiv(a, c) end, lacc.constant(7, "i32"), m, 2) }
    local text = lacc.explain(p, { backend = "cpu" })
    assert.truthy(text:find("not in one pass with a fold over the same rows: the later one's " ..
                            "rows, start value or function may raise an error", 1, true), text)
    -- a scan over other rows than the fold's: nothing to say
    text = lacc.explain({ lacc.scanl(function(a, c) return a + c end, 0, m), lacc.sum(xs) },
                        { backend = "cpu" })
    assert.falsy(text:find("not in one pass", 1, true), text)
  end)

  it("folds over arrays of other lengths", function()
    local ys = lacc.fromtable({ 1, 2, 3 }, "f32")
    assert.are.equal(2, kernels({ lacc.sum(xs), lacc.sum(ys) }))
  end)

  it("a fold with a start value beside one without, and a float maximum in the other " ..
     "order beside a sum, say why in explain", function()
    local text = lacc.explain({ lacc.sum(xs), lacc.fold1(function(a, c) return a + c end, xs) },
                              { backend = "cpu" })
    assert.truthy(text:find("not in one pass with a fold over the same rows: one has a start " ..
                            "value, the other not", 1, true), text)
    -- a float max with the accumulator second keeps a NaN element: in order only
    text = lacc.explain({ lacc.sum(xs), lacc.fold(function(a, c) return lacc.max(c, a) end,
                                                  lacc.constant(0, "f32"), xs) }, { backend = "cpu" })
    assert.truthy(text:find("a float minimum or maximum folds its rows in order, the other in " ..
                            "chunks", 1, true), text)
    -- with it first, in chunks and in lanes beside the sum's: one loop
    local both_ = { lacc.sum(xs), lacc.fold(function(a, c) return lacc.max(a, c) end,
                                            lacc.constant(0, "f32"), xs) }
    assert.are.equal(1, kernels(both_))
    -- a function that is not one primitive folds in chunks without lanes
    text = lacc.explain({ lacc.sum(xs), lacc.fold(function(a, c) return a + c + 1 end,
                                                  lacc.constant(0, "f32"), xs) }, { backend = "cpu" })
    assert.truthy(text:find("one folds with per-lane accumulators, the other not", 1, true), text)
    text = lacc.explain({ lacc.sum(xs), lacc.sum(lacc.map(function(x) return lacc.cast(x, "f64") end,
                                                          xs)) }, { backend = "cpu" })
    assert.truthy(text:find("per-lane accumulators of other widths", 1, true), text)
  end)

  it("maps of other shapes (one over a reshape of the other's array) and folds of arrays " ..
     "that only meet some of the same", function()
    local m = lacc.fromtable({ 1, 2, 3, 4, 5, 6 }, "f32")
    assert.are.equal(2, kernels({ lacc.map(sq, m), lacc.map(sq, lacc.reshape({ 2, 3 }, m)) }))
    local ys = lacc.fromtable({ 1, 2, 3, 4, 5, 6, 7 }, "f32")
    assert.are.equal(2, kernels({ lacc.sum(xs), lacc.sum(lacc.zipWith(function(a, c) return a * c end, xs, ys)) }))
    -- the same set of arrays in another order: one loop
    assert.are.equal(1, kernels({ lacc.zipWith(function(a, c) return a - c end, xs, ys),
                                  lacc.zipWith(function(a, c) return a * c end, ys, xs) }))
    local r = { lacc.run({ lacc.zipWith(function(a, c) return a - c end, xs, ys),
                           lacc.zipWith(function(a, c) return a * c end, ys, xs) }) }
    assert.are.same({ 0, 0, 0, 0, 0, 0 }, r[1]:totable())
    assert.are.same({ 1, 4, 9, 16, 25, 36 }, r[2]:totable())
  end)

  it("a returned map folded beside a shorter array (zipWith): the map gets its own kernel " ..
     "and all of it is written", function()
    local m = lacc.map(sq, xs)
    local ys = lacc.fromtable({ 1, 10, 100 }, "f32")
    local p = { lacc.sum(lacc.zipWith(function(a, c) return a * c end, m, ys)), m }
    assert.are.equal(2, kernels(p))
    for _, b in ipairs(H.backends) do
      local s, r = lacc.run(p, { backend = b })
      assert.are.equal(1 + 40 + 900, s:get(), b)
      assert.are.same({ 1, 4, 9, 16, 25, 36 }, r:totable(), b)
    end
  end)

  it("a returned map whose fold's start value reads an array: the map gets its own kernel", function()
    local m = lacc.map(sq, xs)
    local z = lacc.sum(lacc.fromtable({ 4, 6 }, "f32"))   -- computed by the program
    local p = { m, lacc.fold(function(a, c) return a + c end, lacc.the(z), m) }
    assert.are.equal(3, kernels(p))
    local r = { lacc.run(p) }
    assert.are.equal(101, r[2]:get())
  end)

  it("an empty array: a float maximum (fold1) beside a sum (fold) is one loop, and the " ..
     "error names the maximum, as apart", function()
    local e = lacc.fromtable({}, "f32")
    local p = { lacc.sum(e),
                lacc.maximum(e) }   -- the line the error names
    local line = debug.getinfo(1, "l").currentline - 1
    assert.are.equal(1, kernels(p))
    for _, b in ipairs(H.backends) do
      for _, hf in ipairs { true, false } do
        local ok, err = pcall(lacc.run, p, { backend = b, hfuse = hf })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("fold1: the innermost dimension is empty (at " ..
                                         "spec/kernels/hfuse_spec.lua:" .. line .. ")", 1, true),
                      b .. ": " .. tostring(err))
      end
    end
  end)

  it("merged folds are listed together in explain", function()
    local text = lacc.explain({ lacc.sum(xs), lacc.sum(lacc.map(sq, xs)) }, { backend = "cpu" })
    assert.truthy(text:find("kernel 1: a%d+, a%d+ = fold, fold %(one pass over the same rows%)"), text)
  end)
end)

-- Folds along rows (rank 1 and more results): siblings over the same rows in one loop,
-- every element of every result bit for bit what the fold gives alone, on shapes that take
-- each path (many short rows, a few long ones past two partials' grain, no rows, empty
-- rows); and a map kept and folded along its rows (a softmax's exponentials) written by
-- the fold's loop.
local function same_arrays(on, off, what)
  assert.are.equal(#off, #on, what)
  for i = 1, #off do
    local a, c = off[i]:totable(), on[i]:totable()
    local function flat(t, out)
      for _, v in ipairs(t) do
        if type(v) == "table" then flat(v, out) else out[#out + 1] = bits(v) end
      end
      return out
    end
    assert.are.same(flat(a, {}), flat(c, {}), what .. " result " .. i)
  end
end

for _, b in ipairs(H.backends) do
  describe("sibling folds along rows on " .. b, function()
    it("sum, maximum, minimum, a count and fold1 of a maximum: one kernel, each as alone", function()
      H.seed(43)
      for _, shape in ipairs { { 1000, 7 }, { 3, 70001 }, { 64, 64 }, { 2, 130 }, { 0, 5 },
                               { 2, 3, 5 } } do
        local n = 1
        for _, e in ipairs(shape) do n = n * e end
        local xs = lacc.reshape(shape, lacc.fromtable(data(n, "nan"), "f32"))
        local r = #shape
        local cnt = lacc.map(function(x) return lacc.cond(lacc.gt(x, 0), lacc.constant(1, "i32"),
                                                           lacc.constant(0, "i32")) end, xs)
        local ps = { lacc.sum(xs, r), lacc.maximum(xs, r), lacc.minimum(xs, r),
                     lacc.sum(lacc.map(sq, xs), r),
                     lacc.fold(function(a, c) return lacc.max(a, c) end, lacc.constant(-1 / 0, "f32"), xs) }
        local ints = { lacc.sum(cnt, r), lacc.product(lacc.map(function(x) return lacc.cast(x, "i32") end, xs), r) }
        for _, set in ipairs { ps, ints } do
          local on = { lacc.run(set, { backend = b }) }
          local off = { lacc.run(set, { backend = b, hfuse = false }) }
          same_arrays(on, off, table.concat(shape, "x"))
          local _, st = lacc.explain(set, { backend = b == "interp" and "cpu" or b })
          assert.are.equal(1, st.kernels, table.concat(shape, "x"))
        end
        -- the plain loop's answer for the sum of positives' count
        local c = lacc.run(lacc.sum(cnt, r), { backend = b }):totable()
        if r == 2 and shape[1] > 0 then
          local t = lacc.run(xs):totable()
          for i = 1, shape[1] do
            local want = 0
            for j = 1, shape[2] do
              if t[i][j] > 0 then want = want + 1 end
            end
            assert.are.equal(want, c[i])
          end
        end
      end
    end)

    it("a matrix's total beside its row sums: two kernels (other ranks), both right", function()
      local xs = lacc.reshape({ 2, 3 }, lacc.fromtable({ 1, 2, 3, 4, 5, 6 }, "f32"))
      local p = { lacc.sum(xs), lacc.sum(xs, 2), lacc.maximum(xs, 2) }
      local _, st = lacc.explain(p, { backend = b == "interp" and "cpu" or b })
      assert.are.equal(2, st.kernels)
      local total, rows, top = lacc.run(p, { backend = b })
      assert.are.equal(21, total:get())
      assert.are.same({ 6, 15 }, rows:totable())
      assert.are.same({ 3, 6 }, top:totable())
    end)

    it("rows of an array computed from its index stay apart (alone, each folds in tiles), " ..
       "and explain says why", function()
      local g = lacc.generate({ 64, 50 }, function(i, j) return lacc.cast(i * j - 7 * j, "f32") end)
      local p = { lacc.sum(g, 2), lacc.maximum(g, 2) }
      local text, st = lacc.explain(p, { backend = b == "interp" and "cpu" or b })
      assert.are.equal(2, st.kernels)
      assert.truthy(text:find("not in one pass with a fold over the same rows: an array the rows " ..
                              "are read from is computed from its index", 1, true), text)
      local sums, tops = lacc.run(p, { backend = b })
      local s, t = sums:totable(), tops:totable()
      for i = 1, 64 do   -- row i: (i - 7) j for j = 1 .. 50
        assert.are.equal((i - 7) * 1275, s[i])
        assert.are.equal(i >= 7 and (i - 7) * 50 or (i - 7), t[i])
      end
    end)

    it("an index error in rows folded together: the same element and message as apart", function()
      local function rows(xs, ys)
        local m = lacc.reshape({ 5, 1 }, xs)
        local at = lacc.map(function(x) return ys[x] end, m)
        return { lacc.sum(at, 2), lacc.fold(function(u, v) return lacc.max(u, v) end,
                                            lacc.constant(-1000, "i32"), at) }
      end
      same_error(b, rows)
      local p = rows(lacc.fromtable({ 1, 2, 3, 4, 5 }, "i32"), lacc.fromtable({ 10, 20, 30 }, "i32"))
      assert.are.equal(1, select(2, lacc.explain(p, { backend = "cpu" })).kernels)
    end)

    it("empty rows: the sums are 0 and a maximum is the error it is alone", function()
      local xs = lacc.reshape({ 4, 0 }, lacc.fromtable({}, "f32"))
      assert.are.same({ 0, 0, 0, 0 }, lacc.run(lacc.sum(xs, 2), { backend = b }):totable())
      local p = { lacc.sum(xs, 2), lacc.maximum(xs, 2) }
      local ok1, e1 = pcall(lacc.run, p, { backend = b })
      local ok2, e2 = pcall(lacc.run, p, { backend = b, hfuse = false })
      assert.is_false(ok1)
      assert.is_false(ok2)
      assert.are.equal(tostring(e2), tostring(e1))
    end)

    it("a softmax over rows: the exponentials, which read x and the maxima through indices, " ..
       "written by a loop of their own (4 kernels; it vectorises), every element as apart", function()
      for _, shape in ipairs { { 5, 70001 }, { 300, 33 }, { 1, 1 }, { 0, 4 } } do
        local n = shape[1] * shape[2]
        local src = {}
        for i = 1, n do src[i] = H.f32(((i * 7919) % 101) / 7 - 5) end
        local x = lacc.reshape(shape, lacc.fromtable(src, "f32"))
        local mx = lacc.maximum(x, 2)
        local e = lacc.generate(shape, function(i, j) return lacc.exp(x:at(i, j) - mx[i]) end)
        local s = lacc.sum(e, 2)
        local sm = lacc.generate(shape, function(i, j) return e:at(i, j) / s[i] end)
        local _, st = lacc.explain(sm, { backend = b == "interp" and "cpu" or b })
        local _, st_off = lacc.explain(sm, { backend = b == "interp" and "cpu" or b, hfuse = false })
        assert.are.equal(4, st.kernels)
        assert.are.equal(4, st_off.kernels)
        -- the same exponentials of a map (no index): written by their sum's loop
        local em = lacc.map(lacc.exp, x)
        local _, sw = lacc.explain({ em, lacc.sum(em, 2) }, { backend = b == "interp" and "cpu" or b })
        assert.are.equal(1, sw.kernels)
        local on = lacc.run(sm, { backend = b })
        local off = lacc.run(sm, { backend = b, hfuse = false })
        same_arrays({ on }, { off }, table.concat(shape, "x"))
        if n > 0 then   -- a row sums to 1, each element near a plain loop's
          local t, i = on:totable(), shape[1]
          local row, m, z = {}, -1 / 0, 0
          for j = 1, shape[2] do row[j] = src[(i - 1) * shape[2] + j]; m = math.max(m, row[j]) end
          for j = 1, shape[2] do z = z + math.exp(row[j] - m) end
          local total = 0
          for j = 1, shape[2] do
            total = total + t[i][j]
            assert.truthy(math.abs(t[i][j] - math.exp(row[j] - m) / z) <= 1e-5, j)
          end
          assert.truthy(math.abs(total - 1) < 1e-3, total)
        end
      end
    end)
  end)
end

-- Each backend's error (of backends, default all) is the interpreter's and the one with
-- the merge off.
local function errors_as_apart(ps, backends)
  for _, b in ipairs(backends or H.backends) do
    local ok1, e1 = pcall(lacc.run, ps, { backend = b })
    local ok2, e2 = pcall(lacc.run, ps, { backend = b, hfuse = false })
    local ok3, e3 = pcall(lacc.run, ps, { backend = "interp" })
    assert.is_false(ok1)
    assert.is_false(ok2)
    assert.is_false(ok3)
    assert.are.equal(tostring(e3), tostring(e1), b)
    assert.are.equal(tostring(e2), tostring(e1), b)
  end
end

-- A scan and a fold (or a group of them) over the same rows (hfuse.c pair_scans,
-- lower_fold.c lw_step_fold_scan): where both go row by row, one loop over the rows folds
-- each row with the fold's own code, then scans it; few long rows (chunks) run apart.
-- Every result bit for bit as with the merge off, and against plain Lua loops.
for _, b in ipairs(H.backends) do
  describe("a scan and a fold over the same rows on " .. b, function()
    local add = function(a, c) return a + c end
    local shapes = { { 3, 5 }, { 5, 0 }, { 0, 4 }, { 1, 1 }, { 37, 1001 }, { 2, 70001 }, { 4, 3, 33 } }
    it("scanl, scanl1, scanr, scanr1 beside sum, maximum and an ordered fold: each as apart", function()
      H.seed(61)
      for _, shape in ipairs(shapes) do
        local n = H.size(shape)
        local r = #shape
        local t = {}
        for i = 1, n do t[i] = H.randint(-9, 9) / 4 end
        local xs = lacc.run(lacc.reshape(shape, n > 0 and lacc.fromtable(t, "f32") or
                                                 lacc.fill({ 0 }, lacc.constant(0, "f32"))))
        local m = lacc.map(function(x) return x * 2 end, xs)
        local scans = { lacc.scanl(add, 0, m), lacc.scanl1(add, m), lacc.scanr(add, 0, m),
                        lacc.scanr1(function(a, c) return lacc.max(a, c) end, m) }
        for k, sc in ipairs(scans) do
          local folds = { lacc.sum(m, r), lacc.fold(function(a, c) return a * 0.5 + c end, lacc.constant(1, "f32"), m, r) }
          if shape[r] > 0 then folds[#folds + 1] = lacc.maximum(m, r) end
          local ps = { sc, table.unpack(folds) }
          if shape[r] == 0 and k % 2 == 0 and n == 0 and H.size(shape) == 0 and shape[1] > 0 then
            ps = { folds[1] }   -- scanl1 / scanr1 of empty rows: an error of their own
          end
          local ok_on, on = pcall(function() return { lacc.run(ps, { backend = b }) } end)
          local ok_off, off = pcall(function() return { lacc.run(ps, { backend = b, hfuse = false }) } end)
          assert.are.equal(ok_off, ok_on, table.concat(shape, "x") .. " scan " .. k)
          if ok_on then
            for i = 1, #ps do
              local a, c = on[i]:totable(), off[i]:totable()
              assert.are.same(c, a, table.concat(shape, "x") .. " scan " .. k .. " result " .. i)
            end
            if r == 2 and shape[1] > 0 and shape[2] > 0 then   -- the sums: a plain loop (exact)
              local sums = on[2]:totable()
              for i = 1, shape[1] do
                local want = 0
                for j = 1, shape[2] do want = want + 2 * t[(i - 1) * shape[2] + j] end
                assert.are.equal(want, sums[i])
              end
            end
          else
            assert.are.equal(tostring(off), tostring(on))
          end
          local text = lacc.explain(ps, { backend = b == "interp" and "cpu" or b })
          if #ps > 1 then
            assert.truthy(text:find("each row folded then scanned", 1, true), text)
          end
        end
      end
    end)

    it("a cumulative sum and the total of one array: the total as a plain loop has it", function()
      for _, n in ipairs { 0, 1, 7, 1000, 70001 } do
        local t = {}
        for i = 1, n do t[i] = (i * 37) % 11 - 5 end
        local xs = n > 0 and lacc.fromtable(t, "i32") or lacc.run(lacc.fill({ 0 }, lacc.constant(0, "i32")))
        local c, s = lacc.run({ lacc.scanl1(add, xs), lacc.sum(xs) }, { backend = b })
        local want, run = 0, {}
        for i = 1, n do want = want + t[i]; run[i] = want end
        assert.are.equal(want, s:get())
        H.check_array(c, run)
      end
    end)

    it("a fold1 over empty rows beside a scan: its error, as apart", function()
      local e = lacc.run(lacc.fill({ 3, 0 }, lacc.constant(0, "f32")))
      local ys = lacc.fromtable({ 1, 2 }, "f32")
      for _, ps in ipairs { { lacc.scanl(add, 0, e), lacc.maximum(e, 2) },
                            { lacc.scanl(add, 0, e), lacc.generate({ 3 }, function(i) return ys[i] end),
                              lacc.maximum(e, 2) },
                            { lacc.maximum(e, 2), lacc.scanl(add, 0, e) } } do
        errors_as_apart(ps, { b })
      end
    end)
  end)
end

-- A group runs where its first member would alone: an error a later member would raise
-- alone must still come after the steps between them. A fold1's error on empty rows is
-- reported by a check at its own place (lower_fold.c: lw_fold_reached); a member whose
-- rows or function may raise an error of their own stays apart.

describe("errors of sibling folds, where each raises them alone", function()
  local ys = lacc.fromtable({ 1, 2, 3 }, "f32")
  local function empty(t) return lacc.generate({ 0 }, function(i) return lacc.cast(i, t) end) end

  it("a float maximum after a sum over empty rows, a failing read between: the read's error; one loop", function()
    local e = empty("f32")
    local ps = { lacc.sum(e), lacc.generate({ 5 }, function(i) return ys[i] end), lacc.maximum(e) }
    errors_as_apart(ps)
    local text, st = lacc.explain(ps, { backend = "cpu" })
    assert.are.equal(2, st.kernels)
    assert.truthy(text:find("fold, fold1 (one pass over the same rows)", 1, true), text)
    assert.truthy(text:find("check: fold1's rows are not empty, here where it comes alone", 1, true), text)
    -- nothing between them: no check, the group reports the maximum's error
    local ps2 = { lacc.sum(e), lacc.maximum(e) }
    errors_as_apart(ps2)
    text = lacc.explain(ps2, { backend = "cpu" })
    assert.falsy(text:find("check:", 1, true), text)
  end)

  it("the same with rows: a deferred group folds rows of every length right, and reports empty rows at the maximum", function()
    H.seed(48)
    for _, shape in ipairs { { 3, 0 }, { 0, 4 }, { 0, 0 }, { 5, 1 }, { 7, 130 } } do
      local n = shape[1] * shape[2]
      local xs = lacc.reshape(shape, lacc.run(lacc.generate({ n }, function(i)
        return lacc.cast(lacc.imod(i * 7, 101) - 50, "f32") end)))
      local bad = lacc.generate({ 4 }, function(i) return ys[i] end)
      local ps = { lacc.sum(xs, 2), bad, lacc.maximum(xs, 2), lacc.minimum(xs, 2) }
      if shape[2] == 0 and shape[1] > 0 then
        errors_as_apart(ps)
        errors_as_apart({ lacc.sum(xs, 2), lacc.maximum(xs, 2), bad })
      else
        local good = { lacc.sum(xs, 2), lacc.map(function(x) return x * 2 end, ys), lacc.maximum(xs, 2),
                       lacc.minimum(xs, 2) }
        for _, b in ipairs(H.backends) do
          local on = { lacc.run(good, { backend = b }) }
          local ref = { lacc.run(good, { backend = "interp" }) }
          for k = 1, 4 do assert.are.same(ref[k]:totable(), on[k]:totable(), b .. " result " .. k) end
        end
      end
    end
  end)

  it("a fold1 that writes the map it folds, over empty rows: its error where it comes alone", function()
    local a4 = lacc.generate({ 7 }, function(i) return lacc.cast(i, "i32") end)
    local a7 = empty("i32")
    local a8 = lacc.stencil2(function(x1, x2, x3, y1, y2, y3) return x1 + x2 + y3 end, "mirror", a4, "clamp", a7)
    local function m() return lacc.map(function(x) return x * 3 + 1 end, a8) end
    errors_as_apart({ lacc.argmax(a8, 1), lacc.fold1(function(a, b) return lacc.max(a, b) end, m()),
                      lacc.fold(function(a, b) return lacc.min(a, b) end, lacc.constant(5, "i32"), m()) })
    -- a kept map folded by a maximum: written by the fold's loop; empty: the maximum's error
    local k = lacc.map(function(x) return x + 1 end, a7)
    errors_as_apart({ lacc.generate({ 5 }, function(i) return ys[i] end), k, lacc.maximum(k) })
  end)

  it("a fold whose function divides integers stays apart, and an error between comes first", function()
    local xs = lacc.fromtable({ 1, 2, 0, 4 }, "i32")
    local ws = lacc.fromtable({ 1, 2 }, "f32")
    local ps = { lacc.fold(function(a, c) return a * 2 + c end, lacc.constant(0, "i32"), xs),
                 lacc.generate({ 5 }, function(i) return ws[i] end),
                 lacc.fold(function(a, c) return lacc.idiv(a, c) end, lacc.constant(100, "i32"), xs) }
    errors_as_apart(ps)
    local text, st = lacc.explain(ps, { backend = "cpu" })
    assert.are.equal(3, st.kernels)
    assert.truthy(text:find("not in one pass with a fold over the same rows: its rows, start value " ..
                            "or combining function may raise an error", 1, true), text)
  end)
end)

-- Float minimum and maximum split into chunks (lower_fold.c, accumulate_skipping): rows
-- of 70001 (past two partials' grain) with NaNs where chunks may start (every other
-- element, either parity), a NaN first element, NaN blocks, signed zeros, a NaN start
-- value; both operand orders (the other order is folded in order). Every result is the
-- interpreter's (an in-order loop) bit for bit, the sign of a zero included.
for _, b in ipairs(H.backends) do
  if b ~= "interp" then
    describe("float minimum and maximum in chunks on " .. b, function()
      it("give the in-order result bit for bit", function()
        local n, nan = 70001, 0 / 0
        local function mk(f)
          local t = {}
          for i = 1, n do t[i] = f(i) end
          return t
        end
        local cases = {
          mk(function(i) return i == 1 and nan or (i % 1000) - 500 end),
          mk(function(i) return i % 2 == 1 and nan or (i == 50000 and -9999 or i % 1000) end),
          mk(function(i) return (i % 2 == 0 and i > 2) and nan or (i == 50001 and -9999 or i % 1000) end),
          mk(function(i) return (i > 30000 and i < 60000) and nan or ((i * 7919) % 10007) * 0.5 - 2000 end),
          mk(function(i) return i % 3 == 0 and -0.0 or (i % 3 == 1 and 0.0 or 5) end),
          mk(function(i) return i == n and 3 or nan end),
        }
        for c, t in ipairs(cases) do
          for _, ty in ipairs { "f32", "f64" } do
            local xs = lacc.fromtable(t, ty)
            local progs = {
              lacc.minimum(xs), lacc.maximum(xs),
              lacc.fold(function(a, x) return lacc.min(a, x) end, lacc.constant(0, ty), xs),
              lacc.fold(function(a, x) return lacc.max(a, x) end, lacc.constant(nan, ty), xs),
              lacc.fold1(function(a, x) return lacc.min(x, a) end, xs),
            }
            local ref = { lacc.run(progs, { backend = "interp" }) }
            local got = { lacc.run(progs, { backend = b }) }
            for k = 1, #progs do
              assert.are.equal(bits(ref[k]:get()), bits(got[k]:get()), ("case %d %s program %d"):format(c, ty, k))
            end
          end
        end
      end)
    end)
  end
end

-- Float minimum and maximum in per-lane accumulators (lower_fold.c, nan_lanes): each lane
-- keeps its element's position, and the lanes give the first element of the least
-- (greatest) value, which only the sign of a zero tells apart. Zeros of both signs at
-- positions where lane order and element order disagree (+0 at 2 in lane 2, -0 at 33 in
-- lane 1 of the second round), at random places in rows of every length around the lane
-- widths, with NaNs and a NaN first element; alone, beside a sum (one loop), with start
-- values, and along the rows of a matrix; bit for bit against the interpreter.
for _, b in ipairs(H.backends) do
  if b ~= "interp" then
    describe("float minimum and maximum in lanes on " .. b, function()
      it("keep the first of equal zeros, whatever lane holds it", function()
        local nan = 0 / 0
        local function progs(xs, ty)
          return {
            lacc.minimum(xs), lacc.maximum(xs), lacc.sum(xs),
            lacc.fold(function(a, x) return lacc.min(a, x) end, lacc.constant(1 / 0, ty), xs),
            lacc.fold(function(a, x) return lacc.max(a, x) end, lacc.constant(0, ty), xs),
            lacc.fold(function(a, x) return lacc.max(a, x) end, lacc.constant(nan, ty), xs),
          }
        end
        local function check(t, ty, what)
          local xs = lacc.fromtable(t, ty)
          local ps = progs(xs, ty)
          local ref = { lacc.run(ps, { backend = "interp" }) }
          for _, hf in ipairs { true, false } do
            local got = { lacc.run(ps, { backend = b, hfuse = hf }) }
            for k = 1, #ps do
              assert.are.equal(bits(ref[k]:get()), bits(got[k]:get()),
                               ("%s %s n=%d program %d hfuse %s"):format(what, ty, #t, k, tostring(hf)))
            end
          end
          if #t >= 6 and #t % 2 == 0 then   -- along the rows of a 2 x n/2 matrix
            local m = lacc.reshape({ 2, math.floor(#t / 2) }, xs)
            local rp = { lacc.minimum(m, 2), lacc.maximum(m, 2) }
            local ref2 = { lacc.run(rp, { backend = "interp" }) }
            local got2 = { lacc.run(rp, { backend = b }) }
            for k = 1, 2 do
              for r = 1, 2 do
                assert.are.equal(bits(ref2[k]:get(r)), bits(got2[k]:get(r)),
                                 ("%s %s rows n=%d program %d row %d"):format(what, ty, #t, k, r))
              end
            end
          end
        end
        for _, ty in ipairs { "f32", "f64" } do
          local t = {}
          for i = 1, 200 do t[i] = 7 end
          t[3], t[34] = 0.0, -0.0              -- 1-based: positions 2 and 33
          check(t, ty, "+0 before -0")
          t[3], t[34] = -0.0, 0.0
          check(t, ty, "-0 before +0")
          for i = 1, 200 do t[i] = -7 end      -- the maximum's zeros
          t[3], t[34] = 0.0, -0.0
          check(t, ty, "max +0 before -0")
          for _, n in ipairs { 1, 2, 31, 32, 33, 63, 64, 65, 66, 100, 129, 257, 1000, 70001 } do
            for rep = 1, (n > 1000 and 2 or 4) do
              t = {}
              for i = 1, n do
                local r = H.rand()
                t[i] = r < 0.05 and nan or r < 0.15 and 0.0 or r < 0.25 and -0.0
                       or (rep % 2 == 0 and 1 or -1) * (1 + H.randint(0, 5))
              end
              if rep == 3 then t[1] = nan end
              check(t, ty, "random")
            end
          end
        end
      end)
    end)
  end
end

-- lacc.run of a table of programs keeps what it made with the table (lua/lacc/run.lua's
-- memo), as it does for one program object: run again, it must still follow the table's
-- contents, the options and the layout.
-- Sibling permutes with one index function (k-means' per-centre sums and counts): one
-- scatter pass, each source element's target computed once.
local function add(u, v) return u + v end
local function sums_and_count(xs, ys, at, k)
  local zeros = lacc.fill({ k }, lacc.constant(0, "f32"))
  local ones = lacc.map(function() return lacc.constant(1, "i32") end, xs)
  return { lacc.permute(add, zeros, at, xs), lacc.permute(add, zeros, at, ys),
           lacc.permute(add, lacc.fill({ k }, lacc.constant(0, "i32")), at, ones) }
end

local function all_same(ps, b)
  local on = { lacc.run(ps, { backend = b }) }
  local off = { lacc.run(ps, { backend = b, hfuse = false }) }
  for i = 1, #ps do
    local a, c = on[i]:totable(), off[i]:totable()
    assert.are.equal(#c, #a)
    for j = 1, #c do assert.are.equal(bits(c[j]), bits(a[j]), "result " .. i .. " target " .. j) end
  end
  return on
end

for _, b in ipairs(H.backends) do
  describe("sibling permutes in one scatter pass on " .. b, function()
    it("per-target sums of two arrays and counts: one kernel, each result as apart and as a " ..
       "Lua loop", function()
      H.seed(71)
      for _, n in ipairs { 0, 1, 7, 1000, 70001 } do for _, k in ipairs { 1, 16, 300 } do
        local tx, ty, tc = data(n, "finite"), data(n, "special"), {}
        for i = 1, n do tc[i] = H.randint(1, k) end
        local xs, ys, cs = lacc.fromtable(tx, "f32"), lacc.fromtable(ty, "f32"), lacc.fromtable(tc, "i32")
        local p = sums_and_count(xs, ys, function(i) return cs[i] end, k)
        local r = all_same(p, b)
        local cnt = {}
        for c = 1, k do cnt[c] = 0 end
        for i = 1, n do cnt[tc[i]] = cnt[tc[i]] + 1 end
        for c = 1, k do assert.are.equal(cnt[c], r[3]:get(c)) end
        local _, s = lacc.explain(p, { backend = b == "interp" and "cpu" or b })
        local _, soff = lacc.explain(p, { backend = b == "interp" and "cpu" or b, hfuse = false })
        assert.are.equal(soff.kernels - 2, s.kernels)   -- three permute kernels, then one
      end end
    end)

    it("sources of other lengths (each run alone, in turn) and ignored elements", function()
      H.seed(72)
      for _, sizes in ipairs { { 10, 3 }, { 0, 70001 }, { 70001, 5000 } } do
        local tx, ty = data(sizes[1], "finite"), data(sizes[2], "finite")
        local xs, ys = lacc.fromtable(tx, "f32"), lacc.fromtable(ty, "f32")
        local function at(i) return lacc.cond(lacc.eq(i % 5, 0), lacc.ignore, i % 7 + 1) end
        local p = { lacc.permute(add, lacc.fill({ 8 }, lacc.constant(0, "f32")), at, xs),
                    lacc.permute(add, lacc.fill({ 8 }, lacc.constant(0, "f32")), at, ys) }
        local r = all_same(p, b)
        local want = { {}, {} }
        for c = 1, 8 do want[1][c], want[2][c] = 0, 0 end
        for s, t in ipairs { tx, ty } do
          for i = 1, #t do
            if i % 5 ~= 0 then want[s][i % 7 + 1] = want[s][i % 7 + 1] + t[i] end
          end
        end
        for s = 1, 2 do for c = 1, 8 do
          assert.is_true(H.same(want[s][c], r[s]:get(c), 1e-3), s .. " " .. c)
        end end
      end
    end)

    it("a bad index, or a target out of bounds, reports the same element and words as apart", function()
      same_error(b, function(xs, ys)
        local function at(i) return ys[xs[i]] % 2 end
        return { lacc.permute(add, lacc.fill({ 2 }, lacc.constant(0, "i32")), at, xs),
                 lacc.permute(add, lacc.fill({ 2 }, lacc.constant(0, "i32")), at, xs) }
      end)
      local xs = lacc.fromtable({ 1, 2, 3, 4, 5 }, "i32")
      local function at(i) return xs[i] end
      local p = { lacc.permute(add, lacc.fill({ 3 }, lacc.constant(0, "i32")), at, xs),
                  lacc.permute(add, lacc.fill({ 3 }, lacc.constant(0, "i32")), at, xs) }
      local ok1, e1 = pcall(lacc.run, p, { backend = b })
      local ok2, e2 = pcall(lacc.run, p, { backend = b, hfuse = false })
      assert.is_false(ok1)
      assert.is_false(ok2)
      assert.are.equal(tostring(e2), tostring(e1))
    end)
  end)
end

describe("sibling permutes that stay apart", function()
  local xs = lacc.fromtable({ 1, 2, 3, 4, 5, 6 }, "i32")
  local zeros = lacc.fill({ 3 }, lacc.constant(0, "i32"))
  local function kernels(p, hfuse)
    return select(2, lacc.explain(p, { backend = "cpu", hfuse = hfuse })).kernels
  end
  it("other index functions", function()
    local p = { lacc.permute(add, zeros, function(i) return i % 3 + 1 end, xs),
                lacc.permute(add, zeros, function(i) return (i + 1) % 3 + 1 end, xs) }
    assert.are.equal(kernels(p, false), kernels(p))
    local function q() return lacc.permute(add, zeros, function(i) return i % 3 + 1 end, xs) end
    local same = { q(), q() }
    assert.are.equal(kernels(same, false) - 1, kernels(same))   -- one index function: one pass
  end)
  it("a combine of one primitive beside one that is not (private copies or in order), and " ..
     "a source that may fail: explain says why", function()
    local at = function(i) return i % 3 + 1 end
    local p = { lacc.permute(add, zeros, at, xs),
                lacc.permute(function(u, v) return u * 2 + v end, zeros, at, xs),
                lacc.permute(add, zeros, at, lacc.map(function(x) return lacc.idiv(12, x) end, xs)) }
    local text = lacc.explain(p, { backend = "cpu" })
    assert.are.equal(kernels(p, false), kernels(p))
    assert.truthy(text:find("the other in order", 1, true), text)
    assert.truthy(text:find("may raise an error", 1, true), text)
    local r = { lacc.run(p) }
    assert.are.same({ 3 + 6, 1 + 4, 2 + 5 }, r[1]:totable())
  end)
end)

describe("a table of programs run again", function()
  it("gives the programs' results each time, and follows a change of the table, the " ..
     "options and the layout", function()
    local xs = lacc.fromtable({ 3, 1, 4, 1, 5, 9, 2, 6 }, "i32")
    local p = { lacc.sum(xs), lacc.maximum(xs), lacc.map(function(x) return x * 2 end, xs) }
    for _ = 1, 3 do
      local s, m, d = lacc.run(p)
      assert.are.equal(31, s:get())
      assert.are.equal(9, m:get())
      assert.are.same({ 6, 2, 8, 2, 10, 18, 4, 12 }, d:totable())
    end
    p[2] = lacc.minimum(xs)
    local s, m = lacc.run(p)
    assert.are.equal(31, s:get())
    assert.are.equal(1, m:get())
    p[4] = xs   -- a host array as a result: itself
    local r = { lacc.run(p, { hfuse = false }) }
    assert.are.equal(4, #r)
    assert.are.equal(1, r[2]:get())
    assert.are.same({ 3, 1, 4, 1, 5, 9, 2, 6 }, r[4]:totable())
    p[4] = nil
    local Shape = H.Shape
    local ss = lacc.fromtable({ { tag = "Circle", 1 }, { tag = "Empty" } }, Shape)
    local q = { lacc.map(function(v) return v end, ss), lacc.sum(xs) }
    for _, layout in ipairs { "unboxed", "rtu", "compact" } do
      local a = lacc.run(q, { layout = layout })
      assert.are.equal(layout, a:layout())
      assert.are.same({ tag = "Circle", 1 }, a:get(1))
    end
  end)
end)
