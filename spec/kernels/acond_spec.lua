-- acond (issue 5): the array of the branch taken, the other never computed, on every
-- backend; nested, consumed, compiled, across layouts.
local H = require "helper"
local lacc = H.lacc

local function times(k) return function(v) return v * k end end

for _, b in ipairs(H.backends) do
  describe("acond on " .. b, function()
    local opts = { backend = b }
    local x = lacc.fromtable({ 1, 2, 3, 4 }, "i32")
    local s = lacc.sum(x)   -- 10

    it("takes the branch the condition picks", function()
      for _, limit in ipairs { 5, 15 } do
        local p = lacc.acond(lacc.gt(lacc.the(s), limit), lacc.map(times(10), x), lacc.reverse(x))
        local want = limit < 10 and { 10, 20, 30, 40 } or { 4, 3, 2, 1 }
        assert.are.same(want, lacc.run(p, opts):totable())
      end
    end)

    it("never computes the other branch (its errors do not happen)", function()
      local bad = lacc.map(function(v) return lacc.idiv(v, v - v) end, x)
      local p = lacc.acond(lacc.gt(lacc.the(s), 5), x, bad)
      assert.are.same({ 1, 2, 3, 4 }, lacc.run(p, opts):totable())
      local q = lacc.acond(lacc.lt(lacc.the(s), 5), x, bad)
      local ok, err = pcall(lacc.run, q, opts)
      assert.is_false(ok)
      assert.truthy(err:find("integer division by zero", 1, true))
    end)

    it("nests, feeds consumers, and shares terms with the rest of the program", function()
      local m = lacc.map(times(2), x)      -- used in a branch and outside
      local inner = lacc.acond(lacc.eq(lacc.the(s), 10), lacc.map(times(3), m), m)
      local outer = lacc.acond(lacc.gt(lacc.the(s), 0), inner, lacc.reverse(m))
      local p = lacc.zipWith(function(a, c) return a + c end, outer, m)
      assert.are.same({ 8, 16, 24, 32 }, lacc.run(p, opts):totable())
      local ra, rb = lacc.run({ outer, lacc.sum(outer) }, opts)
      assert.are.same({ 6, 12, 18, 24 }, ra:totable())
      assert.are.equal(60, rb:get())
    end)

    it("a Lua boolean picks while the program is built", function()
      assert.are.same({ 1, 2, 3, 4 }, lacc.run(lacc.acond(true, x, lacc.reverse(x)), opts):totable())
      assert.are.same({ 4, 3, 2, 1 }, lacc.run(lacc.acond(false, x, lacc.reverse(x)), opts):totable())
    end)

    it("branches stored in different layouts give the same values", function()
      local T = lacc.Maybe("f64")
      local u = lacc.fromtable({ { tag = "Just", 2.5 }, { tag = "Nothing" } }, T)
      lacc.set_layout("unboxed")
      local v = lacc.fromtable({ { tag = "Nothing" }, { tag = "Just", -1 } }, T)
      lacc.set_layout("compact")
      for _, pick in ipairs { 1, 2 } do
        local p = lacc.acond(lacc.eq(lacc.the(s), pick == 1 and 10 or 11), u, v)
        local t = lacc.run(p, opts):totable()
        local want = pick == 1 and { "Just", "Nothing" } or { "Nothing", "Just" }
        assert.are.same(want, { t[1].tag, t[2].tag })
      end
    end)
  end)
end

describe("acond", function()
  it("in a compiled function decides per call", function()
    local f = lacc.compile(function(xs)
      return lacc.acond(lacc.gt(lacc.the(lacc.sum(xs)), 0), xs, lacc.map(function(v) return -v end, xs))
    end)
    assert.are.same({ 3, -2 }, f(lacc.fromtable({ 3, -2 }, "i64")):totable())
    assert.are.same({ 1, 5 }, f(lacc.fromtable({ -1, -5 }, "i64")):totable())
  end)

  it("rejects branches of different types or ranks and non-bool conditions", function()
    local x = lacc.fromtable({ 1, 2 }, "i32")
    local ok, err = pcall(lacc.acond, lacc.gt(lacc.the(lacc.sum(x)), 0), x, lacc.fromtable({ 1 }, "f32"))
    assert.is_false(ok)
    assert.truthy(err:find("acond", 1, true))
    ok, err = pcall(lacc.acond, lacc.gt(lacc.the(lacc.sum(x)), 0), x, lacc.fromtable({ { 1 } }, "i32"))
    assert.is_false(ok)
    assert.truthy(err:find("acond: arrays of one rank expected", 1, true))
    ok, err = pcall(lacc.acond, lacc.the(lacc.sum(x)), x, x)
    assert.is_false(ok)
    assert.truthy(err:find("acond", 1, true))
    ok, err = pcall(lacc.the, x)
    assert.is_false(ok)
    assert.truthy(err:find("the: expected an array of rank 0, got rank 1", 1, true))
  end)
end)
