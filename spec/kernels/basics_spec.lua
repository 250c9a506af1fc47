-- Reductions and scans along a dimension, slice, take, drop, iota, argmax / argmin, gather,
-- scatter and where, on every backend, against plain-Lua references computed here with
-- loops over flat (row-major) Lua tables. Dimension 1 is the outermost; positions and
-- indices are 1-based. Few distinct program shapes (each costs a compile on cpu and
-- opencl): the data varies, extents and constants are passed at run time.
local H = require "helper"
local lacc = H.lacc

local NAN = 0 / 0

-- ---------------------------------------------------------------- reference helpers

local size = H.size

-- A host array of type t and shape sh holding flat (row-major).
local function host(t, sh, flat)
  assert(#flat == size(sh))
  return H.from_flat(t, sh, flat)
end

local function without(sh, d)
  local r = {}
  for k = 1, #sh do if k ~= d then r[#r + 1] = sh[k] end end
  return r
end

local function with_extent(sh, d, e)
  local r = {}
  for k = 1, #sh do r[k] = sh[k] end
  r[d] = e
  return r
end

-- For each position of sh without dimension d (row-major), the 1-based linear positions
-- in sh of the elements along d, in order.
local function lines(sh, d)
  local osh = without(sh, d)
  local out = {}
  for o = 0, size(osh) - 1 do
    local oix = H.unravel(osh, o)
    local line = {}
    for k = 1, sh[d] do
      local ix, j = {}, 0
      for e = 1, #sh do
        if e == d then ix[e] = k else j = j + 1; ix[e] = oix[j] end
      end
      line[k] = H.ravel(sh, ix) + 1
    end
    out[o + 1] = line
  end
  return osh, out
end

-- The reduction of flat (shape sh) along d: the result's shape and values, and the sum of
-- the magnitudes reduced into each result (a scale for float tolerances).
local function reduce_ref(sh, flat, d, f, z)
  local osh, ls = lines(sh, d)
  local vals, scales = {}, {}
  for o, line in ipairs(ls) do
    local acc, first, scale = z, 1, 0
    if z == nil then acc, first = flat[line[1]], 2 end
    for k = first, #line do acc = f(acc, flat[line[k]]) end
    if type(acc) == "number" then
      for k = 1, #line do scale = scale + math.abs(flat[line[k]]) end
    end
    vals[o], scales[o] = acc, scale
  end
  return osh, vals, scales
end

-- A scan of each line along d: kind is scanl, scanl1, scanr or scanr1 (scanl and scanr
-- add one element along d). Returns the result's shape and flat values.
local function scan_ref(kind, sh, flat, d, f, z)
  local extra = (kind == "scanl" or kind == "scanr") and 1 or 0
  local osh = with_extent(sh, d, sh[d] + extra)
  local _, inl = lines(sh, d)
  local _, outl = lines(osh, d)
  local out = {}
  for o, line in ipairs(inl) do
    local xs = {}
    for k, p in ipairs(line) do xs[k] = flat[p] end
    local n, res = #xs, {}
    if kind == "scanl" then
      res[1] = z
      for k = 1, n do res[k + 1] = f(res[k], xs[k]) end
    elseif kind == "scanl1" then
      for k = 1, n do res[k] = (k == 1) and xs[1] or f(res[k - 1], xs[k]) end
    elseif kind == "scanr" then
      res[n + 1] = z
      for k = n, 1, -1 do res[k] = f(xs[k], res[k + 1]) end
    else
      for k = n, 1, -1 do res[k] = (k == n) and xs[n] or f(xs[k], res[k + 1]) end
    end
    for k, p in ipairs(outl[o]) do out[p] = res[k] end
  end
  return osh, out
end

-- The 1-based position in line (of values) of the largest (larger) or smallest element:
-- the first of equals wins, and the first NaN beats every number.
local function arg_line(vals, larger)
  local best
  for k, v in ipairs(vals) do
    if best == nil then
      best = k
    else
      local bv = vals[best]
      local nan_holds = bv ~= bv   -- a NaN already holds: nothing beats it
      if not nan_holds and (v ~= v or (larger and v > bv) or (not larger and v < bv)) then
        best = k
      end
    end
  end
  return best
end

local function shape_str(sh)
  local p = {}
  for i, e in ipairs(sh) do p[i] = tostring(H.num(e)) end
  return "{" .. table.concat(p, ",") .. "}"
end

-- Check a host array's shape and elements; tols[i] (when given) is an absolute tolerance
-- for element i, else it must be equal (NaN matching NaN).
local function check(a, sh, want, tols, ctx)
  ctx = ctx and (" [" .. ctx .. "]") or ""
  local s = a:shape()
  local ok = #s == #sh
  for d = 1, #sh do ok = ok and H.num(s[d]) == sh[d] end
  if not ok then
    error(("shape: expected %s, got %s%s"):format(shape_str(sh), shape_str(s), ctx), 2)
  end
  if a:size() ~= #want then
    error(("size: expected %d, got %d%s"):format(#want, a:size(), ctx), 2)
  end
  for i = 1, #want do
    local g, w = H.num(a:at_linear(i - 1)), want[i]
    local good
    if type(w) == "number" and w ~= w then
      good = g ~= g
    elseif tols and tols[i] then
      good = type(g) == "number" and math.abs(g - w) <= tols[i]
    else
      good = g == w
    end
    if not good then
      error(("element %d of %s: expected %s, got %s%s"):format(i, shape_str(sh), tostring(w),
        tostring(g), ctx), 2)
    end
  end
end

local function errors_with(text, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  err = tostring(err)
  assert.truthy(err:find(text, 1, true), ("expected %q in: %s"):format(text, err))
end

-- Random values for type t: fractional floats (f32-exact for f32), integers in -50..50.
local function values(t, n)
  local v = {}
  for i = 1, n do
    if t == "f32" then v[i] = H.f32(H.rand() * 200 - 100)
    elseif t == "f64" then v[i] = H.rand() * 200 - 100
    else v[i] = H.randint(-50, 50) end
  end
  return v
end

-- Factors whose products (7 at most) are exact in every type and any order.
local FACTORS = { -2, -1.5, -1, -0.5, 0.5, 1, 1.25, 1.5, 2 }
local INT_FACTORS = { -3, -2, -1, 0, 1, 1, 2, 3 }
local function factors(t, n)
  local v, from = {}, (t == "f32" or t == "f64") and FACTORS or INT_FACTORS
  for i = 1, n do v[i] = from[H.randint(1, #from)] end
  return v
end

local REL = { f32 = 1e-5, f64 = 1e-12 }

local function add(a, b) return a + b end
local function mul(a, b) return a * b end

-- shapes tried for each rank (odd extents, ones, and zero extents)
local SHAPES = {
  { { 7 }, { 1 }, { 0 } },
  { { 3, 5 }, { 5, 1 }, { 0, 3 }, { 3, 0 } },
  { { 3, 5, 7 }, { 1, 3, 1 }, { 2, 0, 3 }, { 0, 2, 3 }, { 2, 3, 0 } },
}

-- Reductions (operation, type, rank, dimension): every (rank, dimension) of ranks 1-3 (sum,
-- and minimum for rank 3's innermost), each operation along an outer dimension, every
-- element type; few programs, since each one costs a compile on cpu and opencl.
local REDUCTIONS = {
  { "sum", "i32", 1, 1 }, { "sum", "f32", 2, 1 }, { "sum", "i64", 2, 2 },
  { "sum", "f64", 3, 1 }, { "sum", "i64", 3, 2 },
  { "product", "i64", 2, 1 }, { "product", "f64", 3, 2 },
  { "maximum", "f32", 3, 1 }, { "maximum", "i64", 3, 2 },
  { "minimum", "i32", 2, 1 }, { "minimum", "f64", 3, 3 },
}

local REF_OP = {
  sum = { add, 0 }, product = { mul, 1 },
  maximum = { math.max }, minimum = { math.min },
}

-- A rank-2 i32 array 4 x 5 whose element (i, j) is 10 * i + j.
local function grid()
  local flat = {}
  for i = 1, 4 do for j = 1, 5 do flat[#flat + 1] = 10 * i + j end end
  return host("i32", { 4, 5 }, flat), flat
end

-- The elements from, from + step, ... up to to (inclusive), as slice reads them.
local function range_list(from, to, step)
  step = step or 1
  local r = {}
  local i = from
  while (step > 0 and i <= to) or (step < 0 and i >= to) do
    r[#r + 1] = i
    i = i + step
  end
  return r
end

for _, b in ipairs(H.backends) do
  local opts = { backend = b }
  local function run(p) return lacc.run(p, opts) end

  describe("reductions along a dimension on " .. b, function()
    it("sum, product, maximum and minimum along every dimension agree with Lua loops on " .. b,
      function()
        H.seed(9101)
        for _, c in ipairs(REDUCTIONS) do
          local op, t, rank, d = c[1], c[2], c[3], c[4]
          local f, z = REF_OP[op][1], REF_OP[op][2]
          for _, sh in ipairs(SHAPES[rank]) do
            -- a fold1 of nothing is an error: maximum and minimum need elements along d
            if z ~= nil or sh[d] > 0 then
              local n = size(sh)
              local flat = op == "product" and factors(t, n) or values(t, n)
              local got = run(lacc[op](host(t, sh, flat), d))
              local osh, want, scales = reduce_ref(sh, flat, d, f, z)
              local tols
              if op == "sum" and REL[t] then
                tols = {}
                for i, s in ipairs(scales) do tols[i] = REL[t] * s end
              end
              assert.are.equal(t, got:type())
              check(got, osh, want, tols, ("%s %s %s dim %d"):format(op, t, shape_str(sh), d))
            end
          end
        end
      end)

    it("reduce the whole array to rank 0 without a dimension on " .. b, function()
      H.seed(9102)
      local sh = { 3, 5, 7 }
      local flat = values("f64", size(sh))
      local s = run(lacc.sum(host("f64", sh, flat)))
      local want, scale = 0, 0
      for _, v in ipairs(flat) do want, scale = want + v, scale + math.abs(v) end
      check(s, {}, { want }, { 1e-12 * scale })
    end)

    it("fold and fold1 with {dim = d} agree with Lua loops, in order, on " .. b, function()
      H.seed(9103)
      local function first(a, _) return a end
      local function last(_, c) return c end
      for _, sh in ipairs(SHAPES[3]) do
        local n = size(sh)
        local flat = values("i64", n)
        local x = host("i64", sh, flat)
        -- fold with + along the middle dimension
        local osh, want = reduce_ref(sh, flat, 2, add, 0)
        check(run(lacc.fold(function(a, c) return a + c end, 0, x, { dim = 2 })), osh, want, nil,
          "fold + dim 2 " .. shape_str(sh))
        -- fold1 keeping the first / the last element (associative, not commutative)
        local iflat = values("i32", n)
        local ix = host("i32", sh, iflat)
        if sh[1] > 0 then
          local o1, w1 = reduce_ref(sh, iflat, 1, first)
          check(run(lacc.fold1(first, ix, { dim = 1 })), o1, w1, nil,
            "fold1 first dim 1 " .. shape_str(sh))
        end
        if sh[2] > 0 then
          local o2, w2 = reduce_ref(sh, iflat, 2, last)
          check(run(lacc.fold1(last, ix, { dim = 2 })), o2, w2, nil,
            "fold1 last dim 2 " .. shape_str(sh))
        end
      end
      for _, sh in ipairs(SHAPES[2]) do
        local flat = values("i64", size(sh))
        local x = host("i64", sh, flat)
        -- fold with max from -1000 along dimension 1 (-1000 where it is empty)
        local o1, w1 = reduce_ref(sh, flat, 1, math.max, -1000)
        check(run(lacc.fold(function(a, c) return lacc.max(a, c) end, -1000, x, { dim = 1 })),
          o1, w1, nil, "fold max dim 1 " .. shape_str(sh))
        -- no options, and empty options: the innermost dimension
        local o2, w2 = reduce_ref(sh, flat, 2, add, 0)
        check(run(lacc.fold(add, 0, x)), o2, w2, nil, "fold + default " .. shape_str(sh))
        check(run(lacc.fold(add, 0, x, {})), o2, w2, nil, "fold + {} " .. shape_str(sh))
      end
    end)

    it("all, any, and_ and or_ along a dimension agree with Lua loops on " .. b, function()
      H.seed(9104)
      local function land(a, c) return a and c end
      local function lor(a, c) return a or c end
      for _, sh in ipairs(SHAPES[2]) do
        local bs = {}
        for i = 1, size(sh) do bs[i] = H.rand() < 0.7 end
        local x = host("bool", sh, bs)
        local o, w = reduce_ref(sh, bs, 1, land, true)
        check(run(lacc.and_(x, 1)), o, w, nil, "and_ dim 1 " .. shape_str(sh))
        o, w = reduce_ref(sh, bs, 1, lor, false)
        check(run(lacc.or_(x, 1)), o, w, nil, "or_ dim 1 " .. shape_str(sh))
      end
      for _, sh in ipairs(SHAPES[3]) do
        local flat = {}
        for i = 1, size(sh) do flat[i] = H.randint(0, 9) end
        local x = host("i32", sh, flat)
        local big, small = {}, {}
        for i, v in ipairs(flat) do big[i], small[i] = v > 1, v > 8 end
        local o, w = reduce_ref(sh, big, 2, land, true)
        check(run(lacc.all(function(v) return lacc.gt(v, 1) end, x, 2)), o, w, nil,
          "all dim 2 " .. shape_str(sh))
        o, w = reduce_ref(sh, small, 1, lor, false)
        check(run(lacc.any(function(v) return lacc.gt(v, 8) end, x, 1)), o, w, nil,
          "any dim 1 " .. shape_str(sh))
      end
    end)

    it("zero extents: along the empty dimension gives the unit, along another nothing on " .. b,
      function()
        check(run(lacc.sum(lacc.array("f32", { 0, 3 }), 1)), { 3 }, { 0, 0, 0 })
        check(run(lacc.sum(lacc.array("i64", { 0, 3 }), 2)), { 0 }, {})
        check(run(lacc.sum(lacc.array("i64", { 3, 0 }), 2)), { 3 }, { 0, 0, 0 })
        check(run(lacc.product(lacc.array("i64", { 0, 3 }), 1)), { 3 }, { 1, 1, 1 })
        check(run(lacc.and_(lacc.array("bool", { 0, 3 }), 1)), { 3 }, { true, true, true })
        check(run(lacc.or_(lacc.array("bool", { 0, 3 }), 1)), { 3 }, { false, false, false })
        check(run(lacc.sum(lacc.array("i64", { 2, 0, 3 }), 2)), { 2, 3 }, { 0, 0, 0, 0, 0, 0 })
      end)

    it("a dimension out of range and an unknown option are errors on " .. b, function()
      local x = host("i32", { 2, 3 }, { 1, 2, 3, 4, 5, 6 })
      local msg = "the dimension must be an integer from 1 to 2"
      errors_with(msg, lacc.sum, x, 3)
      errors_with(msg, lacc.sum, x, 0)
      errors_with(msg, lacc.maximum, x, 1.5)
      errors_with(msg, lacc.argmax, x, 3)
      errors_with(msg, lacc.fold, add, 0, x, { dim = 3 })
      errors_with(msg, lacc.fold1, add, x, { dim = -1 })
      errors_with(msg, lacc.scanl, add, 0, x, { dim = 3 })
      errors_with(msg, lacc.and_, lacc.array("bool", { 2, 3 }), 3)
      errors_with(msg, lacc.any, function(v) return lacc.gt(v, 1) end, x, 3)
      errors_with("unknown option 'dims'", lacc.fold, add, 0, x, { dims = 1 })
      errors_with("unknown option 'dims'", lacc.fold1, add, x, { dims = 1 })
      errors_with("unknown option 'dims'", lacc.scanr1, add, x, { dims = 1 })
    end)
  end)

  describe("scans along a dimension on " .. b, function()
    it("scanl, scanl1, scanr and scanr1 with {dim = d} agree with Lua loops on " .. b, function()
      H.seed(9201)
      local function first(a, _) return a end
      local cases = {
        { "scanl", "i32", 2, 1, add, 0 }, { "scanr1", "i32", 2, 1, add },
        { "scanl1", "f64", 3, 2, add }, { "scanr", "i64", 3, 1, add, 7 },
        { "scanl1", "i64", 3, 1, first },
      }
      for _, c in ipairs(cases) do
        local kind, t, rank, d, f, z = c[1], c[2], c[3], c[4], c[5], c[6]
        for _, sh in ipairs(SHAPES[rank]) do
          local flat = values(t, size(sh))
          local x = host(t, sh, flat)
          local p
          if z ~= nil then p = lacc[kind](f, z, x, { dim = d }) else p = lacc[kind](f, x, { dim = d }) end
          local osh, want = scan_ref(kind, sh, flat, d, f, z)
          local tols
          if t == "f64" then
            tols = {}
            for i = 1, #want do tols[i] = 1e-9 end
          end
          check(run(p), osh, want, tols, ("%s %s %s dim %d"):format(kind, t, shape_str(sh), d))
        end
      end
    end)
  end)

  describe("slice, take, drop and iota on " .. b, function()
    it("slice of a rank-1 array with ranges agrees with Lua loops on " .. b, function()
      local flat = { 10, 20, 30, 40, 50, 60, 70 }
      local x = host("i32", { 7 }, flat)
      check(run(lacc.slice(x, { { 2, 6, 2 } })), { 3 }, { 20, 40, 60 })
      check(run(lacc.slice(x, { { 7, 1, -3 } })), { 3 }, { 70, 40, 10 })
      check(run(lacc.slice(x, { { 3, 2 } })), { 0 }, {})
      check(run(lacc.slice(x, { 4 })), {}, { 40 })
      -- (steps other than 1 and -1, two elements or more: one program, constants differ)
      for _, r in ipairs { { 2, 7, 4 }, { 5, 2, -2 }, { 7, 2, -5 }, { 3, 7, 2 }, { 6, 3, -3 } } do
        local want = {}
        for _, i in ipairs(range_list(r[1], r[2], r[3])) do want[#want + 1] = flat[i] end
        check(run(lacc.slice(x, { r })), { #want }, want,
          nil, ("{%d, %d, %s}"):format(r[1], r[2], tostring(r[3])))
      end
    end)

    it("slice of a rank-2 array with mixed entries agrees with Lua loops on " .. b, function()
      local x, flat = grid()
      local function at(i, j) return flat[(i - 1) * 5 + j] end
      local function ref(rows, cols, drop_rows, drop_cols)
        local want = {}
        for _, i in ipairs(rows) do for _, j in ipairs(cols) do want[#want + 1] = at(i, j) end end
        local sh = {}
        if not drop_rows then sh[#sh + 1] = #rows end
        if not drop_cols then sh[#sh + 1] = #cols end
        return sh, want
      end
      local all4, all5 = range_list(1, 4), range_list(1, 5)
      local sh, want = ref(range_list(4, 1, -2), all5)
      check(run(lacc.slice(x, { { 4, 1, -2 }, lacc.all })), sh, want, nil, "{4,1,-2}, all")
      sh, want = ref({ 2 }, range_list(1, 5, 2), true)
      check(run(lacc.slice(x, { 2, { 1, 5, 2 } })), sh, want, nil, "2, {1,5,2}")
      sh, want = ref(all4, { 3 }, false, true)
      check(run(lacc.slice(x, { lacc.all, 3 })), sh, want, nil, "all, 3")
      sh, want = ref(range_list(2, 3), range_list(5, 1, -2))
      check(run(lacc.slice(x, { { 2, 3 }, { 5, 1, -2 } })), sh, want, nil, "{2,3}, {5,1,-2}")
      sh, want = ref(range_list(3, 4), range_list(4, 2, -2))
      check(run(lacc.slice(x, { { 3, 4 }, { 4, 2, -2 } })), sh, want, nil, "{3,4}, {4,2,-2}")
      sh, want = ref(range_list(3, 1, -2), all5)
      check(run(lacc.slice(x, { { 3, 1, -2 }, lacc.all })), sh, want, nil, "{3,1,-2}, all")
      sh, want = ref({ 4 }, range_list(1, 5, 4), true)
      check(run(lacc.slice(x, { 4, { 1, 5, 4 } })), sh, want, nil, "4, {1,5,4}")
    end)

    it("slice: a step of 0 is an error, a range outside the array an error when run on " .. b,
      function()
        local x = host("i32", { 7 }, { 10, 20, 30, 40, 50, 60, 70 })
        errors_with("the step of a range cannot be 0", lacc.slice, x, { { 1, 3, 0 } })
        errors_with("out of bounds", run, lacc.slice(x, { { 5, 9, 2 } }))
        errors_with("out of bounds", run, lacc.slice(x, { { -2, 6, 4 } }))
        errors_with("out of bounds", run, lacc.slice(x, { { 9, 6, -2 } }))
        local g = grid()
        errors_with("out of bounds", run, lacc.slice(g, { { 5, 1, -2 }, lacc.all }))
        errors_with("out of bounds", run, lacc.slice(g, { 2, { 1, 7, 3 } }))
      end)

    it("take and drop clamp n to 0 .. the row's length on " .. b, function()
      local flat = { 10, 20, 30, 40, 50, 60, 70 }
      local x = host("i64", { 7 }, flat)
      for _, n in ipairs { 3, 7, 8, 99, -1, -5 } do   -- (0 is -1 clamped)
        local k = math.max(0, math.min(n, 7))
        local tw, dw = {}, {}
        for i = 1, 7 do
          if i <= k then tw[#tw + 1] = flat[i] else dw[#dw + 1] = flat[i] end
        end
        check(run(lacc.take(n, x)), { #tw }, tw, nil, "take " .. n)
        check(run(lacc.drop(n, x)), { #dw }, dw, nil, "drop " .. n)
      end
      local g, gflat = grid()
      for _, n in ipairs { 2, 5, 99 } do
        local k = math.max(0, math.min(n, 5))
        local tw, dw = {}, {}
        for i = 1, 4 do
          for j = 1, 5 do
            local v = gflat[(i - 1) * 5 + j]
            if j <= k then tw[#tw + 1] = v else dw[#dw + 1] = v end
          end
        end
        check(run(lacc.take(n, g)), { 4, k }, tw, nil, "take " .. n .. " rank 2")
        check(run(lacc.drop(n, g)), { 4, 5 - k }, dw, nil, "drop " .. n .. " rank 2")
      end
    end)

    it("iota counts 1 .. n, i64 unless a type is given on " .. b, function()
      local a = run(lacc.iota(5))
      assert.are.equal("i64", a:type())
      check(a, { 5 }, { 1, 2, 3, 4, 5 })
      local e = run(lacc.iota(0))
      assert.are.equal("i64", e:type())
      check(e, { 0 }, {})
      local f = run(lacc.iota(4, "f32"))
      assert.are.equal("f32", f:type())
      check(f, { 4 }, { 1, 2, 3, 4 })
    end)
  end)

  describe("argmax and argmin on " .. b, function()
    -- (function, larger?, type, rank, dimension or nil for the whole array)
    local cases = {
      { "argmax", true, "i32", 3, nil }, { "argmax", true, "f64", 1, nil },
      { "argmin", false, "f64", 1, nil },
      { "argmax", true, "i32", 3, 1 }, { "argmin", false, "i64", 3, 2 },
      { "argmax", true, "f32", 3, 3 },
      { "argmax", true, "f64", 2, 1 }, { "argmin", false, "f64", 2, 2 },
    }
    local FLOATS = { NAN, -1.5, 0, -0.0, 2, 2, 3.25, -7, 3.25 }
    local function data(t, n, nans)
      local v = {}
      for i = 1, n do
        if t == "f32" or t == "f64" then
          v[i] = FLOATS[H.randint(nans and 1 or 2, #FLOATS)]
        else
          v[i] = H.randint(0, 3)   -- many ties
        end
      end
      return v
    end

    it("give the first position of the extreme, ties and NaN included, on " .. b, function()
      H.seed(9301)
      local shapes = {
        { { 7 }, { 1 }, { 13 } },
        { { 3, 5 }, { 5, 1 }, { 1, 4 } },
        { { 3, 5, 7 }, { 1, 3, 1 }, { 2, 2, 2 } },
      }
      for _, c in ipairs(cases) do
        local name, larger, t, rank, d = c[1], c[2], c[3], c[4], c[5]
        for _, sh in ipairs(shapes[rank]) do
          for round = 1, 3 do
            local flat = data(t, size(sh), round ~= 2)
            local x = host(t, sh, flat)
            local got = run(lacc[name](x, d))
            assert.are.equal("i64", got:type())
            local osh, want
            if d == nil then
              osh, want = {}, { arg_line(flat, larger) }
            else
              local ls
              osh, ls = lines(sh, d)
              want = {}
              for o, line in ipairs(ls) do
                local vals = {}
                for k, p in ipairs(line) do vals[k] = flat[p] end
                want[o] = arg_line(vals, larger)
              end
            end
            check(got, osh, want, nil,
              ("%s %s %s dim %s round %d"):format(name, t, shape_str(sh), tostring(d), round))
          end
        end
      end
    end)

    it("treat -0.0 and 0.0 as equal and a NaN as beyond every number on " .. b, function()
      local function pos(name, list)
        return H.num(run(lacc[name](host("f64", { #list }, list))):at_linear(0))
      end
      assert.are.equal(1, pos("argmax", { 0.0, -0.0 }))
      assert.are.equal(1, pos("argmax", { -0.0, 0.0 }))
      assert.are.equal(1, pos("argmin", { 0.0, -0.0 }))
      assert.are.equal(1, pos("argmin", { -0.0, 0.0 }))
      assert.are.equal(2, pos("argmax", { 1, NAN, 5, NAN }))
      assert.are.equal(2, pos("argmin", { 1, NAN, -5, NAN }))
      assert.are.equal(1, pos("argmin", { NAN, -math.huge }))
      assert.are.equal(1, pos("argmax", { NAN, math.huge }))
      assert.are.equal(3, pos("argmax", { -math.huge, 1, math.huge, math.huge }))
      assert.are.equal(1, pos("argmin", { -math.huge, 1, -math.huge }))
      assert.are.equal(4, pos("argmax", { -3, -3, -3, -2, -2 }))
      -- along a dimension: each column on its own
      local m = run(lacc.argmax(host("f64", { 3, 3 }, { 1, NAN, -0.0, NAN, 9, 0.0, 2, NAN, 0.0 }), 1))
      check(m, { 3 }, { 2, 1, 1 })
      m = run(lacc.argmin(host("f64", { 3, 3 }, { 1, NAN, -0.0, NAN, 9, 0.0, 2, NAN, 0.0 }), 2))
      check(m, { 3 }, { 2, 1, 2 })
    end)

    -- Long lines are folded in chunks (threads, work-groups) that are combined in order;
    -- the first position must still win ties and the first NaN every line.
    it("keep the first extreme across the chunks of long lines on " .. b, function()
      H.seed(9311)
      local n = 100003
      for _, c in ipairs { { "argmin", false, "f32" }, { "argmax", true, "f64" },
                           { "argmax", true, "i32" } } do
        local name, larger, t = c[1], c[2], c[3]
        for round = 1, 3 do
          local flat = {}
          for i = 1, 2 * n do
            flat[i] = t == "i32" and H.randint(-2, 2) or ({ -1.5, 0, 2, -0.0 })[H.randint(1, 4)]
          end
          if t ~= "i32" and round > 1 then   -- NaNs late in a line, one in each chunk half
            for _, p in ipairs { n - 5, n - 40000, n + 70000, 2 * n - 1 } do
              if round == 3 or p > n then flat[p] = NAN end
            end
          end
          local whole = run(lacc[name](host(t, { 2 * n }, flat)))
          check(whole, {}, { arg_line(flat, larger) }, nil, name .. " whole " .. t .. " " .. round)
          local rows = run(lacc[name](host(t, { 2, n }, flat), 2))
          local want = {}
          for o = 1, 2 do
            local line = {}
            for k = 1, n do line[k] = flat[(o - 1) * n + k] end
            want[o] = arg_line(line, larger)
          end
          check(rows, { 2 }, want, nil, name .. " rows " .. t .. " " .. round)
        end
      end
    end)
  end)

  describe("gather, scatter and where on " .. b, function()
    local T2 = lacc.tuple("i64", "i64")

    it("gather reads xs at each index, of idx's shape, on " .. b, function()
      H.seed(9401)
      local flat = values("i32", 7)
      local x = host("i32", { 7 }, flat)
      local isz = { 3, 4 }   -- (an index array of rank 2)
      local idx = {}
      for i = 1, size(isz) do idx[i] = H.randint(1, 7) end
      local want = {}
      for i, k in ipairs(idx) do want[i] = flat[k] end
      check(run(lacc.gather(host("i64", isz, idx), x)), isz, want)
      -- rank 2: tuples of indices
      local g, gflat = grid()
      local g1 = run(lacc.gather(lacc.fromtable({ { 3, 1 }, { 1, 3 } }, T2), g))
      check(g1, { 2 }, { gflat[(3 - 1) * 5 + 1], gflat[(1 - 1) * 5 + 3] })
      local pairs_, want2 = {}, {}
      for r = 1, 9 do
        local i, j = H.randint(1, 4), H.randint(1, 5)
        pairs_[r] = { i, j }
        want2[r] = gflat[(i - 1) * 5 + j]
      end
      check(run(lacc.gather(lacc.fromtable(pairs_, T2), g)), { 9 }, want2)
      -- an empty idx gives an empty result
      check(run(lacc.gather(lacc.array("i64", { 0, 3 }), x)), { 0, 3 }, {})
    end)

    it("gather out of range is an error on " .. b, function()
      local x = host("i32", { 7 }, { 1, 2, 3, 4, 5, 6, 7 })
      errors_with("out of bounds", run, lacc.gather(host("i64", { 1, 2 }, { 1, 8 }), x))
      errors_with("out of bounds", run, lacc.gather(host("i64", { 2, 1 }, { 0, 1 }), x))
      local g = grid()
      errors_with("out of bounds", run, lacc.gather(lacc.fromtable({ { 3, 1 }, { 3, 6 } }, T2), g))
      errors_with("out of bounds", run, lacc.gather(lacc.fromtable({ { 5, 1 } }, T2), g))
    end)

    it("scatter: the highest position wins, index 0 drops, on " .. b, function()
      H.seed(9402)
      for _, n in ipairs { 0, 1, 9, 40, 3000 } do
        local xs, idx = {}, {}
        for i = 1, n do
          xs[i] = H.randint(-1000000, 1000000)
          idx[i] = H.randint(0, 8)   -- 0: dropped
        end
        local defaults = {}
        for i = 1, 8 do defaults[i] = -i end
        local want = {}
        for i = 1, 8 do want[i] = defaults[i] end
        for i = 1, n do
          if idx[i] ~= 0 then want[idx[i]] = xs[i] end
        end
        local got = run(lacc.scatter(host("i32", { n }, xs), host("i64", { n }, idx),
          host("i32", { 8 }, defaults)))
        check(got, { 8 }, want, nil, "rank 1, n = " .. n)
      end
      -- rank 2: values 6 x 7 written into 3 x 4 through pairs, many on one place
      for _, sh in ipairs { { 6, 7 }, { 40, 50 } } do
        local n = size(sh)
        local xs, flat_idx, nested = {}, {}, {}
        for i = 1, n do
          xs[i] = H.rand() * 200 - 100
          if H.rand() < 0.2 then flat_idx[i] = { 0, 0 }
          else flat_idx[i] = { H.randint(1, 3), H.randint(1, 4) } end
        end
        for r = 1, sh[1] do
          nested[r] = {}
          for c = 1, sh[2] do nested[r][c] = flat_idx[(r - 1) * sh[2] + c] end
        end
        local defaults = {}
        for i = 1, 12 do defaults[i] = 1000 + i end
        local want = {}
        for i = 1, 12 do want[i] = defaults[i] end
        for i = 1, n do
          local p = flat_idx[i]
          if p[1] ~= 0 then want[(p[1] - 1) * 4 + p[2]] = xs[i] end
        end
        local got = run(lacc.scatter(host("f64", sh, xs), lacc.fromtable(nested, T2),
          host("f64", { 3, 4 }, defaults)))
        check(got, { 3, 4 }, want, nil, "rank 2 " .. shape_str(sh))
      end
    end)

    it("where picks element by element, a number taking the other's type, on " .. b, function()
      H.seed(9403)
      local sh = { 3, 5 }
      local n = size(sh)
      local mask, a, c = {}, values("i32", n), values("i32", n)
      for i = 1, n do mask[i] = H.rand() < 0.5 end
      local m = host("bool", sh, mask)
      local want = {}
      for i = 1, n do want[i] = mask[i] and a[i] or c[i] end
      local got = run(lacc.where(m, host("i32", sh, a), host("i32", sh, c)))
      assert.are.equal("i32", got:type())
      check(got, sh, want)
      local fa = values("f32", n)
      for i = 1, n do want[i] = mask[i] and fa[i] or 2.5 end
      got = run(lacc.where(m, host("f32", sh, fa), 2.5))
      assert.are.equal("f32", got:type())
      check(got, sh, want)
      local ic = values("i64", n)
      for i = 1, n do want[i] = mask[i] and 7 or ic[i] end
      got = run(lacc.where(m, 7, host("i64", sh, ic)))
      assert.are.equal("i64", got:type())
      check(got, sh, want)
      errors_with("expected a mask of bool", lacc.where, host("i32", sh, a), 1, 2)
      errors_with("expected a mask of bool", lacc.where, host("i32", sh, a), host("i32", sh, c), 0)
    end)
  end)
end
