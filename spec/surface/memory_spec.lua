-- Host arrays' lifetime (issue 9): a program built from an array keeps it alive (freeing
-- the Lua handle does not pull the data from under the program), and so does the
-- collector; free() returns an array's bytes at once, the collector those of arrays
-- nothing refers to. Using a freed array is an error (spec/errors/catalogue_spec.lua).
local H = require "helper"
local lacc = H.lacc

local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
local id = function(x) return x end
local add = function(a, b) return a + b end

it("freeing an array twice is harmless", function()
  local a = lacc.fromtable({ 1, 2 }, "f64")
  H.check_array(lacc.run(lacc.map(function(x) return x * 3 end, a)), { 3, 6 })
  a:free()
  a:free()
  assert.are.equal("Array (freed)", tostring(a))
  for _, b in ipairs(H.backends) do
    H.check_array(lacc.run(lacc.map(function(x) return x * 2 + 1 end, xs), { backend = b }), { 3, 5, 7 })
    assert.are.equal(4, H.num(lacc.run(lacc.sum(lacc.fromtable({ 1.5, 2.5 }, "f64")), { backend = b }):get()))
  end
end)

describe("arrays after free and after collection", function()
  for _, b in ipairs(H.backends) do
    it("freed after a program was built from it, the program still runs, on " .. b, function()
      local c = lacc.fromtable({ 1, 2, 3 }, "i32")
      local p = lacc.map(function(x) return x + 1 end, c)
      local q = lacc.generate({ 3 }, function(i) return c[i] * 2 end)
      local f = lacc.compile(function(y) return lacc.zipWith(add, y, c) end, { backend = b })
      H.check_array(f(xs), { 2, 4, 6 })
      c:free()
      c:free()   -- twice is harmless
      assert.are.equal("Array (freed)", tostring(c))
      H.check_array(lacc.run(p, { backend = b }), { 2, 3, 4 })
      H.check_array(lacc.run(q, { backend = b }), { 2, 4, 6 })
      H.check_array(f(xs), { 2, 4, 6 })
    end)

    it("arrays only programs refer to survive the collector, on " .. b, function()
      local p, q, r
      do
        local h = lacc.fromtable({ 5, 6, 7 }, "i32")
        local k = lacc.fromtable({ 10, 20, 30 }, "i32")
        p = lacc.map(function(x) return x + 1 end, h)
        q = lacc.generate({ 3 }, function(i) return k[i] * 10 end)
        local tmp = lacc.run(lacc.map(id, h), { backend = b })
        r = lacc.map(function(x) return -x end, tmp)
      end
      for _ = 1, 3 do
        collectgarbage()
        collectgarbage()
        lacc.run(lacc.fill({ 1000 }, lacc.constant(9, "i64")), { backend = b })   -- reuse memory
      end
      H.check_array(lacc.run(p, { backend = b }), { 6, 7, 8 })
      H.check_array(lacc.run(q, { backend = b }), { 100, 200, 300 })
      H.check_array(lacc.run(r, { backend = b }), { -5, -6, -7 })
    end)
  end
end)

-- Memory comes back: free() returns an array's bytes at once, the collector those of
-- arrays nothing refers to, including what a dropped program kept alive.
describe("memory of freed and collected arrays", function()
  for _, b in ipairs(H.backends) do
    it("is returned, on " .. b, function()
      collectgarbage()
      collectgarbage()
      local base = lacc.memory()
      local mb = 2 ^ 20
      local a = lacc.run(lacc.fill({ mb }, lacc.constant(1, "f64")), { backend = b })
      assert.is_true(lacc.memory() >= base + 8 * mb)
      a:free()
      assert.is_true(lacc.memory() < base + mb)
      local p
      for k = 1, 40 do   -- 320 MB in all, 8 MB at a time
        local r = lacc.run(lacc.fill({ mb }, lacc.constant(k, "f64")), { backend = b })
        p = lacc.map(function(x) return x + 1 end, r)   -- keeps the last r alive
      end
      collectgarbage()
      collectgarbage()
      local kept = lacc.memory()
      assert.is_true(kept >= base + 8 * mb - 65536 and kept < base + 3 * 8 * mb, tostring(kept - base))
      assert.are.equal(41, H.num(lacc.run(lacc.fold(function(x, y) return lacc.max(x, y) end,
        0, p), { backend = b }):get()))
      p = nil   -- luacheck: ignore 311 (dropped for the collector)
      -- finalisers free arrays; what a finalised object held waits for a later cycle (on
      -- LuaJIT, cdata finalisers and the weak caches that name them can take a few)
      for _ = 1, 6 do
        collectgarbage()
        if lacc.memory() < base + mb then break end
      end
      assert.is_true(lacc.memory() < base + mb, tostring(lacc.memory() - base))
    end)
  end
end)

describe("recycled memory", function()
  local N = 600001   -- 4.8 MB of f64: above the size whose freed buffers are kept

  it("a freed kernel output's memory serves the next run, which overwrites all of it", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i, "f64") * 0.5 end))
    local p = lacc.map(function(x) return x * 3 - 1 end, a)
    for round = 1, 3 do
      local r = lacc.run(p, { backend = "cpu" })
      local t = r:totable()
      for i = round, N, 4999 do assert.are.equal(i * 0.5 * 3 - 1, t[i]) end
      assert.are.equal(N * 1.5 - 1, t[N])
      r:free()
    end
  end)

  it("a new host array is zeroed even when it reuses a freed buffer", function()
    local r = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i, "f64") + 1 end))
    r:free()
    local z = lacc.array("f64", { N })
    local t = z:totable()
    for i = 1, N, 1009 do assert.are.equal(0, t[i]) end
    assert.are.equal(0, t[N])
  end)
end)
