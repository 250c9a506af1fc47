-- The layout engine: "Accelerating Sum Types", Table 1 / Appendix A, and random nested types against a
-- reference written here from the rules (docs/core.md), not from layout.c.
local H = require "helper"
local lacc = H.lacc
local types = require "lacc.types"

local f32, f64 = "f32", "f64"

describe("layout of the thesis' types (Appendix A, one-byte tags)", function()
  local Maybe, Either, tuple = lacc.Maybe, lacc.Either, lacc.tuple
  -- { type, unboxed, rtu, compact, minimum }
  local rows = {
    { Maybe(f32), 40, 40, 40, 33 },
    { Either(f32, f32), 72, 40, 40, 33 },
    { Either(f32, f64), 104, 72, 72, 65 },
    -- the thesis' unboxed figure is 216: Accelerate's generic encoding also tags the two
    -- tuples; lacc tags sums only, so 8 + 4 fields (32+64+64+32) = 200
    { Either(tuple(f32, f64), tuple(f64, f32)), 200, 136, 104, 97 },
    { Either(Maybe(f64), Maybe(f64)), 152, 72, 72, 66 },
  }
  for _, r in ipairs(rows) do
    it(tostring(r[1]), function()
      assert.are.equal(r[2], lacc.layout(r[1], "unboxed").bits)
      assert.are.equal(r[3], lacc.layout(r[1], "rtu").bits)
      assert.are.equal(r[4], lacc.layout(r[1], "compact").bits)
      assert.are.equal(r[4], lacc.layout(r[1]).bits)   -- compact is the default
      assert.are.equal(r[5], lacc.layout(r[1]).minimum_bits)
      assert.are.equal(8, lacc.layout(r[1], "rtu").tag_bits)
    end)
  end

  it("reports fields and their member types", function()
    local l = lacc.layout(Either(tuple(f32, f64), tuple(f64, f32)), "compact")
    assert.are.equal(2, #l.fields)
    assert.are.same({ bits = 64, types = { "f64" } }, l.fields[1])
    assert.are.same({ bits = 32, types = { "f32" } }, l.fields[2])
    local u = lacc.layout(Either(Maybe(f64), Maybe(f64)), "unboxed")
    assert.are.same({ 8, 8, 8 }, u.tags)
    local v = lacc.layout(lacc.variant { "f32", lacc.tuple("i32", "i32") }, "rtu")
    assert.are.same({ "i32", "f32" }, v.fields[1].types)   -- equal widths share a field
  end)

  it("widens the tag with the number of choices", function()
    local cons = {}
    for i = 1, 300 do cons[i] = { "C" .. i } end
    local Big = lacc.data("Big", cons)
    assert.are.equal(16, lacc.layout(Big).tag_bits)
    assert.are.equal(300, lacc.layout(Big).choices)
    -- products multiply choices: three 300-way sums need 32 bits in one tag, four 64
    local three = lacc.tuple(Big, Big, Big)
    assert.are.equal(32, lacc.layout(three, "rtu").tag_bits)
    assert.are.equal(300 ^ 3, lacc.layout(three, "rtu").choices)
    assert.are.equal(3 * 16, lacc.layout(three, "unboxed").tag_bits)
    assert.are.equal(64, lacc.layout(lacc.tuple(Big, Big, Big, Big), "rtu").tag_bits)
  end)

  it("packs tags in bit fields when they fit, and can be told to use mixed radix", function()
    local S3 = lacc.data("S3", { { "A", f32 }, { "B", f32, f32 }, { "C" } })
    local pair = tuple(S3, S3)   -- 9 choices: 4 bits mixed radix, 2 + 2 bits packed
    for _, s in ipairs { "rtu", "compact" } do
      local p, r = lacc.layout(pair, s), lacc.layout(pair, s .. "_radix")
      assert.are.equal("packed", p.tag_encoding)
      assert.are.equal("radix", r.tag_encoding)
      assert.are.equal(s .. "_radix", r.strategy)
      assert.are.equal(p.bits, r.bits)
      assert.are.equal(9, r.choices)
    end
    -- five of them: 243 choices fit an 8-bit tag in mixed radix, 10 packed bits do not
    local five = lacc.layout(tuple(S3, S3, S3, S3, S3), "compact")
    assert.are.equal(8, five.tag_bits)
    assert.are.equal("radix", five.tag_encoding)
    local ok, err = pcall(lacc.layout, pair, "radix")
    assert.is_false(ok)
    assert.truthy(err:find('"compact_radix" or "rtu_radix"', 1, true))
  end)
end)

-- ---- reference model

local function scalar_bits(name)
  if name == "bool" or name:match("8$") then return 8 end
  return tonumber(name:match("%d+$"))
end

local function choices(t)
  if t.kind == "scalar" then return 1 end
  if t.kind == "tuple" then
    local c = 1
    for _, f in ipairs(t.fields) do c = c * choices(f) end
    return c
  end
  local c = 0
  for _, k in ipairs(t.constructors) do c = c + choices(k.payload) end
  return c
end

local function tag_bits(c)
  if c <= 1 then return 0 end
  for _, w in ipairs { 8, 16, 32 } do if c <= 2 ^ w then return w end end
  return 64
end

-- list of field widths; sorted = compact
local function fields(t, sorted)
  if t.kind == "scalar" then return { scalar_bits(t.name) } end
  if t.kind == "tuple" then
    local r = {}
    for _, f in ipairs(t.fields) do
      for _, w in ipairs(fields(f, sorted)) do r[#r + 1] = w end
    end
    if sorted then table.sort(r, function(a, b) return a > b end) end
    return r
  end
  local r = {}
  for _, k in ipairs(t.constructors) do
    for i, w in ipairs(fields(k.payload, sorted)) do r[i] = math.max(r[i] or 0, w) end
  end
  return r
end

local function unboxed(t)
  if t.kind == "scalar" then return scalar_bits(t.name) end
  local b = t.kind == "sum" and tag_bits(#t.constructors) or 0
  for _, f in ipairs(t.kind == "sum" and t.constructors or t.fields) do
    b = b + unboxed(f.payload or f)
  end
  return b
end

local function minimum(t)
  if t.kind == "scalar" then return t.name == "bool" and 1 or scalar_bits(t.name) end
  if t.kind == "tuple" then
    local b = 0
    for _, f in ipairs(t.fields) do b = b + minimum(f) end
    return b
  end
  local widest = 0
  for _, k in ipairs(t.constructors) do widest = math.max(widest, minimum(k.payload)) end
  return math.ceil(math.log(#t.constructors) / math.log(2) - 1e-9) + widest
end

local function sum(list)
  local s = 0
  for _, w in ipairs(list) do s = s + w end
  return s
end

local scalars = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" }
local ncons = 0
local function random_type(depth)
  local r = H.rand()
  if depth >= 4 or r < 0.3 then return scalars[H.randint(1, #scalars)] end
  if r < 0.55 then
    local fs = {}
    for i = 1, H.randint(1, 3) do fs[i] = random_type(depth + 1) end
    return lacc.tuple(table.unpack and table.unpack(fs) or unpack(fs))
  end
  if r < 0.75 then
    local ms = {}
    for i = 1, H.randint(1, 3) do ms[i] = random_type(depth + 1) end
    return lacc.variant(ms).sig
  end
  local cons = {}
  for i = 1, H.randint(1, 4) do
    local c = { "K" .. i }
    for j = 1, H.randint(0, 2) do c[j + 1] = random_type(depth + 1) end
    cons[i] = c
  end
  ncons = ncons + 1
  return lacc.data("D" .. ncons, cons).sig
end

describe("layout of random nested types", function()
  it("matches the reference and orders the strategies", function()
    H.seed(2024)
    for _ = 1, 200 do
      local sig = random_type(0)
      local t = types.parse(sig)
      local c = choices(t)
      local u, r, k = lacc.layout(sig, "unboxed"), lacc.layout(sig, "rtu"), lacc.layout(sig, "compact")
      assert.are.equal(c, r.choices)
      assert.are.equal(unboxed(t), u.bits)
      assert.are.equal(tag_bits(c) + sum(fields(t, false)), r.bits)
      assert.are.equal(tag_bits(c) + sum(fields(t, true)), k.bits)
      assert.are.equal(minimum(t), k.minimum_bits)
      assert.is_true(k.bits <= r.bits, sig)
      assert.is_true(r.bits <= u.bits, sig)
      -- (equation 1 rounds the tag of every nested sum up on its own, so it is not a
      -- strict lower bound: one combined tag can beat it, as for 30 nested choices)
    end
  end)
end)

describe("sum type errors", function()
  it("rejects recursion, duplicates, unknown strategies, and unknown constructors", function()
    local ok, err = pcall(lacc.data, "List", { { "Nil" }, { "Cons", "f32", "List" } })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("recursive", 1, true))
    -- a sum nesting a finished instance of a type of the same name is not recursion
    local MM = lacc.Maybe(lacc.Maybe("i32"))
    local a = lacc.fromtable({ { tag = "Just", { tag = "Just", 3 } }, { tag = "Just", { tag = "Nothing" } },
                               { tag = "Nothing" } }, MM)
    for _, b in ipairs { "interp", "cpu" } do
      local r = lacc.run(lacc.map(function(m)
        return lacc.match(m, { Just = function(i)
          return lacc.match(i, { Just = function(v) return v end, Nothing = function() return lacc.constant(-1, "i32") end })
        end, Nothing = function() return lacc.constant(-2, "i32") end })
      end, a), { backend = b })
      assert.are.same({ 3, -1, -2 }, r:totable())
    end
    ok, err = pcall(lacc.data, "T", { { "A" }, { "A", "f32" } })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("twice", 1, true))
    ok, err = pcall(lacc.layout, lacc.Maybe("f32"), "zigzag")
    assert.is_false(ok)
    assert.truthy(tostring(err):find("zigzag", 1, true))
    ok, err = pcall(lacc.fromtable, { { tag = "Perhaps", 1 } }, lacc.Maybe("f32"))
    assert.is_false(ok)
    assert.truthy(tostring(err):find("no constructor Perhaps", 1, true))
    ok, err = pcall(lacc.fromtable, { { tag = "Just" } }, lacc.Maybe("f32"))
    assert.is_false(ok)
    assert.truthy(tostring(err):find("takes 1 fields, got 0", 1, true))
    ok, err = pcall(lacc.set_layout, "zigzag")
    assert.is_false(ok)
    assert.truthy(tostring(err):find("zigzag", 1, true))
  end)
end)

-- ---- host arrays of sum types in every layout

local function random_value(t)
  if t.kind == "scalar" then return H.value(t.name) end
  if t.kind == "tuple" then
    local r = {}
    for i, f in ipairs(t.fields) do r[i] = random_value(f) end
    return r
  end
  local k = H.randint(1, #t.constructors)
  local con = t.constructors[k]
  local r = { tag = t.name and con.name or k }
  for i, f in ipairs(con.payload.fields) do r[i] = random_value(f) end
  return r
end

local function deep_eq(a, b)
  if type(a) == "table" and type(b) == "table" then
    if a.tag ~= b.tag or #a ~= #b then return false end
    for i = 1, #a do if not deep_eq(a[i], b[i]) then return false end end
    return true
  end
  return H.same(a, b)
end

describe("host arrays of sum types", function()
  it("round-trip random nested values under every layout, through the interpreter", function()
    H.seed(77)
    local made = {}   -- { sig, vals, s, s2, a }
    for round = 1, 30 do
      local sig = random_type(0)
      local t = types.parse(sig)
      local vals = {}
      for i = 1, H.randint(0, 6) do vals[i] = random_value(t) end
      for si, s in ipairs { "unboxed", "rtu", "compact", "rtu_radix", "compact_radix" } do
        lacc.set_layout(s)
        local a = lacc.array(sig, { #vals })
        for i, v in ipairs(vals) do a[i] = v end
        assert.are.equal(s, a:layout())
        for i, v in ipairs(vals) do
          if not deep_eq(v, a[i]) then error(("%s under %s: element %d differs"):format(sig, s, i)) end
        end
        -- map(id) and a double reverse into another layout and back: each type takes
        -- one of the three per layout, in turn, so that the 30 types cover every pair
        -- (each compiles kernels of its own: all 15 pairs of each type took minutes)
        made[#made + 1] = { sig, vals, s, ({ "unboxed", "rtu", "compact" })[(round + si) % 3 + 1], a }
      end
      lacc.set_layout("compact")
    end
    -- the programs of one backend and one layout of results run 16 to a program (one
    -- build where there were 16), each result checked on its own
    local function batches(b)
      local by = {}
      return function(layout)
        by[layout] = by[layout] or H.batch(function(list)
          return lacc.run(list, { layout = layout, backend = b })
        end)
        return by[layout]
      end
    end
    for _, b in ipairs(H.backends) do
      local into, back, ks = batches(b), batches(b), {}
      for k, m in ipairs(made) do ks[k] = into(m[4]):add(lacc.map(function(x) return x end, m[5])) end
      local rs = {}
      for k, m in ipairs(made) do
        rs[k] = into(m[4]):get(ks[k])
        ks[k] = back(m[3]):add(lacc.reverse(lacc.reverse(rs[k])))
      end
      for k, m in ipairs(made) do
        local sig, vals, s, s2 = m[1], m[2], m[3], m[4]
        local r, r2 = rs[k], back(s):get(ks[k])
        assert.are.equal(s2, r:layout())
        assert.are.equal(s, r2:layout())
        for i, v in ipairs(vals) do
          assert.is_true(deep_eq(v, r[i]), sig)
          assert.is_true(deep_eq(v, r2[i]), sig)
        end
      end
    end
  end)

  it("prints sum elements with their constructors", function()
    local T = lacc.Either(lacc.Maybe("f64"), lacc.tuple("i8", "f32"))
    local a = lacc.fromtable({ { tag = "Left", { tag = "Just", 2.5 } }, { tag = "Right", { -3, 1.5 } },
                               { tag = "Left", { tag = "Nothing" } } }, T)
    assert.truthy(tostring(a):find("[Left (Just 2.5),Right (-3,1.5),Left Nothing]", 1, true))
  end)
end)
