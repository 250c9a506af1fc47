-- Fusion (issue 4): kernel counts from explain, and fused programs' results against
-- unfused ones. The cpu backend's parallel paths are in spec/kernels/parallel_spec.lua,
-- lacc.compile in spec/surface/compile_scalars_spec.lua, the kernel cache in
-- spec/backends/cache_spec.lua.
local lacc = require "lacc"
local H = require "helper"

local seq = H.seq

local function plus1(x) return x + 1 end
local function add(a, b) return a + b end
local function mul(a, b) return a * b end

describe("fusion (explain)", function()
  local xs = seq(10, "f32", function(i) return i end)
  local ys = seq(10, "f32", function(i) return 2 * i end)

  it("a dot product is one kernel and no intermediate", function()
    local _, st = lacc.explain(lacc.fold(add, 0, lacc.zipWith(mul, xs, ys)))
    assert.are.same({ kernels = 1, intermediates = 0, lets = 0 }, st)
  end)

  it("Defunctionalizing Push Arrays' ex1 (rotate 3 . reverse . map (+1)) is one kernel", function()
    local ex1 = lacc.rotate(3, lacc.reverse(lacc.map(plus1, xs)))
    local _, st = lacc.explain(ex1)
    assert.are.equal(1, st.kernels)
    assert.are.equal(0, st.intermediates)
  end)

  it("saxpy on ex1 of an input is one kernel with the index arithmetic inlined", function()
    local ex1 = lacc.rotate(3, lacc.reverse(lacc.map(plus1, xs)))
    local saxpy = lacc.zipWith(function(x, y) return 2.5 * x + y end, ex1, ys)
    local text, st = lacc.explain(saxpy, { source = true })
    assert.are.equal(1, st.kernels)
    assert.truthy(text:find("pulls map(backpermute(backpermute(map(a0))) a1)", 1, true))
    local got = lacc.run(saxpy):totable()
    -- reference: ex1[i] = rev[(i - 1 + 3) mod n + 1], rev[j] = x[n - j + 1] + 1
    for i = 1, 10 do
      local j = (i - 1 + 3) % 10 + 1
      assert.are.equal(2.5 * (11 - j + 1) + 2 * i, got[i])
    end
  end)

  it("a map used by two folds is materialised once", function()
    local m = lacc.map(function(x) return x * 2 end, xs)
    -- the two fold differently (one with a start value): apart, the map is written once,
    -- by the first fold's loop (hfuse.c), and the second reads it
    local function sum1(a) return lacc.fold1(function(x, y) return x + y end, a) end
    local _, st = lacc.explain({ lacc.sum(m), sum1(m) })
    assert.are.equal(2, st.kernels)
    assert.are.equal(1, st.intermediates)
    _, st = lacc.explain({ lacc.sum(m), sum1(m) }, { hfuse = false })
    assert.are.equal(3, st.kernels)
    assert.are.equal(1, st.intermediates)
    -- a float maximum (a fold1) beside a sum: one loop, nothing materialised
    _, st = lacc.explain({ lacc.sum(m), lacc.maximum(m) })
    assert.are.equal(1, st.kernels)
    assert.are.equal(0, st.intermediates)
  end)

  it("a cheap producer (a backpermute of an input) used twice is not materialised", function()
    local r = lacc.reverse(xs)
    local _, st = lacc.explain(lacc.zipWith(add, r, r))
    assert.are.equal(1, st.kernels)
    assert.are.equal(0, st.intermediates)
  end)

  it("a chain of backpermutes and reshapes of a materialised array, used twice, is not materialised", function()
    -- a scalar spread over 4 x 4 (a gradient's cotangent of a sum): reshape . backpermute
    local s = lacc.compute(lacc.map(function(x) return x * 3 end, lacc.unit(lacc.constant(2, "f32"))))
    local spread = lacc.reshape({ 4, 4 }, lacc.backpermute({ 16 }, function() return end, s))
    local p = lacc.zipWith(add, lacc.map(plus1, spread), lacc.map(function(x) return x * 2 end, spread))
    local _, st = lacc.explain(p)
    assert.are.equal(2, st.kernels)         -- the compute, then one map reading it
    assert.are.equal(1, st.intermediates)
    local got = lacc.run(p):totable()
    for i = 1, 4 do for j = 1, 4 do assert.are.equal(7 + 12, got[i][j]) end end
    -- a chain ending in a map (real work) used twice is materialised once
    local g = lacc.generate({ 4, 4 }, function(i, j) return lacc.cast(i * j, "f32") end)
    local heavy = lacc.reshape({ 4, 4 }, lacc.map(function(x) return lacc.exp(x) end, lacc.flatten(g)))
    _, st = lacc.explain(lacc.zipWith(add, lacc.map(plus1, heavy), lacc.map(plus1, heavy)))
    assert.are.equal(2, st.kernels)
  end)

  it("a costly producer indexed over a larger space is materialised, a cheap one or one read " ..
     "over its own space is pulled", function()
    -- random matrices (Philox's rounds an element) into a matrix product, which reads each
    -- element once per column or row: pulled, every multiply-add drew both numbers again
    local a = lacc.random.uniform({ 6, 5 }, 1, "f64")
    local b = lacc.random.uniform({ 5, 4 }, 2, "f64")
    local p = lacc.matmul(a, b)
    local _, st = lacc.explain(p)
    assert.are.same({ 3, 2 }, { st.kernels, st.intermediates })
    local ah, bh, got = lacc.run(a), lacc.run(b), lacc.run(p)
    for i = 1, 6 do
      for j = 1, 4 do
        local want = 0
        for k = 1, 5 do want = want + ah:get(i, k) * bh:get(k, j) end
        assert.is_true(math.abs(got:get(i, j) - want) <= 1e-12, ("(%d, %d)"):format(i, j))
      end
    end
    -- a cheap generate into the same product: pulled, one kernel
    local c = lacc.generate({ 6, 5 }, function(i, k) return lacc.cast(i * 10 + k, "f64") end)
    _, st = lacc.explain(lacc.matmul(c, b))
    assert.are.same({ 2, 1 }, { st.kernels, st.intermediates })
    -- the costly one read once an element, over its own shape: pulled into the fold
    _, st = lacc.explain(lacc.sum(lacc.generate({ 6, 5 }, function(i, k) return a:at(7 - i, 6 - k) end)))
    assert.are.same({ 1, 0 }, { st.kernels, st.intermediates })
  end)

  it("fusion off gives a kernel per combinator and the same results", function()
    local p = lacc.fold(add, 0, lacc.zipWith(mul, lacc.map(plus1, xs), ys))
    local _, on = lacc.explain(p)
    local _, off = lacc.explain(p, { fusion = false })
    assert.are.equal(1, on.kernels)
    assert.are.equal(3, off.kernels)
    assert.are.equal(2, off.intermediates)
    assert.are.equal(lacc.run(p):get(), lacc.run(p, { fusion = false }):get())
    local want = 0
    for i = 1, 10 do want = want + (i + 1) * 2 * i end
    assert.are.equal(want, lacc.run(p):get())
  end)

  it("sharing off duplicates work but not results", function()
    local function f(x)
      local s = x * x + 1
      return s * s + s
    end
    local p = lacc.map(f, xs)
    local a, b = lacc.run(p):totable(), lacc.run(p, { sharing = false }):totable()
    assert.are.same(a, b)
    local _, st = lacc.explain(p, { sharing = false })
    assert.are.equal(0, st.lets)
  end)

  it("compute materialises its argument: producers fuse into it, consumers read it", function()
    local x = lacc.fromtable({ 1, 2, 3, 4 }, "f32")
    local m = lacc.compute(lacc.map(function(v) return v * 2 end, lacc.reverse(x)))
    local p = lacc.map(function(v) return v + 1 end, m)
    local _, stats = lacc.explain(p)
    assert.are.equal(2, stats.kernels)
    assert.are.equal(1, stats.intermediates)
    local _, plain = lacc.explain(lacc.map(function(v) return v + 1 end,
      lacc.map(function(v) return v * 2 end, lacc.reverse(x))))
    assert.are.equal(1, plain.kernels)
    for _, b in ipairs { "interp", "cpu" } do
      assert.are.same({ 9, 7, 5, 3 }, lacc.run(p, { backend = b }):totable())
      assert.are.same({ 8, 6, 4, 2 }, lacc.run(m, { backend = b }):totable())
    end
  end)

  it("explain can show the generated C", function()
    local text = lacc.explain(lacc.map(plus1, xs), { source = true })
    assert.truthy(text:find("void lacc_f0", 1, true))
    assert.falsy(lacc.explain(lacc.map(plus1, xs)):find("void lacc_f0", 1, true))
  end)
end)
