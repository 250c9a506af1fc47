-- Scans along the innermost dimension (issue 5): scanl scanl1 scanr scanr1 scanl_ scanr_
-- on every backend against plain-Lua loops over each row, on shapes with empty rows and
-- dimensions, odd sizes and ranks 1 to 3, with a commutative and a non-commutative
-- function; long rows take the cpu backend's three-pass path.
local H = require "helper"
local lacc = H.lacc

-- ---- references: a flat row-major table of shape sh, scanned row by row

local function rows_of(sh)
  local n = sh[#sh]
  local rows = n > 0 and H.size(sh) / n or 0
  if n == 0 then
    rows = 1
    for d = 1, #sh - 1 do rows = rows * sh[d] end
  end
  return rows, n
end

-- kind: "scanl" | "scanl1" | "scanr" | "scanr1"; f(acc, x) from the left, f(x, acc)
-- from the right, as in lacc.
local function ref_scan(kind, f, z, flat, sh)
  local rows, n = rows_of(sh)
  local right, with_z = kind:sub(5, 5) == "r", not kind:find("1")
  local out = {}
  for o = 0, rows - 1 do
    local row = {}
    for j = 1, n do row[j] = flat[o * n + j] end
    local res = {}
    if right then
      local acc, last = z, n
      if not with_z then acc, last = row[n], n - 1 end
      if with_z then res[n + 1] = acc elseif n > 0 then res[n] = acc end
      for j = last, 1, -1 do
        acc = f(row[j], acc)
        res[j] = acc
      end
    else
      local acc, first = z, 1
      if not with_z then acc, first = row[1], 2 end
      if with_z then res[1] = acc elseif n > 0 then res[1] = acc end
      for j = first, n do
        acc = f(acc, row[j])
        res[with_z and j + 1 or j] = acc
      end
    end
    for j = 1, with_z and n + 1 or n do out[#out + 1] = res[j] end
  end
  return out
end

local function out_shape(kind, sh)
  local r = {}
  for d = 1, #sh do r[d] = sh[d] end
  if not kind:find("1") then r[#r] = r[#r] + 1 end
  return r
end

local function check(a, sh, expected, what)
  assert.are.same(sh, a:shape(), what)
  local ok, err = pcall(H.check_array, a, expected)
  if not ok then error(what .. ": " .. tostring(err), 2) end
end

local wrap32 = function(v) v = v % 4294967296; if v >= 2147483648 then v = v - 4294967296 end return v end

-- Affine maps x -> a x + b mod P, composed left to right: associative, not commutative.
local P = 1000003
local function compose(p, q) return { p[1] * q[1] % P, (q[1] * p[2] + q[2]) % P } end
local function lcompose(p, q)
  return lacc.tuple(lacc.imod(p[1] * q[1], P), lacc.imod(q[1] * p[2] + q[2], P))
end

local shapes = { { 0 }, { 1 }, { 7 }, { 13 }, { 3, 5 }, { 0, 4 }, { 4, 0 }, { 2, 3, 3 }, { 2, 1, 9 } }
local kinds = { "scanl", "scanl1", "scanr", "scanr1" }

for _, b in ipairs(H.backends) do
  describe("scans on " .. b, function()
    local opts = { backend = b }

    it("integer sums (wrapping) on every shape", function()
      H.seed(501)
      for _, sh in ipairs(shapes) do
        local xs, flat = H.random_array("i32", sh)
        for _, k in ipairs(kinds) do
          local p = k:find("1") and lacc[k](function(a, c) return a + c end, xs)
                                or lacc[k](function(a, c) return a + c end, 5, xs)
          local want = ref_scan(k, function(a, c) return wrap32(a + c) end, 5, flat, sh)
          check(lacc.run(p, opts), out_shape(k, sh), want, k .. " " .. table.concat(sh, "x"))
        end
      end
    end)

    it("a non-commutative function keeps the order (affine maps as tuples)", function()
      H.seed(502)
      local T = lacc.tuple("i64", "i64")
      for _, sh in ipairs { { 9 }, { 2, 6 }, { 1 } } do
        local n = H.size(sh)
        local flat, tbl = {}, {}
        for i = 1, n do flat[i] = { H.randint(1, P - 1), H.randint(0, P - 1) } end
        if #sh == 1 then tbl = flat else
          for r = 1, sh[1] do
            tbl[r] = {}
            for c = 1, sh[2] do tbl[r][c] = flat[(r - 1) * sh[2] + c] end
          end
        end
        local xs = lacc.fromtable(tbl, T)
        for _, k in ipairs(kinds) do
          local id = lacc.tuple(lacc.constant(1, "i64"), lacc.constant(0, "i64"))
          local p = k:find("1") and lacc[k](lcompose, xs) or lacc[k](lcompose, id, xs)
          local want = ref_scan(k, compose, { 1, 0 }, flat, sh)
          local got = lacc.run(p, opts)
          assert.are.same(out_shape(k, sh), got:shape())
          for i = 1, #want do
            local g = got:at_linear(i - 1)
            assert.are.same({ want[i][1], want[i][2] }, { H.num(g[1]), H.num(g[2]) }, k)
          end
        end
      end
    end)

    it("scanl_ and scanr_ give the exclusive scan and the totals", function()
      local xs = lacc.fromtable({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 } }, "f64")
      local v, t = lacc.scanl_(function(a, c) return a + c end, 10, xs)
      local rv, rt = lacc.run({ v, t }, opts)
      assert.are.same({ { 10, 11, 13, 16 }, { 10, 15, 21, 28 } }, rv:totable())
      assert.are.same({ 20, 36 }, rt:totable())
      local v2, t2 = lacc.scanr_(function(a, c) return a - c end, 0, xs)
      local rv2, rt2 = lacc.run({ v2, t2 }, opts)
      -- right: acc = x - acc from the end: [2 - (3 - (4 - 0)), 3 - (4 - 0), 4 - 0, 0] ...
      assert.are.same({ { 3, -1, 4, 0 }, { 7, -1, 8, 0 } }, rv2:totable())
      assert.are.same({ -2, -2 }, rt2:totable())
      local e1, e2 = lacc.scanl_(function(a, c) return a + c end, 7, lacc.fromtable({}, "i32"))
      local re1, re2 = lacc.run({ e1, e2 }, opts)
      assert.are.equal(0, #re1)
      assert.are.equal(7, re2:get())
    end)

    it("producers fuse into a scan", function()
      local xs = lacc.fromtable({ 1, 2, 3, 4 }, "i32")
      local p = lacc.scanl1(function(a, c) return a + c end, lacc.map(function(x) return x * x end, xs))
      local _, stats = lacc.explain(p, opts)
      assert.are.equal(1, stats.kernels)
      assert.are.same({ 1, 5, 14, 30 }, lacc.run(p, opts):totable())
    end)
  end)
end

describe("scans on cpu, long rows (three passes over chunks)", function()
  local N = 200003
  it("agree with the interpreter on one and two rows, every kind", function()
    local a = lacc.run(lacc.generate({ N }, function(i) return lacc.cast(i % 1000 - 500, "i64") end))
    local m = lacc.run(lacc.generate({ 2, N }, function(i, j) return lacc.cast((i * j) % 977, "i32") end))
    for _, k in ipairs(kinds) do
      for _, xs in ipairs { a, m } do
        local p = k:find("1") and lacc[k](function(x, y) return x + y end, xs)
                              or lacc[k](function(x, y) return x + y end, 3, xs)
        local c = lacc.run(p, { backend = "cpu" })
        local i = lacc.run(p, { backend = "interp" })
        assert.are.same(i:shape(), c:shape())
        assert.are.equal(#i, #c)
        for j = 0, #i - 1 do
          local x, y = i:at_linear(j), c:at_linear(j)
          if not H.same(x, y) then
            error(("%s: element %d: interp %s, cpu %s"):format(k, j, tostring(x), tostring(y)))
          end
        end
      end
    end
  end)

  it("keeps the order of a non-commutative function across chunks", function()
    local T = lacc.tuple("i64", "i64")
    local xs = lacc.run(lacc.generate({ N }, function(i)
      return lacc.tuple(lacc.imod(i * 7919, P - 1) + 1, lacc.imod(i * 104729, P))
    end))
    assert.are.equal(T, xs:type())
    for _, k in ipairs { "scanl1", "scanr" } do
      local id = lacc.tuple(lacc.constant(1, "i64"), lacc.constant(0, "i64"))
      local p = k == "scanl1" and lacc.scanl1(lcompose, xs) or lacc.scanr(lcompose, id, xs)
      local c = lacc.run(p, { backend = "cpu" }):totable()
      local i = lacc.run(p, { backend = "interp" }):totable()
      for j = 1, #i, 4999 do assert.are.same(i[j], c[j], k) end
      assert.are.same(i[#i], c[#c], k)
      assert.are.same(i[1], c[1], k)
    end
  end)
end)

describe("scan errors", function()
  it("reject rank 0 and a function of the wrong type", function()
    local ok, err = pcall(lacc.scanl, function(a, b) return a + b end, 0, lacc.unit(lacc.constant(1, "i32")))
    assert.is_false(ok)
    assert.truthy(err:find("scanl: expected an array of rank 1 or more", 1, true))
    ok, err = pcall(lacc.scanr1, function(a, b) return lacc.cast(a, "f64") end, lacc.fromtable({ 1 }, "i32"))
    assert.is_false(ok)
    assert.truthy(err:find("scanr1", 1, true))
  end)
end)
