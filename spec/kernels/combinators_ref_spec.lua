-- Every combinator of the foundation against plain-Lua reference loops, on every
-- backend, over the shapes of H.shapes (rank 0, empty, odd sizes, ranks 1-3).
local H = require "helper"
local lacc = H.lacc
local unpack = table.unpack or unpack

local function with_rank(min)
  local r = {}
  for _, s in ipairs(H.shapes) do if #s >= min then r[#r + 1] = s end end
  return r
end


-- reference fold along the innermost dimension of a flat table
local function ref_fold(flat, shape, f, z)
  local inner = shape[#shape]
  local outer = H.size(shape) / math.max(inner, 1)
  if inner == 0 then outer = H.size({ unpack(shape, 1, #shape - 1) }) end
  local out = {}
  for o = 1, outer do
    local acc = z
    for j = 1, inner do
      local x = flat[(o - 1) * inner + j]
      if acc == nil then acc = x else acc = f(acc, x) end
    end
    out[o] = acc
  end
  return out
end

for _, backend in ipairs(H.backends) do
  local function run(p) return lacc.run(p, { backend = backend }) end

  describe("combinators on " .. backend, function()
    it("use returns the array unchanged", function()
      for _, s in ipairs(H.shapes) do
        for _, t in ipairs { "f64", "f32", "i32", "u8", "bool", "i64" } do
          local a, flat = H.random_array(t, s)
          local r = run(lacc.use(a))
          assert.are.same(s, r:shape())
          H.check_array(r, flat)
        end
      end
    end)

    it("unit makes a rank-0 array", function()
      local r = run(lacc.unit(lacc.constant(2.5, "f32") * 2))
      assert.are.same({}, r:shape())
      assert.are.equal(5, r:get())
    end)

    it("generate passes 1-based indices", function()
      for _, s in ipairs(H.shapes) do
        local p = lacc.generate(s, function(...)
          local v = lacc.constant(7, "i64")
          for d, i in ipairs { ... } do v = v * 10 + i * d end
          return v
        end)
        local r = run(p)
        assert.are.same(s, r:shape())
        local ref = {}
        for lin = 0, H.size(s) - 1 do
          local v = 7
          for d, i in ipairs(H.unravel(s, lin)) do v = v * 10 + i * d end
          ref[lin + 1] = v
        end
        H.check_array(r, ref)
      end
    end)

    it("fill repeats one value", function()
      for _, s in ipairs(H.shapes) do
        local r = run(lacc.fill(s, lacc.constant(-3, "i16")))
        local ref = {}
        for i = 1, H.size(s) do ref[i] = -3 end
        assert.are.same(s, r:shape())
        H.check_array(r, ref)
      end
    end)

    it("map applies a function to every element", function()
      for _, s in ipairs(H.shapes) do
        local a, flat = H.random_array("f32", s)
        local r = run(lacc.map(function(x) return x * 2 + 1 end, a))
        local ref = {}
        for i, x in ipairs(flat) do ref[i] = H.f32(H.f32(x * 2) + 1) end
        H.check_array(r, ref)
        local b, bflat = H.random_array("i32", s)
        local rb = run(b:map(function(x) return lacc.cond(lacc.gt(x, 0), x, -x) end))
        local bref = {}
        for i, x in ipairs(bflat) do bref[i] = math.abs(x) end
        H.check_array(rb, bref)
      end
    end)

    it("imap passes indices then the element", function()
      for _, s in ipairs(with_rank(1)) do
        local a, flat = H.random_array("i64", s)
        local r = run(lacc.imap(function(...)
          local args = { ... }
          local v = args[#args]
          for d = 1, #args - 1 do v = v + args[d] * (d * 100) end
          return v
        end, a))
        local ref = {}
        for lin = 0, H.size(s) - 1 do
          local v = flat[lin + 1]
          for d, i in ipairs(H.unravel(s, lin)) do v = v + i * d * 100 end
          ref[lin + 1] = v
        end
        H.check_array(r, ref)
      end
    end)

    it("zipWith intersects shapes", function()
      local cases = { { { 5 }, { 3 } }, { { 0 }, { 4 } }, { { 3, 4 }, { 2, 6 } }, { {}, {} },
                      { { 2, 3, 1 }, { 3, 2, 2 } } }
      for _, c in ipairs(cases) do
        local a, fa = H.random_array("f64", c[1])
        local b, fb = H.random_array("f64", c[2])
        local r = run(lacc.zipWith(function(x, y) return x - y end, a, b))
        local s = {}
        for d = 1, #c[1] do s[d] = math.min(c[1][d], c[2][d]) end
        assert.are.same(s, r:shape())
        local ref = {}
        for lin = 0, H.size(s) - 1 do
          local ix = H.unravel(s, lin)
          ref[lin + 1] = fa[H.ravel(c[1], ix) + 1] - fb[H.ravel(c[2], ix) + 1]
        end
        H.check_array(r, ref)
      end
    end)

    it("zipWith3 and zipWith9", function()
      local a, fa = H.random_array("i32", { 6 })
      local b, fb = H.random_array("i32", { 5 })
      local c, fc = H.random_array("i32", { 7 })
      local r = run(lacc.zipWith3(function(x, y, z) return x * 3 + y - z end, a, b, c))
      local ref = {}
      for i = 1, 5 do ref[i] = fa[i] * 3 + fb[i] - fc[i] end
      H.check_array(r, ref)
      local r9 = run(lacc.zipWith9(function(...)
        local v = 0
        for _, x in ipairs { ... } do v = x + v * 2 end
        return v
      end, a, a, b, b, c, c, a, b, c))
      local ref9 = {}
      for i = 1, 5 do
        local v = 0
        for _, x in ipairs { fa[i], fa[i], fb[i], fb[i], fc[i], fc[i], fa[i], fb[i], fc[i] } do
          v = x + v * 2
        end
        ref9[i] = v
      end
      H.check_array(r9, ref9)
    end)

    it("zip and unzip", function()
      for _, s in ipairs(H.shapes) do
        local a, fa = H.random_array("f32", s)
        local b, fb = H.random_array("u8", s)
        local z = lacc.zip(a, b)
        local rz = run(z)
        assert.are.equal("(f32,u8)", rz:type())
        for i = 1, #fa do
          local e = rz:at_linear(i - 1)
          assert.are.equal(fa[i], e[1])
          assert.are.equal(fb[i], e[2])
        end
        local ua, ub = lacc.unzip(z)
        local ra, rb = lacc.run({ ua, ub }, { backend = backend })
        H.check_array(ra, fa)
        H.check_array(rb, fb)
      end
    end)

    it("fold reduces the innermost dimension, z once per result", function()
      for _, s in ipairs(with_rank(1)) do
        local a, flat = H.random_array("i32", s)
        local r = run(lacc.fold(function(x, y) return x * 3 + y end, 10, a))
        local os = { unpack(s, 1, #s - 1) }
        assert.are.same(os, r:shape())
        H.check_array(r, ref_fold(flat, s, function(x, y)
          -- wrap to i32 like the core
          local v = (x * 3 + y) % 4294967296
          if v >= 2147483648 then v = v - 4294967296 end
          return v
        end, 10))
      end
    end)

    it("fold1 takes the first element as the start", function()
      for _, s in ipairs(with_rank(1)) do
        if s[#s] > 0 then
          local a, flat = H.random_array("f64", s)
          local r = run(a:fold1(function(x, y) return lacc.max(x, y) - 1 end))
          H.check_array(r, ref_fold(flat, s, function(x, y) return math.max(x, y) - 1 end))
        end
      end
    end)

    it("sum, product, maximum, minimum over the whole array", function()
      for _, s in ipairs(H.shapes) do
        local a, flat = H.random_array("i64", s)
        local sum, mx, mn = 0, nil, nil
        for _, x in ipairs(flat) do
          sum = sum + x
          mx = mx and math.max(mx, x) or x
          mn = mn and math.min(mn, x) or x
        end
        assert.are.equal(sum, H.num(run(lacc.sum(a)):get()))
        if #flat > 0 then
          assert.are.equal(mx, H.num(run(lacc.maximum(a)):get()))
          assert.are.equal(mn, H.num(run(a:minimum()):get()))
        end
        local small = lacc.map(function(x) return lacc.imod(x, 3) + 1 end, a)
        local prod = 1
        for _, x in ipairs(flat) do prod = prod * (x % 3 + 1) end
        assert.are.equal(prod, H.num(run(lacc.product(small)):get()))
      end
    end)

    it("backpermute gathers with 1-based indices", function()
      for _, s in ipairs(with_rank(1)) do
        local a, flat = H.random_array("f64", s)
        -- reverse every dimension
        local p = lacc.backpermute(s, function(...)
          local ix = { ... }
          for d = 1, #ix do ix[d] = s[d] + 1 - ix[d] end
          return unpack(ix, 1, #s)
        end, a)
        local ref = {}
        for lin = 0, H.size(s) - 1 do
          local ix = H.unravel(s, lin)
          for d = 1, #s do ix[d] = s[d] + 1 - ix[d] end
          ref[lin + 1] = flat[H.ravel(s, ix) + 1]
        end
        H.check_array(run(p), ref)
      end
      -- rank change: a rank-1 array read as a 2-D table
      local v, fv = H.random_array("i32", { 12 })
      local m = run(lacc.backpermute({ 3, 4 }, function(i, j) return (i - 1) * 4 + j end, v))
      H.check_array(m, fv)
    end)

    it("reshape and flatten keep the elements", function()
      local a, flat = H.random_array("u16", { 2, 3, 4 })
      local r = run(lacc.reshape({ 4, 6 }, a))
      assert.are.same({ 4, 6 }, r:shape())
      H.check_array(r, flat)
      local f = run(lacc.flatten(a))
      assert.are.same({ 24 }, f:shape())
      H.check_array(f, flat)
      local e = run(lacc.reshape({ 0, 5 }, lacc.array("f32", { 0 })))
      assert.are.same({ 0, 5 }, e:shape())
    end)

    it("replicate adds dimensions", function()
      local a, flat = H.random_array("i8", { 3 })
      local r = run(lacc.replicate({ 2, lacc.all, 4 }, a))
      assert.are.same({ 2, 3, 4 }, r:shape())
      local ref = {}
      for i = 1, 2 do for j = 1, 3 do for k = 1, 4 do ref[#ref + 1] = flat[j] end end end
      H.check_array(r, ref)
      local z = run(lacc.replicate({ 0, lacc.all }, a))
      assert.are.same({ 0, 3 }, z:shape())
    end)

    it("slice fixes dimensions", function()
      local s = { 3, 4, 5 }
      local a, flat = H.random_array("f32", s)
      local r = run(lacc.slice(a, { 2, lacc.all, 5 }))
      assert.are.same({ 4 }, r:shape())
      local ref = {}
      for j = 1, 4 do ref[j] = flat[H.ravel(s, { 2, j, 5 }) + 1] end
      H.check_array(r, ref)
      local r2 = run(a:slice({ lacc.all, 1, lacc.all }))
      assert.are.same({ 3, 5 }, r2:shape())
      local ref2 = {}
      for i = 1, 3 do for k = 1, 5 do ref2[#ref2 + 1] = flat[H.ravel(s, { i, 1, k }) + 1] end end
      H.check_array(r2, ref2)
    end)

    it("transpose swaps the two dimensions", function()
      for _, s in ipairs { { 3, 5 }, { 0, 4 }, { 1, 1 }, { 7, 2 } } do
        local a, flat = H.random_array("f64", s)
        local r = run(lacc.transpose(a))
        assert.are.same({ s[2], s[1] }, r:shape())
        local ref = {}
        for j = 1, s[2] do for i = 1, s[1] do ref[#ref + 1] = flat[(i - 1) * s[2] + j] end end
        H.check_array(r, ref)
      end
    end)

    it("reverse and rotate act on the innermost dimension", function()
      for _, s in ipairs(with_rank(1)) do
        local a, flat = H.random_array("i32", s)
        local n = s[#s]
        local rev, rot, rotneg = {}, {}, {}
        for lin = 0, H.size(s) - 1 do
          local ix = H.unravel(s, lin)
          local i = ix[#s]
          ix[#s] = n + 1 - i
          rev[lin + 1] = flat[H.ravel(s, ix) + 1]
          ix[#s] = (i - 1 + 5) % n + 1
          rot[lin + 1] = flat[H.ravel(s, ix) + 1]
          ix[#s] = (i - 1 - 2) % n + 1
          rotneg[lin + 1] = flat[H.ravel(s, ix) + 1]
        end
        H.check_array(run(lacc.reverse(a)), rev)
        H.check_array(run(lacc.rotate(5, a)), rot)
        H.check_array(run(a:rotate(-2)), rotneg)
      end
      H.check_array(run(lacc.rotate(1, lacc.fromtable({ 1, 2, 3 }, "i32"))), { 2, 3, 1 })
    end)

    it("captured arrays are indexed and measured inside lambdas", function()
      local m, fm = H.random_array("f64", { 3, 4 })
      local v, fv = H.random_array("f64", { 4 })
      -- matrix-vector product through generate, lacc.shape and xs:at
      local mv = lacc.generate({ 3 }, function(i)
        local acc = lacc.constant(0, "f64")
        for j = 1, 4 do acc = acc + m:at(i, j) * v[j] end
        return acc
      end)
      local ref = {}
      for i = 1, 3 do
        local acc = 0
        for j = 1, 4 do acc = acc + fm[(i - 1) * 4 + j] * fv[j] end
        ref[i] = acc
      end
      H.check_array(run(mv), ref, 1e-12)
      local shp = run(lacc.generate({ 2 }, function(i)
        local s = lacc.shape(m)
        return lacc.cond(lacc.eq(i, 1), s[1], s[2]) * 100 + lacc.size(m)
      end))
      H.check_array(shp, { 312, 412 })
    end)

    it("run returns several arrays for a table of programs", function()
      local a, fa = H.random_array("f64", { 5 })
      local x, y, z = lacc.run({ lacc.map(function(e) return -e end, a), lacc.sum(a), a },
        { backend = backend })
      local neg, sum = {}, 0
      for i, e in ipairs(fa) do neg[i], sum = -e, sum + e end
      H.check_array(x, neg)
      assert.is_true(H.same(y:get(), sum, 1e-12))
      H.check_array(z, fa)
    end)
  end)
end

describe("host arrays", function()
  it("fromtable takes the shape from nested tables", function()
    local a = lacc.fromtable({ { 1, 2, 3 }, { 4, 5, 6 } }, "i32")
    assert.are.same({ 2, 3 }, a:shape())
    assert.are.equal(6, #a)
    assert.are.equal(6, a:get(2, 3))
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, a:totable())
    assert.are.equal("i32", a:type())
    local s = lacc.fromtable(4.5, "f64")
    assert.are.same({}, s:shape())
    assert.are.equal(4.5, s:get())
    local e = lacc.fromtable({}, "f32")
    assert.are.same({ 0 }, e:shape())
    assert.are.equal(0, #e)
  end)

  it("tuple elements are tables", function()
    local t = lacc.tuple("f64", lacc.tuple("i32", "bool"))
    local a = lacc.fromtable({ { 1.5, { 2, true } }, { -1, { 7, false } } }, t)
    assert.are.same({ 2 }, a:shape())
    assert.are.same({ 1.5, { 2, true } }, a[1])
    a:set(2, { 3, { 4, true } })
    assert.are.same({ 3, { 4, true } }, a:get(2))
    local r = lacc.run(lacc.map(function(p) return p[2][1] + 1 end, a))
    H.check_array(r, { 3, 5 })
  end)

  it("array(type, shape, fill), set and a[i]", function()
    local a = lacc.array("u8", { 4 }, 9)
    assert.are.same({ 9, 9, 9, 9 }, a:totable())
    a[2] = 300          -- stored modulo 2^8
    a:set(3, 1)
    assert.are.same({ 9, 44, 1, 9 }, a:totable())
    local b = lacc.array("f32", { 2, 2 })
    assert.are.same({ { 0, 0 }, { 0, 0 } }, b:totable())
  end)

  it("tostring shows shape, type and elements, elided when large", function()
    local a = lacc.fromtable({ 1, 2, 3 }, "i32")
    assert.are.equal("Array (3) i32 [1,2,3]", tostring(a))
    local big = lacc.array("u8", { 1000 })
    local s = tostring(big)
    assert.truthy(s:find("Array (1000) u8", 1, true))
    assert.truthy(s:find("...", 1, true))
    assert.is_true(#s < 400)
  end)
end)
