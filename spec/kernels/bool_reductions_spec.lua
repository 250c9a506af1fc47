-- all, any, and_, or_ (whole-array, rank 0 results) on every backend against Lua loops,
-- on every shape of H.shapes (rank 0 and empty arrays included).
local H = require "helper"
local lacc = H.lacc

for _, b in ipairs(H.backends) do
  describe("boolean reductions on " .. b, function()
    local opts = { backend = b }
    it("all and any of a predicate, and_ and or_ of bools, agree with Lua loops", function()
      H.seed(601)
      for _, sh in ipairs(H.shapes) do
        local xs, flat = H.random_array("i32", sh)
        for _, limit in ipairs { -2000000, 0, 900000, 2000000 } do
          local p = function(v) return lacc.gt(v, limit) end
          local all, any = true, false
          for _, v in ipairs(flat) do
            all = all and v > limit
            any = any or v > limit
          end
          assert.are.equal(all, lacc.run(lacc.all(p, xs), opts):get(), "all")
          assert.are.equal(any, lacc.run(lacc.any(p, xs), opts):get(), "any")
          local bs = lacc.map(p, xs)
          assert.are.equal(all, lacc.run(lacc.and_(bs), opts):get(), "and_")
          assert.are.equal(any, lacc.run(bs:or_(), opts):get(), "or_")
        end
      end
    end)

    it("over many elements (the cpu backend's partials)", function()
      local n = 200003
      local xs = lacc.run(lacc.generate({ n }, function(i) return lacc.cast(i, "i32") end))
      assert.is_true(lacc.run(lacc.all(function(v) return lacc.ge(v, 1) end, xs), opts):get())
      assert.is_false(lacc.run(lacc.all(function(v) return lacc.lt(v, n) end, xs), opts):get())
      assert.is_true(lacc.run(lacc.any(function(v) return lacc.eq(v, n) end, xs), opts):get())
      assert.is_false(lacc.run(lacc.any(function(v) return lacc.gt(v, n) end, xs), opts):get())
    end)
  end)
end

describe("boolean reduction errors", function()
  it("need a predicate returning bool and arrays of bool", function()
    local xs = lacc.fromtable({ 1, 2 }, "i32")
    local ok, err = pcall(lacc.any, function(v) return v end, xs)
    assert.is_false(ok)
    assert.truthy(err:find("any: the predicate must return bool, got i32", 1, true))
    ok, err = pcall(lacc.and_, xs)
    assert.is_false(ok)
    assert.truthy(err:find("and_: expected an array of bool, got i32", 1, true))
    ok, err = pcall(lacc.all, 3, xs)
    assert.is_false(ok)
    assert.truthy(err:find("all: expected a function", 1, true))
  end)

  it("lacc.all still marks whole dimensions in replicate", function()
    local r = lacc.run(lacc.replicate({ lacc.all, 2 }, lacc.fromtable({ 1, 2 }, "i32")))
    assert.are.same({ { 1, 1 }, { 2, 2 } }, r:totable())
  end)
end)
