-- Folds of elements computed in strips (lower.c fold_strips): on the cpu backend a fold
-- whose elements have branch-free code (matches and conds speculated) computes each strip
-- of 256 elements first and folds it after. Checked against plain Lua loops on sum types
-- in random order, with NaN, infinities and integer extremes in the fields, sizes around
-- the strip length, rows of a rank-2 fold, and an arm that cannot be speculated (integer
-- division, whose check must still fire).
local H = require "helper"
local lacc = H.lacc

local Shape = lacc.data("StripShape", {
  { "Circle", "f32" },
  { "Rect", "f32", "f32" },
  { "Tri", "f32", "f32", "f32" },
  { "Count", "i32" },
})

local INF = math.huge
local function wrap32(x) return (x + 2 ^ 31) % 2 ^ 32 - 2 ^ 31 end

-- a random element as a Lua table, with the awkward values now and then
local specials = { 0 / 0, INF, -INF, 0, -0.0, 1e-45, 3.4e38 }
local function field()
  if H.rand() < 0.1 then return H.f32(specials[H.randint(1, #specials)]) end
  return H.f32(H.rand() * 200 - 100)
end
local ints = { -2 ^ 31, 2 ^ 31 - 1, 0, -1, 1 }
local function count()
  if H.rand() < 0.2 then return ints[H.randint(1, #ints)] end
  return H.randint(-100000, 100000)
end
local function element()
  local k = H.randint(1, 4)
  if k == 1 then return { tag = "Circle", field() } end
  if k == 2 then return { tag = "Rect", field(), field() } end
  if k == 3 then return { tag = "Tri", field(), field(), field() } end
  return { tag = "Count", count() }
end

-- the scalar function under test, and the same in Lua (f32 arithmetic, i32 wrapping)
local function value(s)
  local v = lacc.match(s, {
    Circle = function(r) return r * r * 3 end,
    Rect = function(w, h) return lacc.cond(lacc.gt(w, h), w * h, h - w) end,
    Tri = function(a, b, c) return a + b + c end,
    Count = function(k) return lacc.cast(k * 3 + 1, "f32") end,
  })
  return lacc.cond(lacc.isnan(v), lacc.constant(INF, "f32"), v)
end
local f32 = H.f32
local function value_ref(e)
  local v
  if e.tag == "Circle" then v = f32(f32(e[1] * e[1]) * 3)
  elseif e.tag == "Rect" then v = e[1] > e[2] and f32(e[1] * e[2]) or f32(e[2] - e[1])
  elseif e.tag == "Tri" then v = f32(f32(e[1] + e[2]) + e[3])
  else v = f32(wrap32(e[1] * 3 + 1)) end
  if v ~= v then v = INF end
  return v
end

-- the smaller value, then the smaller index: exact in any grouping
local function nearer(a, b)
  local take_b = lacc.lor(lacc.lt(b[1], a[1]), lacc.land(lacc.eq(b[1], a[1]), lacc.lt(b[2], a[2])))
  return lacc.cond(take_b, b, a)
end
local function nearer_ref(a, b)
  if b[1] < a[1] or (b[1] == a[1] and b[2] < a[2]) then return b end
  return a
end

local function program(xs)
  local ps = lacc.imap(function(...)
    local args = { ... }
    local s = args[#args]
    return lacc.tuple(value(s), args[#args - 1])
  end, xs)
  return lacc.fold(nearer, lacc.tuple(lacc.constant(INF, "f32"), lacc.constant(2 ^ 40, "i64")), ps)
end

-- rows of a rank-2 array (rows x cols): the nearest of each row, in Lua
local function reference(elems, rows, cols)
  local out = {}
  for r = 1, rows do
    local best = { INF, 2 ^ 40 }
    for c = 1, cols do
      best = nearer_ref(best, { value_ref(elems[(r - 1) * cols + c]), c })
    end
    out[r] = best
  end
  return out
end

local function check(res, ref)
  local t = res:totable()
  if #ref == 1 and res:shape()[1] == nil then t = { t } end
  assert.are.equal(#ref, #t)
  for r = 1, #ref do
    local got = t[r]
    assert.is_true(H.same(got[1], ref[r][1]), ("row %d: value %s, expected %s"):format(r, tostring(got[1]), tostring(ref[r][1])))
    assert.are.equal(ref[r][2], H.num(got[2]), ("row %d: index"):format(r))
  end
end

describe("folds in strips", function()
  for _, layout in ipairs { "compact", "unboxed" } do
    for _, b in ipairs(H.backends) do
      it(("match and cond speculated, rank 1, sizes around the strip (%s, %s)"):format(layout, b), function()
        lacc.set_layout(layout)
        H.seed(17)
        for _, n in ipairs { 0, 1, 255, 256, 257, 513, 3001 } do
          local elems = {}
          for i = 1, n do elems[i] = element() end
          local xs = lacc.fromtable(elems, Shape)
          check(lacc.run(program(xs), { backend = b }), reference(elems, 1, n))
        end
        lacc.set_layout("compact")
      end)
      it(("rows of a rank-2 fold (%s, %s)"):format(layout, b), function()
        lacc.set_layout(layout)
        H.seed(23)
        for _, shape in ipairs { { 3, 300 }, { 5, 1000 }, { 2, 256 } } do
          local elems = {}
          for i = 1, shape[1] * shape[2] do elems[i] = element() end
          local xs = lacc.reshape(shape, lacc.use(lacc.fromtable(elems, Shape)))
          check(lacc.run(program(xs), { backend = b }), reference(elems, shape[1], shape[2]))
        end
        lacc.set_layout("compact")
      end)
    end
  end

  for _, layout in ipairs { "compact", "unboxed" } do
    for _, b in ipairs(H.backends) do
      it(("a rank-1 map with its match speculated (%s, %s)"):format(layout, b), function()
        lacc.set_layout(layout)
        H.seed(31)
        for _, n in ipairs { 0, 1, 17, 1001 } do
          local elems, ref = {}, {}
          for i = 1, n do
            elems[i] = element()
            ref[i] = value_ref(elems[i])
          end
          local xs = lacc.fromtable(elems, Shape)
          H.check_array(lacc.run(lacc.map(value, xs), { backend = b }), ref)
        end
        lacc.set_layout("compact")
      end)
    end
  end

  -- an argmin's index leaf is arithmetic on the element's index: computed again where the
  -- strip is read back, not kept in it (one lane array, of the values)
  local function argmin(xs, index)
    local ps = lacc.imap(function(i, s) return lacc.tuple(value(s), index(i)) end, xs)
    return lacc.fold(nearer, lacc.tuple(lacc.constant(INF, "f32"), index(lacc.constant(2 ^ 30, "i64"))), ps)
  end
  local forms = {
    { "i * 3 - 7", function(i) return i * 3 - 7 end, function(i) return i * 3 - 7 end },
    { "the index as i32, negated", function(i) return 0 - lacc.cast(i, "i32") end,
      function(i) return -i end },
  }
  for _, b in ipairs(H.backends) do
    it("an index leaf computed again where the strip is read back, on " .. b, function()
      H.seed(29)
      for _, n in ipairs { 0, 1, 255, 256, 257, 700 } do
        local elems = {}
        for i = 1, n do elems[i] = element() end
        -- ties: equal values at several indices
        for i = 5, n, 50 do elems[i] = { tag = "Circle", 0 } end
        local xs = lacc.fromtable(elems, Shape)
        for _, f in ipairs(forms) do
          local best = { INF, f[3](2 ^ 30) }
          for i = 1, n do best = nearer_ref(best, { value_ref(elems[i]), f[3](i) }) end
          check(lacc.run(argmin(xs, f[2]), { backend = b }), { best })
        end
      end
    end)
  end
  it("keeps no lane array for such a leaf", function()
    local xs = lacc.fromtable({ { tag = "Circle", 1 } }, Shape)
    for _, f in ipairs(forms) do
      local src = lacc.explain(argmin(xs, f[2]), { source = true, backend = "cpu" })
      assert.is_truthy(src:find("float v%d+%[256%]"), f[1])
      assert.is_falsy(src:find("int%d+_t v%d+%[256%]"), f[1])
    end
  end)

  it("the cpu backend computes such a fold and such a map in strips", function()
    local xs = lacc.fromtable({ { tag = "Circle", 1 } }, Shape)
    local src = lacc.explain(program(xs), { source = true, backend = "cpu" })
    assert.is_truthy(src:find("[256]", 1, true), "no strip arrays in the generated C")
    src = lacc.explain(lacc.map(value, xs), { source = true, backend = "cpu" })
    assert.is_truthy(src:find("[256]", 1, true), "no strip arrays in the map's C")
  end)

  for _, b in ipairs(H.backends) do
    it("an arm with integer division is not speculated and its check still fires on " .. b, function()
      local function prog(xs)
        local ps = lacc.map(function(s)
          return lacc.match(s, {
            Circle = function(r) return lacc.cast(r, "i32") end,
            Rect = function(w) return lacc.cast(w, "i32") end,
            Tri = function(a) return lacc.cast(a, "i32") end,
            Count = function(k) return lacc.imod(1000003, k) end,
          })
        end, xs)
        return lacc.fold(function(a, c) return lacc.max(a, c) end, lacc.constant(-2 ^ 31, "i32"), ps)
      end
      H.seed(5)
      local elems, best = {}, -2 ^ 31
      for i = 1, 700 do
        local e = H.rand() < 0.5 and { tag = "Count", H.randint(1, 5000) * (H.rand() < 0.5 and -1 or 1) }
          or { tag = "Circle", H.f32(H.rand() * 1000 - 500) }
        elems[i] = e
        local v
        if e.tag == "Count" then v = 1000003 - math.floor(1000003 / e[1]) * e[1]
        else v = e[1] < 0 and math.ceil(e[1]) or math.floor(e[1]) end
        best = math.max(best, v)
      end
      local r = lacc.run(prog(lacc.fromtable(elems, Shape)), { backend = b })
      assert.are.equal(best, H.num(r:get()))
      elems[611] = { tag = "Count", 0 }
      local ok, err = pcall(lacc.run, prog(lacc.fromtable(elems, Shape)), { backend = b })
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find("division by zero", 1, true), tostring(err))
    end)
  end
end)
