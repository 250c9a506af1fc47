-- A map of a fold's results computed in the fold's step (lower.c's fold_then_map): the
-- results against the interpreter (which computes the fold, then the map) and plain Lua
-- loops, on every backend: rows short and long (split in partials), empty rows, tuples,
-- ranks 1 to 3, float edge values; one kernel where it applies, two where it does not.
local H = require "helper"
local lacc = H.lacc
-- the integer extremes (LuaJIT has no math.maxinteger: there the largest integers a
-- number holds exactly)
local IMAX, IMIN = math.maxinteger or 2 ^ 53, math.mininteger or -2 ^ 53

local function kernels(p)
  return tonumber(lacc.explain(p):match("%-%- (%d+) kernels?"))
end

local function rows(n, m, t, f)
  return lacc.run(lacc.generate({ n, m }, function(i, j) return lacc.cast(f(i, j), t) end))
end

for _, b in ipairs(H.backends) do
  describe("a map of a fold's results on " .. b, function()
    local opts = { backend = b }
    local function same(p)
      local want = lacc.run(p, { backend = "interp" }):totable()
      assert.are.same(want, lacc.run(p, opts):totable())
      return want
    end

    it("row means of short, odd and long rows (i32, f32, f64)", function()
      for _, nm in ipairs { { 1, 1 }, { 5, 3 }, { 7, 8 }, { 3, 1000 }, { 1, 100003 }, { 2000, 17 } } do
        for _, t in ipairs { "i32", "f32", "f64" } do
          local xs = rows(nm[1], nm[2], t, function(i, j) return lacc.imod(i * 31 + j * 17, 23) - 11 end)
          local p = lacc.map(function(s) return lacc.cast(s, "f64") / nm[2] end,
            lacc.fold(function(a, c) return a + c end, 0, xs))
          local got = same(p)
          local tab = xs:totable()
          for i = 1, nm[1], math.max(1, math.floor(nm[1] / 7)) do
            local s = 0
            for j = 1, nm[2] do s = s + tab[i][j] end
            if t ~= "f32" then assert.are.equal(s / nm[2], got[i]) end
          end
        end
      end
    end)

    it("a whole array folded to rank 0, then mapped (partials combined first)", function()
      for _, n in ipairs { 0, 1, 7, 100003, 1000000 } do
        local xs = lacc.run(lacc.generate({ n }, function(i) return lacc.imod(i, 97) end))
        local p = lacc.map(function(s) return s * 2 + 1 end, lacc.fold(function(a, c) return a + c end, 0, xs))
        local s = 0
        for i = 1, n do s = s + i % 97 end   -- generate's indices are 1-based
        assert.are.equal(2 * s + 1, same(p))
      end
    end)

    it("empty rows: the map of the fold's start value", function()
      local xs = lacc.fill({ 4, 0 }, lacc.constant(0, "i64"))
      local p = lacc.map(function(s) return s - 7 end, lacc.fold(function(a, c) return a + c end, 3, xs))
      assert.are.same({ -4, -4, -4, -4 }, same(p))
    end)

    it("argmin and argmax along rows with NaN, ties and extremes; a fold of tuples projected", function()
      local nan, inf = 0 / 0, math.huge
      local data = { { 3, 1, 1, 2 }, { nan, 5, nan, 0 }, { inf, -inf, -inf, 0 }, { 2, 2, 2, 2 },
                     { -0.0, 0.0, 1e-45, -1e-45 } }
      local xs = lacc.fromtable(data, "f32")
      for _, f in ipairs { lacc.argmin, lacc.argmax } do
        local p = f(xs, 2)
        same(p)
        if b ~= "interp" then assert.are.equal(1, kernels(p)) end
      end
      assert.are.same({ 2, 1, 2, 1, 4 }, lacc.run(lacc.argmin(xs, 2), opts):totable())
      local big = lacc.fromtable({ { IMAX, IMIN, 0 }, { -1, 1, IMIN } }, "i64")
      assert.are.same({ 2, 3 }, lacc.run(lacc.argmin(big, 2), opts):totable())
      assert.are.same({ 1, 2 }, lacc.run(lacc.argmax(big, 2), opts):totable())
    end)

    it("rank 3 folds along the last dimension, then a map to another type", function()
      local xs = lacc.run(lacc.generate({ 3, 4, 5 }, function(i, j, k) return i * 100 + j * 10 + k end))
      local p = lacc.map(function(s) return lacc.gt(s, 1200) end,
        lacc.fold1(function(a, c) return lacc.max(a, c) end, xs))
      local got = same(p)
      assert.are.equal(3, #got)
      for i = 1, 3 do
        for j = 1, 4 do assert.are.equal(i * 100 + j * 10 + 5 > 1200, got[i][j]) end
      end
    end)

    it("not where the map reads another array, or the fold is read twice (two kernels)", function()
      local xs = rows(6, 5, "i64", function(i, j) return i * j end)
      local w = lacc.map(function(v) return v end, lacc.fromtable({ 10 }, "i64"))   -- a program
      local s = lacc.fold(function(a, c) return a + c end, 0, xs)
      local reads = lacc.map(function(v) return v + w[1] end, s)
      assert.are.same({ 25, 40, 55, 70, 85, 100 }, same(reads))
      if b ~= "interp" then assert.are.equal(2, kernels(reads)) end
      local one = lacc.map(function(v) return v * 2 end, s)
      if b ~= "interp" then assert.are.equal(1, kernels(one)) end
      local twice = lacc.zipWith(function(p, q) return p + q end, one, s)
      assert.are.same({ 45, 90, 135, 180, 225, 270 }, same(twice))
    end)
  end)
end

describe("a map of a fold's results: LACC_FOLD_MAP=0", function()
  it("keeps the two kernels, with the same numbers", function()
    local out = H.child([[
      local lacc = require "lacc"
      local xs = lacc.fromtable({ { 3, 1, 2 }, { 0 / 0, 5, 4 }, { 7, 7, -1 } }, "f32")
      local p = lacc.argmin(xs, 2)
      local r = lacc.run(p, { backend = "cpu" }):totable()
      local n = lacc.explain(p, { backend = "cpu" }):match("%-%- (%d+) kernels?")
      io.write(table.concat(r, ","), " ", n)
    ]], "", "LACC_FOLD_MAP=0")
    assert.are.equal("2,1,3 2", out)
    local xs = lacc.fromtable({ { 3, 1, 2 }, { 0 / 0, 5, 4 }, { 7, 7, -1 } }, "f32")
    assert.are.same({ 2, 1, 3 }, lacc.run(lacc.argmin(xs, 2), { backend = "cpu" }):totable())
    assert.truthy(lacc.explain(lacc.argmin(xs, 2), { backend = "cpu" }):find("-- 1 kernel\n", 1, true))
  end)
end)
