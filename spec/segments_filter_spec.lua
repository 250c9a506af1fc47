-- foldSeg, fold1Seg and filter (issue 5) on every backend against plain-Lua loops.
local H = require "helper"
local lacc = H.lacc

local function add(a, b) return a + b end
local wrap32 = function(v) v = v % 4294967296; if v >= 2147483648 then v = v - 4294967296 end return v end

-- Reference: rows of length n (flat), segments of the given lengths, folded in order.
local function ref_seg(f, z, flat, rows, n, segs)
  local out = {}
  for r = 0, rows - 1 do
    local pos = 0
    for _, len in ipairs(segs) do
      local acc, first = z, 1
      if z == nil then acc, first = flat[r * n + pos + 1], 2 end
      for j = first, len do acc = f(acc, flat[r * n + pos + j]) end
      out[#out + 1] = acc
      pos = pos + len
    end
  end
  return out
end

for _, b in ipairs(H.backends) do
  describe("segmented folds on " .. b, function()
    local opts = { backend = b }

    it("foldSeg and fold1Seg agree with Lua loops, empty segments included", function()
      H.seed(801)
      for _, rows in ipairs { 1, 3 } do
        for _ = 1, 4 do
          local segs, n = {}, 0
          for s = 1, H.randint(0, 6) do
            segs[s] = H.randint(0, 5)
            n = n + segs[s]
          end
          local sh = rows == 1 and { n } or { rows, n }
          local xs, flat = H.random_array("i32", sh)
          local sa = lacc.fromtable(#segs > 0 and segs or {}, "i32")
          local want = ref_seg(function(a, c) return wrap32(a + c) end, 7, flat, rows, n, segs)
          local got = lacc.run(lacc.foldSeg(add, 7, xs, sa), opts)
          local osh = rows == 1 and { #segs } or { rows, #segs }
          assert.are.same(osh, got:shape())
          H.check_array(got, want)
          -- fold1Seg on the non-empty segments only
          local ne = {}
          for _, l in ipairs(segs) do if l > 0 then ne[#ne + 1] = l end end
          local want1 = ref_seg(math.max, nil, flat, rows, n, ne)
          H.check_array(lacc.run(lacc.fold1Seg(lacc.max, xs, lacc.fromtable(#ne > 0 and ne or {}, "i64")), opts), want1)
        end
      end
    end)

    it("fold1Seg of an empty segment and segments past the end are errors", function()
      local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
      local ok, err = pcall(lacc.run, lacc.fold1Seg(add, xs, lacc.fromtable({ 2, 0, 1 }, "i32")), opts)
      assert.is_false(ok)
      assert.truthy(err:find("out of bounds", 1, true))
      ok, err = pcall(lacc.run, lacc.foldSeg(add, 0, xs, lacc.fromtable({ 2, 5 }, "i32")), opts)
      assert.is_false(ok)
      assert.truthy(err:find("out of bounds", 1, true))
    end)
  end)

  describe("filter on " .. b, function()
    local opts = { backend = b }

    it("keeps the elements a predicate accepts, in order, with their count", function()
      H.seed(802)
      for _, sh in ipairs(H.shapes) do
        local xs, flat = H.random_array("f64", sh)
        for _, cut in ipairs { -200, 0, 50, 200 } do
          local want = {}
          for _, v in ipairs(flat) do if v > cut then want[#want + 1] = v end end
          local v, c = lacc.filter(function(x) return lacc.gt(x, cut) end, xs)
          local rv, rc = lacc.run({ v, c }, opts)
          assert.are.equal(#want, H.num(rc:get()))
          H.check_array(rv, want)
        end
      end
    end)

    it("filters tuples, and NaN fails every comparison", function()
      local T = lacc.tuple("i32", "f32")
      local xs = lacc.fromtable({ { 1, 0 / 0 }, { 2, 1.5 }, { 3, -1 }, { 4, 2 } }, T)
      local v, c = lacc.filter(function(p) return lacc.gt(p[2], 0) end, xs)
      local rv, rc = lacc.run({ v, c }, opts)
      assert.are.same({ { 2, 1.5 }, { 4, 2 } }, rv:totable())
      assert.are.equal(2, H.num(rc:get()))
    end)
  end)
end

describe("segmented folds and filter, errors at build time", function()
  it("name the combinator and what is wrong", function()
    local xs = lacc.fromtable({ 1, 2 }, "i32")
    local ok, err = pcall(lacc.foldSeg, add, 0, xs, lacc.fromtable({ 1.5 }, "f64"))
    assert.is_false(ok)
    assert.truthy(err:find("foldSeg: expected segment lengths as a rank-1 array of integers", 1, true))
    ok, err = pcall(lacc.filter, function(x) return x end, xs)
    assert.is_false(ok)
    assert.truthy(err:find("filter: the predicate must return bool, got i32", 1, true))
  end)
end)
