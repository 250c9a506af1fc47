-- lacc.sort, argsort and sort_by_key against a plain-Lua stable sort (table.sort with the
-- position as the last key) under the guide's total order (NaN last, -0 before +0), for
-- every element type, shapes with zero extents and ranks 1 to 3, keys with many
-- duplicates (stability), descending order, tuple keys from `by`, and a million random
-- keys against table.sort on a copy (the parallel chunks of a long row).
local H = require "helper"
local lacc = H.lacc

local TYPES = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" }

local function is_neg_zero(x) return x == 0 and 1 / x < 0 end

-- a before b in the total order (ascending): numbers, then NaN; -0 before +0
local function before(a, b)
  if type(a) == "boolean" then return (not a) and b end
  if a ~= a then return false end
  if b ~= b then return true end
  if a == b then return is_neg_zero(a) and not is_neg_zero(b) end
  return a < b
end

local function equal_keys(a, b) return not before(a, b) and not before(b, a) end

-- The stable order (1-based positions) of a list of keys; `desc` reverses the key order
-- but keeps equal keys in their order.
local function order_ref(keys, desc, cmp)
  cmp = cmp or before
  local idx = {}
  for i = 1, #keys do idx[i] = i end
  table.sort(idx, function(i, j)
    local a, b = keys[i], keys[j]
    if desc then a, b = b, a end
    if cmp(a, b) then return true end
    if cmp(b, a) then return false end
    return i < j
  end)
  return idx
end

-- Values with many duplicates and the awkward ones of each type.
local function values(t, n)
  local pool
  if t == "bool" then pool = { true, false }
  elseif t == "f32" or t == "f64" then
    pool = { 0.0, -0.0, 1.5, -1.5, 0 / 0, math.huge, -math.huge, 2.25, -7, 1e-30, 3 }
  elseif t == "i64" then pool = { 0, -1, 5, -2 ^ 53, 2 ^ 53, 7, -7, 123456789012 }
  elseif t == "u64" then pool = { 0, 1, 5, 2 ^ 53, 7, 123456789012, 2 ^ 40 }
  elseif t:sub(1, 1) == "u" then
    local max = t == "u8" and 255 or t == "u16" and 65535 or 4294967295
    pool = { 0, 1, max, max - 1, 7, 100 }
  else
    local max = t == "i8" and 127 or t == "i16" and 32767 or 2147483647
    pool = { 0, -1, 1, max, -max - 1, 7, -7 }
  end
  local out = {}
  for i = 1, n do
    out[i] = pool[H.randint(1, #pool)]
    if t == "f32" then out[i] = H.f32(out[i]) end
  end
  return out
end

local host = H.from_flat

-- Each row's reference order, flattened (positions 1-based within the row).
local function rows_ref(flat, shape, desc, cmp)
  local n = shape[#shape]
  local out = {}
  for r = 0, (n > 0 and #flat / n or 0) - 1 do
    local row = {}
    for i = 1, n do row[i] = flat[r * n + i] end
    local o = order_ref(row, desc, cmp)
    for i = 1, n do out[r * n + i] = o[i] end
  end
  return out
end

local function same_value(a, b)
  a, b = H.num(a), H.num(b)
  if type(a) == "number" and a ~= a then return b ~= b end
  if a == 0 and b == 0 then return is_neg_zero(a) == is_neg_zero(b) end
  return a == b
end

local SHAPES = { { 0 }, { 1 }, { 31 }, { 40 }, { 3, 5 }, { 2, 0 }, { 2, 3, 45 } }

for _, b in ipairs(H.backends) do
  local run = function(p) return lacc.run(p, { backend = b }) end

  it("sort and argsort give a stable sort of each row for every type on " .. b, function()
    H.seed(5)
    for k, t in ipairs(TYPES) do
      local shape = SHAPES[(k - 1) % #SHAPES + 1]
      local flat = values(t, H.size(shape))
      local a = host(t, shape, flat)
      for _, desc in ipairs { false, true } do
        local opts = desc and { descending = true } or nil
        local want = rows_ref(flat, shape, desc)
        local perm = run(lacc.argsort(a, opts))
        local sorted = run(lacc.sort(a, opts))
        assert.are.equal("i64", perm:type())
        assert.are.equal(t, sorted:type())
        assert.are.same(shape, perm:shape())
        local n = shape[#shape]
        for i = 1, #want do
          local p = H.num(perm:at_linear(i - 1))
          assert.are.equal(want[i], p, ("%s %s element %d"):format(t, desc and "desc" or "asc", i))
          local row = math.floor((i - 1) / n)
          assert.is_true(same_value(flat[row * n + want[i]], sorted:at_linear(i - 1)),
                         ("%s sorted element %d"):format(t, i))
        end
      end
    end
  end)

  it("sorts by tuple keys from `by`, field by field, and by tuples themselves on " .. b, function()
    H.seed(9)
    local n = 60
    local xs = {}
    for i = 1, n do xs[i] = H.randint(-20, 20) end
    local a = host("i32", { n }, xs)
    -- by (x mod 3, -x): lexicographic
    local perm = run(lacc.argsort(a, { by = function(x) return lacc.imod(x, 3), -x end }))
    local keys = {}
    for i = 1, n do keys[i] = { xs[i] % 3, -xs[i] } end
    local want = order_ref(keys, false, function(p, q)
      if p[1] ~= q[1] then return p[1] < q[1] end
      return p[2] < q[2]
    end)
    for i = 1, n do assert.are.equal(want[i], H.num(perm[i])) end
    -- an array of tuples, descending
    local pairs_ = {}
    for i = 1, n do pairs_[i] = { xs[i] % 4, H.f32(xs[i] / 8) } end
    local t = lacc.tuple("i32", "f32")
    local pa = lacc.fromtable(pairs_, t)
    local sorted = run(lacc.sort(pa, { descending = true }))
    local want2 = order_ref(pairs_, true, function(p, q)
      if p[1] ~= q[1] then return p[1] < q[1] end
      return before(p[2], q[2])
    end)
    for i = 1, n do
      local got = sorted[i]
      assert.are.equal(pairs_[want2[i]][1], H.num(got[1]))
      assert.are.equal(pairs_[want2[i]][2], H.num(got[2]))
    end
  end)

  it("sort_by_key reorders values by keys, stably, row by row on " .. b, function()
    H.seed(13)
    local shape = { 3, 17 }
    local ks = values("u8", 51)
    local vs = {}
    for i = 1, 51 do vs[i] = i * 1.5 end
    local k, v = lacc.sort_by_key(host("u8", shape, ks), host("f64", shape, vs))
    local sk, sv = run(k), run(v)
    local want = rows_ref(ks, shape, false)
    for i = 1, 51 do
      local row = math.floor((i - 1) / 17)
      assert.are.equal(ks[row * 17 + want[i]], H.num(sk:at_linear(i - 1)))
      assert.are.equal(vs[row * 17 + want[i]], H.num(sv:at_linear(i - 1)))
    end
  end)
end

-- The backends that sort long rows themselves: the cpu backend in parallel chunks, OpenCL
-- on the device (count, scan and scatter kernels).
local SORTERS = {}
for _, b in ipairs(H.backends) do
  if b ~= "interp" then SORTERS[#SORTERS + 1] = b end
end

local function check_order(what, got, want)
  for i = 1, #want do
    if H.num(got[i]) ~= want[i] then
      error(("%s, position %d: %s, want %s"):format(what, i, tostring(got[i]), tostring(want[i])))
    end
  end
end

describe("lacc.sort of long rows", function()
  it("sorts a million random keys as table.sort does, in parallel chunks", function()
    H.seed(77)
    local n = 1000000
    local flat = {}
    for i = 1, n do flat[i] = H.randint(0, 4294967295) end
    local a = lacc.fromtable(flat, "u32")
    table.sort(flat)
    for _, b in ipairs(SORTERS) do check_order(b, lacc.run(lacc.sort(a), { backend = b }), flat) end
  end)

  it("keeps equal keys in order across chunks, for f32 and i64 keys", function()
    H.seed(78)
    local n = 150001   -- above 2^16: the row is sorted in parallel chunks
    for _, t in ipairs { "f32", "i64" } do
      local flat = {}
      for i = 1, n do flat[i] = H.randint(-50, 50) * (t == "f32" and 0.25 or 1) end
      if t == "f32" then flat[17], flat[n - 3] = -0.0, 0.0 end   -- -0 before +0: floats only
      local a = lacc.fromtable(flat, t)
      local want = order_ref(flat, false)
      for _, b in ipairs(SORTERS) do
        check_order(t .. " on " .. b, lacc.run(lacc.argsort(a), { backend = b }), want)
      end
      assert.is_true(equal_keys(flat[want[1]], -50 * (t == "f32" and 0.25 or 1)))
    end
  end)

  -- 20000 rows of 40: more rows than OpenCL counts digits for at once (batches); keys
  -- whose high bytes never vary (passes skipped) and a row of equal keys (no pass)
  it("sorts many middling rows, with digits that never vary and rows of equal keys", function()
    H.seed(79)
    local rows, n = 20000, 40
    local flat = {}
    for i = 1, rows * n do flat[i] = H.randint(0, 300) end
    for i = 1, n do flat[5 * n + i] = 7 end
    local a = lacc.reshape({ rows, n }, lacc.fromtable(flat, "u32"))
    local want, keys = {}, {}
    for r = 0, rows - 1 do
      local row = {}
      for i = 1, n do row[i] = flat[r * n + i] end
      for i, p in ipairs(order_ref(row, false)) do want[r * n + i], keys[r * n + i] = p, row[p] end
    end
    local same = lacc.fromtable({ 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
                                  5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5 }, "i64")
    for _, b in ipairs(SORTERS) do
      local perm = lacc.run(lacc.argsort(a), { backend = b })
      local sorted = lacc.run(lacc.sort(a), { backend = b })
      for i = 1, rows * n do
        local p, k = H.num(perm:at_linear(i - 1)), H.num(sorted:at_linear(i - 1))
        if p ~= want[i] or k ~= keys[i] then
          error(("%s: row %d, element %d: %s / %s, want %d / %d"):format(b,
                math.floor((i - 1) / n) + 1, (i - 1) % n + 1, p, k, want[i], keys[i]))
        end
      end
      local ps = lacc.run(lacc.argsort(same), { backend = b })
      for i = 1, 35 do assert.are.equal(i, H.num(ps[i])) end
    end
  end)
end)
