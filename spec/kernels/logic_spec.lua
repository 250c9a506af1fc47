-- land / lor short-circuit (issue 27): the right operand is evaluated only when the left
-- does not decide, as Lua's `and` / `or` and Accelerate's && / || do, so a read it guards
-- never fails; in maps, in folds (whose rows the cpu backend runs as branch-free strips)
-- and nested. Against plain Lua on every backend.
local H = require "helper"
local lacc = H.lacc

local v = { 1, 2, 3, 4, 5 }

for _, b in ipairs(H.backends) do
  describe("land and lor on " .. b, function()
    local opts = { backend = b }
    local va = lacc.use(lacc.fromtable(v, "i64"))

    it("lor guards a read the left side decides", function()
      local p = lacc.generate({ 5 }, function(i) return lacc.lor(lacc.eq(i, 1), lacc.eq(va[i - 1], 1)) end)
      local want = {}
      for i = 1, 5 do want[i] = i == 1 or v[i - 1] == 1 end
      assert.are.same(want, lacc.run(p, opts):totable())
    end)

    it("land guards a read the left side decides", function()
      local p = lacc.generate({ 5 }, function(i) return lacc.land(lacc.gt(i, 1), lacc.eq(va[i - 1], 2)) end)
      local want = {}
      for i = 1, 5 do want[i] = i > 1 and v[i - 1] == 2 end
      assert.are.same(want, lacc.run(p, opts):totable())
    end)

    it("the right side still fails when it is evaluated", function()
      local p = lacc.generate({ 5 }, function(i) return lacc.land(lacc.gt(i, 0), lacc.eq(va[i + 1], 2)) end)
      local ok, err = pcall(lacc.run, p, opts)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("out of bounds", 1, true))
    end)

    it("nested, and in a fold's rows (strips), against Lua's and / or", function()
      local n, m = 7, 300
      local p = lacc.fold(function(a, c) return a + c end, 0, lacc.generate({ n, m }, function(i, j)
        -- j = 1 reads v[0] unless the left side decides; j > 5 reads past the end
        local ok = lacc.lor(lacc.land(lacc.gt(j, 1), lacc.le(j, 5)), lacc.eq(i, 3))
        local guarded = lacc.land(lacc.land(lacc.gt(j, 1), lacc.le(j, 6)), lacc.lt(va[j - 1], i))
        return lacc.cond(lacc.lor(lacc.land(ok, lacc.ne(i, 3)), guarded), lacc.constant(1, "i64"),
                         lacc.constant(0, "i64"))
      end))
      local want = {}
      for i = 1, n do
        local s = 0
        for j = 1, m do
          local ok = (j > 1 and j <= 5) or i == 3
          local guarded = j > 1 and j <= 6 and v[j - 1] < i
          if (ok and i ~= 3) or guarded then s = s + 1 end
        end
        want[i] = s
      end
      H.check_array(lacc.run(p, opts), want)
    end)
  end)
end
