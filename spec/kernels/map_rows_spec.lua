-- Maps of rank 2 and more (lower_fold.c map_rows): on the cpu backend a thread's share of
-- the elements runs row by row, the outer indices from divisions once a row and a loop
-- along the row without them, so that reads whose outer index is fixed along the row have
-- their checks tested once a row. And selects between arms that cost nothing (constants,
-- variables, conds of them: lower_scalar.c free_arm) have no branch, so that a chain of
-- them (an argmin over unrolled candidates) vectorises. Checked against plain Lua loops
-- on every backend: shapes with extents 0 and 1, odd rows split between threads at any
-- element, index errors in the middle of a row (the same element and message as the
-- interpreter), sibling maps of rank 2, and the argmin chain with ties and NaN.
local H = require "helper"
local lacc = H.lacc

local SHAPES = { { 0, 5 }, { 5, 0 }, { 1, 1 }, { 3, 1 }, { 1, 7 }, { 7, 13 }, { 37, 1001 },
                 { 2, 3, 5 }, { 4, 0, 3 }, { 3, 1, 2, 5 }, { 1, 70001 } }

local function ints(n, lo, hi)
  local t = {}
  for i = 1, n do t[i] = H.randint(lo, hi) end
  return t
end

-- m[i1, ..., ir] = a[i1, ..., ir] * 3 + s[i1] - i_r, through `at` and an index of s
local function program(a, s, shape)
  return lacc.generate(shape, function(...)
    local ix = { ... }
    return a:at(...) * 3 + s[ix[1]] - lacc.cast(ix[#ix], "i32")
  end)
end

local function reference(at, st, shape)
  local out = {}
  for lin = 0, H.size(shape) - 1 do
    local ix = H.unravel(shape, lin)
    out[lin + 1] = at[lin + 1] * 3 + st[ix[1]] - ix[#ix]
  end
  return out
end

for _, b in ipairs(H.backends) do
  describe("maps of rank 2 and more row by row on " .. b, function()
    it("reads through at and of a row's array: every element as a Lua loop has it", function()
      H.seed(71)
      for _, shape in ipairs(SHAPES) do
        local n = H.size(shape)
        local at, st = ints(n, -1000, 1000), ints(shape[1], -50, 50)
        local a = lacc.reshape(shape, lacc.fromtable(at, "i32"))
        local s = lacc.fromtable(st, "i32")
        local r = lacc.run(program(lacc.run(a), s, shape), { backend = b })
        assert.are.same(shape, r:shape())
        H.check_array(r, reference(at, st, shape))
      end
    end)

    it("an index out of bounds in the middle of a row: the element and message the interpreter reports", function()
      -- s one shorter than the rows: row 37 of 37 reads past it at its first element
      for _, shape in ipairs { { 37, 1001 }, { 5, 3, 7 } } do
        local n = H.size(shape)
        local a = lacc.run(lacc.reshape(shape, lacc.fromtable(ints(n, 0, 9), "i32")))
        local s = lacc.fromtable(ints(shape[1] - 1, 0, 9), "i32")
        local ok1, e1 = pcall(lacc.run, program(a, s, shape), { backend = b })
        local ok2, e2 = pcall(lacc.run, program(a, s, shape), { backend = "interp" })
        assert.is_false(ok1)
        assert.is_false(ok2)
        assert.truthy(tostring(e1):find(("index (%d) out of bounds for shape (%d)"):format(shape[1], shape[1] - 1),
          1, true), tostring(e1))
        assert.are.equal(tostring(e2), tostring(e1))
      end
      -- the column read fails at one element inside a row (column 600 of 1001: a too short)
      local a = lacc.run(lacc.generate({ 37, 599 }, function(i, j) return lacc.cast(i * j, "i32") end))
      local p = lacc.generate({ 37, 1001 }, function(i, j)
        return lacc.cond(lacc.eq(i, 20), a:at(i, j), lacc.constant(0, "i32"))
      end)
      local ok1, e1 = pcall(lacc.run, p, { backend = b })
      local ok2, e2 = pcall(lacc.run, p, { backend = "interp" })
      assert.is_false(ok1)
      assert.is_false(ok2)
      assert.truthy(tostring(e1):find("index (20, 600) out of bounds for shape (37, 599)", 1, true), tostring(e1))
      assert.are.equal(tostring(e2), tostring(e1))
    end)

    it("sibling maps of rank 2 (unzip of computed pairs): one loop, both as a Lua loop has them", function()
      H.seed(72)
      for _, shape in ipairs { { 7, 13 }, { 0, 3 }, { 37, 1001 } } do
        local n = H.size(shape)
        local at = ints(n, -100, 100)
        local a = lacc.run(lacc.reshape(shape, lacc.fromtable(at, "i32")))
        local pairs_ = lacc.imap(function(i, j, x) return lacc.tuple(x + lacc.cast(i, "i32"), x * lacc.cast(j, "i32")) end, a)
        local u, v = lacc.unzip(pairs_)
        local r1, r2 = lacc.run({ u, v }, { backend = b })
        local w1, w2 = {}, {}
        for lin = 0, n - 1 do
          local ix = H.unravel(shape, lin)
          w1[lin + 1], w2[lin + 1] = at[lin + 1] + ix[1], at[lin + 1] * ix[2]
        end
        H.check_array(r1, w1)
        H.check_array(r2, w2)
      end
    end)

    it("the nearest of 9 centres by a chain of conds (the first wins a tie, NaN never nearer)", function()
      H.seed(73)
      local K, n = 9, 5003
      local cx, cy = {}, {}
      for c = 1, K do cx[c], cy[c] = H.randint(-4, 4), H.randint(-4, 4) end
      cx[5], cy[5] = cx[2], cy[2]   -- a tie at every point: centre 2 wins
      local xt, yt = {}, {}
      for i = 1, n do
        xt[i], yt[i] = H.randint(-8, 8) / 2, H.randint(-8, 8) / 2
        if i % 97 == 0 then xt[i] = 0 / 0 end
      end
      local cs = lacc.fromtable((function()
        local t = {}
        for c = 1, K do t[c] = { cx[c], cy[c] } end
        return t
      end)(), "f32")
      local p = lacc.zipWith(function(x, y)
        local best, bd = lacc.constant(1, "i32"), nil
        for c = 1, K do
          local dx, dy = x - cs:at(c, 1), y - cs:at(c, 2)
          local d = dx * dx + dy * dy
          if c == 1 then bd = d else
            local closer = lacc.lt(d, bd)
            best, bd = lacc.cond(closer, c, best), lacc.cond(closer, d, bd)
          end
        end
        return best
      end, lacc.fromtable(xt, "f32"), lacc.fromtable(yt, "f32"))
      local r = lacc.run(p, { backend = b })
      for i = 1, n do
        local best, bd = 1, nil
        for c = 1, K do
          local d = (xt[i] - cx[c]) ^ 2 + (yt[i] - cy[c]) ^ 2
          if c == 1 then bd = d elseif d < bd then best, bd = c, d end
        end
        assert.are.equal(best, r:get(i), "point " .. i)
      end
    end)
  end)
end

-- A map of several operands pulled at a row-major index (a total fold of it, a reshape):
-- each operand read there where its extents past the outermost are the map's, else at
-- the multi-index raveled again (lower_pull.c map_rows_agree: one kernel, a test at run
-- time). Every pairing against plain Lua loops: equal shapes, longer outer extents, longer
-- inner ones (the map takes the least), rank 3 with a middle extent apart, extents 0 and 1,
-- and one compiled function called with shapes of each kind.
local PAIRS = {
  { { 7, 13 }, { 7, 13 } }, { { 7, 13 }, { 9, 13 } }, { { 7, 13 }, { 7, 15 } }, { { 7, 15 }, { 9, 13 } },
  { { 2, 3, 5 }, { 2, 4, 5 } }, { { 2, 3, 5 }, { 3, 3, 5 } }, { { 2, 3, 5 }, { 2, 3, 6 } },
  { { 0, 5 }, { 0, 5 } }, { { 3, 0 }, { 3, 4 } }, { { 1, 1 }, { 1, 1 } }, { { 1, 70001 }, { 2, 70001 } },
}

-- the map's elements (a * 3 - b), row-major, over the least extents
local function least_map(at, as, bt, bs)
  local sh = {}
  for d = 1, #as do sh[d] = math.min(as[d], bs[d]) end
  local out = {}
  for lin = 0, H.size(sh) - 1 do
    local ix = H.unravel(sh, lin)
    local la, lb = 0, 0
    for d = 1, #sh do
      la = la * as[d] + ix[d] - 1
      lb = lb * bs[d] + ix[d] - 1
    end
    out[lin + 1] = at[la + 1] * 3 - bt[lb + 1]
  end
  return out, sh
end

for _, b in ipairs(H.backends) do
  describe("maps of several operands pulled at a row-major index on " .. b, function()
    it("a total sum and a flatten of zipWith: operands of the map's rows or longer ones", function()
      H.seed(79)
      local sum = lacc.compile(function(x, y)
        return lacc.sum(lacc.zipWith(function(u, v) return u * 3 - v end, x, y))
      end)
      -- (OpenCL: equal shapes, longer outer and inner extents, a middle one apart, an
      -- empty one: its program builds are most of its time)
      local on_cl = { [1] = true, [2] = true, [3] = true, [5] = true, [9] = true }
      for k, pair in ipairs(PAIRS) do
        if b == "opencl" and not on_cl[k] then goto next end
        local as, bs = pair[1], pair[2]
        local at, bt = ints(H.size(as), -1000, 1000), ints(H.size(bs), -1000, 1000)
        local x = lacc.run(lacc.reshape(as, lacc.fromtable(at, "i64")))
        local y = lacc.run(lacc.reshape(bs, lacc.fromtable(bt, "i64")))
        local want, sh = least_map(at, as, bt, bs)
        local total = 0
        for _, v in ipairs(want) do total = total + v end
        local what = table.concat(as, "x") .. " with " .. table.concat(bs, "x")
        assert.are.equal(total, lacc.run(lacc.sum(lacc.zipWith(function(u, v) return u * 3 - v end, x, y)),
          { backend = b }):get(), what)
        assert.are.equal(total, sum(x, y):get(), what .. " (compiled)")
        local flat = lacc.run(lacc.reshape({ H.size(sh) },
          lacc.zipWith(function(u, v) return u * 3 - v end, x, y)), { backend = b })
        H.check_array(flat, want)
        -- and the other way round: the operands swapped, f64 (exact: whole numbers)
        local xf = lacc.run(lacc.map(function(v) return lacc.cast(v, "f64") end, y))
        local yf = lacc.run(lacc.map(function(v) return lacc.cast(v, "f64") end, x))
        local want2 = least_map(bt, bs, at, as)
        local t2 = 0
        for _, v in ipairs(want2) do t2 = t2 + v end
        assert.are.equal(t2, lacc.run(lacc.sum(lacc.zipWith3(function(u, v, w) return u * 3 - v + w * 0 end,
          xf, yf, xf)), { backend = b }):get(), what .. " (f64, zipWith3)")
        ::next::
      end
    end)
  end)
end

describe("maps of rank 2 on the cpu backend", function()
  it("a read of a row's array and one through at: tested once a row, not at each element", function()
    local a = lacc.fromtable({ { 1, 2, 3 }, { 4, 5, 6 } }, "f32")
    local s = lacc.fromtable({ 2, 4 }, "f32")
    local p = lacc.generate({ 2, 3 }, function(i, j) return a:at(i, j) / s[i] end)
    local text = lacc.explain(p, { backend = "cpu" })
    assert.truthy(text:find("checks per element: 0 of 2 left, 2 tested once before their loop", 1, true), text)
    H.check_array(lacc.run(p, { backend = "cpu" }), { 0.5, 1, 1.5, 1, 1.25, 1.5 })
  end)
end)
