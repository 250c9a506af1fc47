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

-- Each segment of each row scanned on its own, with or without z.
local function seg_scan_ref(kind, f, z, flat, rows, n, segs)
  local out = {}
  for r = 0, rows - 1 do
    local pos = 0
    for _, len in ipairs(segs) do
      local seg = {}
      for j = 1, len do seg[j] = flat[r * n + pos + j] end
      local res = {}
      if kind == "scanl1Seg" or kind == "scanlSeg" then
        local acc = z
        if kind == "scanlSeg" then res[1] = z end
        for j = 1, len do
          acc = (acc == nil) and seg[j] or f(acc, seg[j])
          res[#res + 1] = acc
        end
      else
        local acc, tail = z, {}
        for j = len, 1, -1 do
          acc = (acc == nil) and seg[j] or f(seg[j], acc)
          table.insert(tail, 1, acc)
        end
        if kind == "scanrSeg" then tail[#tail + 1] = z end
        res = tail
      end
      for _, v in ipairs(res) do out[#out + 1] = v end
      pos = pos + len
    end
  end
  return out
end

-- the exclusive scan of each segment and its total, from the reference's scanlSeg /
-- scanrSeg blocks (len + 1 values each: z first, or z last)
local function split_ref(right, f, z, flat, rows, n, segs)
  local blocks = seg_scan_ref(right and "scanrSeg" or "scanlSeg", f, z, flat, rows, n, segs)
  local values, totals, k = {}, {}, 0
  for _ = 1, rows do
    for _, len in ipairs(segs) do
      local blk = {}
      for j = 1, len + 1 do blk[j] = blocks[k + j] end
      k = k + len + 1
      for j = 1, len do values[#values + 1] = right and blk[j + 1] or blk[j] end
      totals[#totals + 1] = right and blk[1] or blk[len + 1]
    end
  end
  return values, totals
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

  describe("segmented scans on " .. b, function()
    local opts = { backend = b }
    local ref = seg_scan_ref

    it("scanl1Seg, scanr1Seg, scanlSeg and scanrSeg agree with Lua loops", function()
      H.seed(803)
      local sub = function(a, c) return wrap32(a - c) end
      for _, rows in ipairs { 1, 2 } do
        for _ = 1, 4 do
          local segs, n = {}, 0
          for s = 1, H.randint(0, 5) do
            segs[s] = H.randint(0, 4)
            n = n + segs[s]
          end
          local sh = rows == 1 and { n } or { rows, n }
          local xs, flat = H.random_array("i32", sh)
          local sa = lacc.fromtable(#segs > 0 and segs or {}, "i32")
          for _, kind in ipairs { "scanl1Seg", "scanr1Seg", "scanlSeg", "scanrSeg" } do
            local p = kind:find("1") and lacc[kind](function(a, c) return a - c end, xs, sa)
                                     or lacc[kind](function(a, c) return a - c end, 5, xs, sa)
            local want = ref(kind, sub, not kind:find("1") and 5 or nil, flat, rows, n, segs)
            local ok, err = pcall(H.check_array, lacc.run(p, opts), want)
            if not ok then error(kind .. ": " .. tostring(err)) end
          end
        end
      end
    end)
  end)

  describe("primed segmented scans on " .. b, function()
    local opts = { backend = b }
    it("scanlSeg_ and scanrSeg_ give each segment's exclusive scan and its total", function()
      H.seed(805)
      local sub = function(a, c) return wrap32(a - c) end
      for _, rows in ipairs { 1, 3 } do
        for _ = 1, 5 do
          local segs, n = {}, 0
          for s = 1, H.randint(0, 6) do
            segs[s] = H.randint(0, 5)
            n = n + segs[s]
          end
          local sh = rows == 1 and { n } or { rows, n }
          local xs, flat = H.random_array("i32", sh)
          local sa = lacc.fromtable(#segs > 0 and segs or {}, "i32")
          for _, right in ipairs { false, true } do
            local name = right and "scanrSeg_" or "scanlSeg_"
            local v, t = lacc[name](function(a, c) return a - c end, 5, xs, sa)
            local rv, rt = lacc.run({ v, t }, opts)
            local wv, wt = split_ref(right, sub, 5, flat, rows, n, segs)
            assert.are.same(sh, rv:shape(), name)
            assert.are.same(rows == 1 and { #segs } or { rows, #segs }, rt:shape(), name)
            local ok, err = pcall(H.check_array, rv, wv)
            if not ok then error(name .. " values: " .. tostring(err)) end
            ok, err = pcall(H.check_array, rt, wt)
            if not ok then error(name .. " totals: " .. tostring(err)) end
          end
        end
      end
    end)

    it("hand-computed: segments 2, 0, 3 of 1..5 with +", function()
      local xs = lacc.fromtable({ 1, 2, 3, 4, 5 }, "i64")
      local sa = lacc.fromtable({ 2, 0, 3 }, "i32")
      local v, t = lacc.scanlSeg_(function(a, c) return a + c end, 10, xs, sa)
      local rv, rt = lacc.run({ v, t }, opts)
      H.check_array(rv, { 10, 11, 10, 13, 17 })
      H.check_array(rt, { 13, 10, 22 })
      v, t = lacc.scanrSeg_(function(a, c) return a + c end, 10, xs, sa)
      rv, rt = lacc.run({ v, t }, opts)
      H.check_array(rv, { 12, 10, 19, 15, 10 })
      H.check_array(rt, { 13, 10, 22 })
    end)
  end)

  describe("segmented combinators of tuples on " .. b, function()
    local opts = { backend = b }
    -- f returns several values: a tuple, as in every other combinator (issue 27)
    local f = function(a, c) return a[1] - c[1], a[2] + c[2] end
    local fl = function(a, c) return { wrap32(a[1] - c[1]), wrap32(a[2] + c[2]) } end
    it("all eight take a function that returns several values", function()
      local segs, vals = { 2, 0, 3, 1 }, { { 1, 2 }, { 30, 4 }, { 5, 60 }, { 7, -8 }, { 9, 10 }, { -11, 12 } }
      local xs = lacc.fromtable(vals, lacc.tuple("i32", "i32"))
      local sa = lacc.fromtable(segs, "i32")
      local z = lacc.tuple(lacc.constant(100, "i32"), lacc.constant(-1, "i32"))
      local zl = { 100, -1 }
      local cases = {
        { lacc.foldSeg(f, z, xs, sa), ref_seg(fl, zl, vals, 1, #vals, segs) },
        { lacc.fold1Seg(f, xs, lacc.fromtable({ 2, 3, 1 }, "i32")), ref_seg(fl, nil, vals, 1, #vals, { 2, 3, 1 }) },
      }
      local scans = { scanl1Seg = false, scanr1Seg = false, scanlSeg = true, scanrSeg = true }
      for kind, with_z in pairs(scans) do
        local p = with_z and lacc[kind](f, z, xs, sa) or lacc[kind](f, xs, sa)
        cases[#cases + 1] = { p, seg_scan_ref(kind, fl, with_z and zl or nil, vals, 1, #vals, segs), kind }
      end
      for _, right in ipairs { false, true } do
        local name = right and "scanrSeg_" or "scanlSeg_"
        local v, t = lacc[name](f, z, xs, sa)
        local wv, wt = split_ref(right, fl, zl, vals, 1, #vals, segs)
        cases[#cases + 1] = { v, wv, name .. " values" }
        cases[#cases + 1] = { t, wt, name .. " totals" }
      end
      for _, c in ipairs(cases) do
        local got = lacc.run(c[1], opts):totable()
        assert.are.same(c[2], got, c[3])
      end
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

    it("with per_row counts each row (Accelerate's filter), the values as without", function()
      H.seed(806)
      for _, sh in ipairs { { 1 }, { 7 }, { 0 }, { 3, 5 }, { 4, 0 }, { 0, 3 }, { 2, 3, 4 } } do
        local xs, flat = H.random_array("i32", sh)
        local want, counts = {}, {}
        local row = sh[#sh]
        for k, v in ipairs(flat) do
          local r = math.floor((k - 1) / row) + 1
          counts[r] = counts[r] or 0
          if v % 3 == 0 then
            want[#want + 1] = v
            counts[r] = counts[r] + 1
          end
        end
        local outer = {}
        for d = 1, #sh - 1 do outer[d] = sh[d] end
        local nrows = H.size(outer)
        for r = 1, nrows do counts[r] = counts[r] or 0 end
        local v, c = lacc.filter(function(x) return lacc.eq(lacc.imod(x, 3), 0) end, xs,
                                 { per_row = true })
        local rv, rc = lacc.run({ v, c }, opts)
        H.check_array(rv, want)
        assert.are.same(outer, rc:shape())
        H.check_array(rc, counts)
        -- the method form takes the options too
        local v2, c2 = xs:filter(function(x) return lacc.eq(lacc.imod(x, 3), 0) end, { per_row = true })
        local rv2, rc2 = lacc.run({ v2, c2 }, opts)
        H.check_array(rv2, want)
        H.check_array(rc2, counts)
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

describe("segmented scans on cpu, long rows", function()
  it("agree with the interpreter across chunks", function()
    local n = 200003
    local xs = lacc.run(lacc.generate({ n }, function(i) return lacc.cast(lacc.imod(i * 37, 101) - 50, "i32") end))
    local segs = {}
    local left = n
    local k = 1
    while left > 0 do
      local len = math.min(left, (k * 7919) % 40000)
      segs[#segs + 1] = len
      left = left - len
      k = k + 1
    end
    local sa = lacc.fromtable(segs, "i32")
    for _, kind in ipairs { "scanl1Seg", "scanrSeg" } do
      local p = kind == "scanl1Seg" and lacc.scanl1Seg(function(a, c) return a - c end, xs, sa)
                                   or lacc.scanrSeg(function(a, c) return a - c end, 3, xs, sa)
      local c = lacc.run(p, { backend = "cpu" })
      local i = lacc.run(p, { backend = "interp" })
      assert.are.equal(#i, #c)
      for j = 0, #i - 1, 97 do assert.are.equal(i:at_linear(j), c:at_linear(j), kind) end
      assert.are.equal(i:at_linear(#i - 1), c:at_linear(#c - 1))
    end
  end)
end)

describe("segmented folds and filter, errors at build time", function()
  it("name the combinator and what is wrong", function()
    local xs = lacc.fromtable({ 1, 2 }, "i32")
    local ok, err = pcall(lacc.foldSeg, add, 0, xs, lacc.fromtable({ 1.5 }, "f64"))
    assert.is_false(ok)
    assert.truthy(err:find("foldSeg: expected segment lengths as a rank-1 array of integers", 1, true))
    ok, err = pcall(lacc.filter, function(x) return x end, xs)
    assert.is_false(ok)
    assert.truthy(err:find("filter: the predicate must return bool, got i32", 1, true))
    ok, err = pcall(lacc.filter, function(x) return lacc.gt(x, 1) end, xs, { rows = true })
    assert.is_false(ok)
    assert.truthy(err:find("filter: unknown option rows (it takes per_row)", 1, true))
    ok, err = pcall(lacc.filter, function(x) return lacc.gt(x, 1) end, lacc.unit(lacc.constant(1, "i32")),
                    { per_row = true })
    assert.is_false(ok)
    assert.truthy(err:find("filter: per_row needs an array of rank 1 or more", 1, true))
  end)
end)
