-- Variant-wise collections (issue 7): partition and merge, and every combinator that
-- accepts a collection, against the same combinator on the element-wise array and
-- against plain Lua, on every backend, for random data (empty arrays, a constructor with
-- no elements, NaN, odd sizes) stored in every layout.
local H = require "helper"
local lacc = H.lacc

local Shape, area_ref = H.Shape, H.area_ref
local function area(s)
  return lacc.match(s, {
    Circle = function(r) return r * r * 3 end,
    Rect = function(w, h) return w * h end,
    Empty = function() return lacc.constant(0, "f32") end,
  })
end

-- mix: which constructors occur ("all", or a list of names: the others have no elements)
local function shapes(n, mix)
  local vals = {}
  for i = 1, n do
    local r = H.rand()
    local tag = r < 0.4 and "Circle" or r < 0.8 and "Rect" or "Empty"
    if mix ~= "all" then tag = mix[1 + (i % #mix)] end
    if tag == "Circle" then vals[i] = { tag = "Circle", H.f32(H.rand() * 10) }
    elseif tag == "Rect" then vals[i] = { tag = "Rect", H.f32(H.rand() * 10), H.f32(H.rand() * 10) }
    else vals[i] = { tag = "Empty" } end
  end
  if n >= 3 and vals[3].tag == "Circle" then vals[3][1] = 0 / 0 end
  return vals
end

local function same_list(want, got, what)
  assert.are.equal(#want, #got, what)
  for i = 1, #want do
    if not H.same(want[i], got[i]) then
      error(("%s: element %d: expected %s, got %s"):format(what, i, tostring(want[i]), tostring(got[i])), 2)
    end
  end
end

local function same_shapes(want, got, what)
  assert.are.equal(#want, #got, what)
  for i = 1, #want do
    assert.are.equal(want[i].tag, got[i].tag, what .. " " .. i)
    for k = 1, #want[i] do
      if not H.same(want[i][k], got[i][k]) then
        error(("%s: element %d field %d: expected %s, got %s"):format(what, i, k, tostring(want[i][k]), tostring(got[i][k])), 2)
      end
    end
  end
end

local cases = {
  { n = 0, mix = "all" }, { n = 1, mix = "all" }, { n = 7, mix = "all" }, { n = 1001, mix = "all" },
  { n = 13, mix = { "Rect", "Empty" } },   -- no Circle at all
  { n = 9, mix = { "Circle" } },
}

-- f(c, vals, xs) for each case: its shapes and their element-wise array.
local function each_case(f)
  for _, c in ipairs(cases) do
    local vals = shapes(c.n, c.mix)
    f(c, vals, lacc.fromtable(vals, Shape))
  end
end

for _, backend in ipairs(H.backends) do
  local opts = { backend = backend }
  describe("collections on " .. backend, function()
    after_each(function() lacc.set_layout("compact") end)

    it("partition keeps each constructor's elements in order with their positions; merge undoes it", function()
      for _, layout in ipairs { "unboxed", "rtu", "compact" } do
        lacc.set_layout(layout)
        for _, c in ipairs(cases) do
          local vals = shapes(c.n, c.mix)
          local xs = lacc.fromtable(vals, Shape)
          local coll = lacc.run(lacc.partition(xs), opts)
          assert.truthy(lacc.is_collection(coll))
          local names = { "Circle", "Rect", "Empty" }
          for k, g in ipairs(coll.groups) do
            assert.are.equal(k, g.con)
            local pos, data = {}, {}
            for i, v in ipairs(vals) do
              if v.tag == names[k] then
                pos[#pos + 1] = i - 1
                data[#data + 1] = v
              end
            end
            same_list(pos, g.host.pos:totable(), layout .. " positions of " .. names[k])
            if k == 1 then
              local d = {}
              for i, v in ipairs(data) do d[i] = v[1] end
              same_list(d, g.host.data:totable(), layout .. " Circle payloads")
            elseif k == 2 then
              local got = g.host.data:totable()
              assert.are.equal(#data, #got)
              for i, v in ipairs(data) do same_list({ v[1], v[2] }, got[i], "Rect payload " .. i) end
            else
              assert.is_nil(g.data)   -- a constructor without fields: positions only
            end
          end
          same_shapes(vals, lacc.run(lacc.merge(coll), opts):totable(), layout .. " merge")
          same_shapes(vals, lacc.run(lacc.merge(lacc.partition(xs)), opts):totable(), layout .. " merge, one program")
        end
      end
    end)

    it("map gives the element-wise map's answers, split, joined or by the rule", function()
      each_case(function(c, vals, xs)
        local want = {}
        for i, v in ipairs(vals) do want[i] = area_ref(v) end
        same_list(want, lacc.run(lacc.map(area, xs), opts):totable(), "element-wise")
        local coll = lacc.partition(xs)
        for _, strategy in ipairs { "split", "joined", "auto" } do
          local m = lacc.map(area, coll, { strategy = strategy })
          assert.truthy(lacc.is_collection(m))
          same_list(want, lacc.run(lacc.merge(m), opts):totable(), strategy .. " n=" .. c.n)
        end
        -- on a collection already computed, and as a method
        local host = lacc.run(coll, opts)
        same_list(want, lacc.run(lacc.merge(host:map(area)), opts):totable(), "host collection")
      end)
    end)

    it("a map whose results are made by known constructors keeps the collection variant-wise", function()
      local vals = shapes(101, "all")
      local xs = lacc.fromtable(vals, Shape)
      local grow = function(s)
        return lacc.match(s, {
          Circle = function(r) return Shape.Circle(r * 2) end,
          Rect = function(w, h) return Shape.Rect(h, w) end,
          Empty = function() return Shape.Empty() end,
        })
      end
      local m = lacc.map(grow, lacc.partition(xs))
      for k, g in ipairs(m.groups) do assert.are.equal(k, g.con) end   -- fmap on Just stays Just
      local want = lacc.run(lacc.map(grow, xs), opts):totable()
      same_shapes(want, lacc.run(lacc.merge(m), opts):totable(), "variant-wise map")
      -- joined on request: one element-wise group
      local j = lacc.map(grow, lacc.partition(xs), { strategy = "joined" })
      assert.are.equal(1, #j.groups)
      assert.is_nil(j.groups[1].con)
      same_shapes(want, lacc.run(lacc.merge(j), opts):totable(), "joined map")
    end)

    it("split groups are compiled without a tag test", function()
      local xs = lacc.fromtable(shapes(20, "all"), Shape)
      local coll = lacc.partition(xs)
      local m = lacc.map(area, coll, { strategy = "split" })
      local function cases_in(a)
        local _, n = lacc.explain(a):gsub("case ", "")
        return n
      end
      for k, g in ipairs(m.groups) do
        -- the partition's own matches are in the program; the map adds none
        local src = coll.groups[k].data or coll.groups[k].pos
        assert.is_true(cases_in(src) > 0)
        assert.are.equal(cases_in(src), cases_in(g.data))
      end
      -- the negative control: the element-wise map has its tag test
      assert.are.equal(1, cases_in(lacc.map(area, xs)))
    end)

    it("zipWith and imap see each element's partners at its position", function()
      each_case(function(c, vals, xs)
        local w = {}
        for i = 1, c.n do w[i] = i * 3 - 7 end
        local ws = lacc.fromtable(w, "f32")
        local coll = lacc.partition(xs)
        local want, iwant = {}, {}
        for i, v in ipairs(vals) do
          want[i] = H.f32(area_ref(v) + w[i])
          iwant[i] = H.f32(area_ref(v) + i)
        end
        for _, strategy in ipairs { "split", "joined" } do
          local z = lacc.zipWith(function(s, y) return area(s) + y end, coll, ws, { strategy = strategy })
          same_list(want, lacc.run(lacc.merge(z), opts):totable(), "zipWith " .. strategy)
          local im = lacc.imap(function(i, s) return area(s) + lacc.cast(i, "f32") end, coll, { strategy = strategy })
          same_list(iwant, lacc.run(lacc.merge(im), opts):totable(), "imap " .. strategy)
        end
        local z3 = lacc.zipWith3(function(s, y, x) return area(s) + y - x end, coll, ws, ws)
        local w3 = {}
        for i, v in ipairs(vals) do w3[i] = H.f32(H.f32(area_ref(v) + w[i]) - w[i]) end
        same_list(w3, lacc.run(lacc.merge(z3), opts):totable(), "zipWith3")
        -- a collection as a partner: merged back first
        local z2 = lacc.zipWith(function(s, a) return area(s) + a end, coll, lacc.map(area, coll))
        local twice = {}
        for i, v in ipairs(vals) do twice[i] = H.f32(area_ref(v) * 2) end
        same_list(twice, lacc.run(lacc.merge(z2), opts):totable(), "zipWith of two collections")
      end)
    end)

    it("folds over a collection agree with the element-wise folds", function()
      each_case(function(c, vals, xs)
        local coll = lacc.partition(xs)
        -- integer values: sums are exact in any order
        local code = function(s)
          return lacc.match(s, {
            Circle = function(r) return lacc.cast(lacc.cond(lacc.isnan(r), 0, r), "i32") * 7 + 1 end,
            Rect = function(w, h) return lacc.cast(w, "i32") - lacc.cast(h, "i32") * 3 end,
            Empty = function() return lacc.constant(-5, "i32") end,
          })
        end
        local ints, areas = lacc.map(code, coll), lacc.map(area, coll)
        local ei, ea = lacc.map(code, xs), lacc.map(area, xs)
        local function both(f)
          local a = lacc.run(f(ints, areas), opts):get()
          local b = lacc.run(f(ei, ea), opts):get()
          return a, b
        end
        local function agree(name, f)
          local a, b = both(f)
          assert.truthy(H.same(b, a), ("%s n=%d: %s vs %s"):format(name, c.n, tostring(a), tostring(b)))
        end
        agree("sum", function(i) return lacc.sum(i) end)
        agree("fold", function(i) return lacc.fold(function(a, b) return a + b end, 1000, i) end)
        agree("product", function(i) return lacc.product(lacc.map(function(v) return lacc.band(v, 3) end, i)) end)
        if c.n > 0 then
          -- float max is not commutative with NaN (which NaN wins depends on the order),
          -- and a collection folds in group order: NaN-free here
          agree("maximum of areas", function(_, a)
            return lacc.maximum(lacc.map(function(v) return lacc.cond(lacc.isnan(v), 0, v) end, a))
          end)
          agree("minimum", function(i) return lacc.minimum(i) end)
        end
        agree("and_", function(i) return lacc.and_(lacc.map(function(v) return lacc.gt(v, -100) end, i)) end)
        agree("or_", function(i) return lacc.or_(lacc.map(function(v) return lacc.gt(v, 50) end, i)) end)
        agree("all", function(i) return lacc.all(function(v) return lacc.ne(v, -5) end, i) end)
        agree("any", function(i) return lacc.any(function(v) return lacc.eq(v, -5) end, i) end)
        if c.n == 0 then
          -- fold1 of nothing is the same error either way
          local ok1 = pcall(lacc.run, lacc.maximum(ints), opts)
          local ok2 = pcall(lacc.run, lacc.maximum(ei), opts)
          assert.is_false(ok1)
          assert.is_false(ok2)
        end
        -- the folds take collections of sum types too (over their elements, in group order)
        agree("any on the shapes", function()
          return lacc.any(function(s) return lacc.gt(area(s), 20) end, c.n > 0 and coll or xs)
        end)
      end)
    end)

    it("runs a collection of many constructors (more arrays than one run returns)", function()
      local cons = {}
      for k = 1, 12 do cons[k] = { "K" .. k, "i32" } end
      local Many = lacc.data("Many", cons)
      local vals = {}
      for i = 1, 50 do vals[i] = { tag = "K" .. (i % 12 + 1), i * 7 } end
      local xs = lacc.fromtable(vals, Many)
      local coll = lacc.run(lacc.partition(xs), opts)
      assert.are.equal(12, #coll.groups)
      for k, g in ipairs(coll.groups) do
        local want = {}
        for i, v in ipairs(vals) do if v.tag == "K" .. k then want[#want + 1] = i * 7 end end
        same_list(want, g.host.data:totable(), "K" .. k)
      end
      local back = lacc.run(lacc.merge(coll), opts):totable()
      for i, v in ipairs(vals) do
        assert.are.equal(v.tag, back[i].tag)
        assert.are.equal(v[1], H.num(back[i][1]))
      end
    end)

    it("says what is wrong", function()
      local xs = lacc.fromtable({ 1, 2 }, "i32")
      local ok, err = pcall(lacc.partition, xs)
      assert.is_false(ok)
      assert.truthy(err:find("partition: expected an array of a sum type, got i32", 1, true), err)
      local s2 = lacc.reshape({ 1, 2 }, lacc.fromtable(shapes(2, "all"), Shape))
      ok, err = pcall(lacc.partition, s2)
      assert.is_false(ok)
      assert.truthy(err:find("rank 1", 1, true), err)
      local coll = lacc.partition(lacc.fromtable(shapes(4, "all"), Shape))
      ok, err = pcall(lacc.map, area, coll, { strategy = "sideways" })
      assert.is_false(ok)
      assert.truthy(err:find("strategy must be", 1, true), err)
      ok, err = pcall(lacc.map, 42, coll)
      assert.is_false(ok)
      assert.truthy(err:find("expected a function", 1, true), err)
      local mixed = function(s)
        return lacc.match(s, { Circle = function(r) return r end, Rect = function(w) return lacc.cast(w, "i32") end,
                               Empty = function() return lacc.constant(0, "f32") end })
      end
      for _, strategy in ipairs { "split", "joined" } do
        ok, err = pcall(lacc.map, mixed, coll, { strategy = strategy })
        assert.is_false(ok, strategy)
        assert.truthy(err:find("f32", 1, true) and err:find("i32", 1, true), err)
      end
      -- and lacc keeps working
      assert.are.same({ 1, 2 }, lacc.run(xs, opts):totable())
    end)
  end)
end

-- examples/nearest.lua against the same geometry in plain Lua (doubles).
local N = assert(loadfile("examples/nearest.lua"))("library")
local function nearest_ref(prims)
  local o, d = N.origin, N.direction
  local function dot(a, b) return a[1] * b[1] + a[2] * b[2] + a[3] * b[3] end
  local function sub(a, b) return { a[1] - b[1], a[2] - b[2], a[3] - b[3] } end
  local function cross(a, b) return { a[2] * b[3] - a[3] * b[2], a[3] * b[1] - a[1] * b[3], a[1] * b[2] - a[2] * b[1] } end
  local function hit(t) return t > 1e-4 and t or math.huge end
  local best, at = math.huge, nil
  for i, p in ipairs(prims) do
    local t = math.huge
    if p.tag == "Sphere" then
      local oc = sub(o, { p[1], p[2], p[3] })
      local b = dot(oc, d)
      local disc = b * b - (dot(oc, oc) - p[4] * p[4])
      if disc >= 0 then
        local s = math.sqrt(disc)
        t = hit(-b - s > 1e-4 and -b - s or -b + s)
      end
    elseif p.tag == "Plane" then
      local nrm = { p[1], p[2], p[3] }
      local den = dot(nrm, d)
      if math.abs(den) >= 1e-6 then t = hit((p[4] - dot(nrm, o)) / den) end
    else
      local a = { p[1], p[2], p[3] }
      local e1, e2 = sub({ p[4], p[5], p[6] }, a), sub({ p[7], p[8], p[9] }, a)
      local pv = cross(d, e2)
      local det = dot(e1, pv)
      local s = sub(o, a)
      local u = dot(s, pv) / det
      local q = cross(s, e1)
      local v = dot(d, q) / det
      if not (math.abs(det) < 1e-7 or u < 0 or u > 1 or v < 0 or u + v > 1) then t = hit(dot(e2, q) / det) end
    end
    if t < best then best, at = t, i end
  end
  return best, at
end

for _, backend in ipairs(H.backends) do
  describe("examples/nearest.lua on " .. backend, function()
    after_each(function() lacc.set_layout("compact") end)
    it("finds the primitive plain Lua finds, element-wise in every layout and variant-wise", function()
      for _, sorted in ipairs { false, true } do
        local prims = N.scene(500, sorted)
        -- f32 storage, as lacc holds the scene
        for _, p in ipairs(prims) do for k = 1, #p do p[k] = H.f32(p[k]) end end
        local want_t, want_i = nearest_ref(prims)
        assert.truthy(want_i)
        local function check(what, r)
          local v = lacc.run(r, { backend = backend }):get()
          assert.are.equal(want_i, H.num(v[2]), what)
          assert.truthy(math.abs(v[1] - want_t) <= 1e-3 * want_t, what .. ": " .. v[1] .. " vs " .. want_t)
        end
        for _, layout in ipairs { "unboxed", "rtu", "compact" } do
          lacc.set_layout(layout)
          local xs = lacc.fromtable(prims, N.Prim)
          check(layout, N.nearest(xs, N.origin, N.direction))
          for _, strategy in ipairs { "split", "joined" } do
            check(layout .. " " .. strategy, N.nearest(lacc.partition(xs), N.origin, N.direction, { strategy = strategy }))
          end
        end
      end
    end)
  end)
end
