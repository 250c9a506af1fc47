-- Every combinator of the guide (the ones that exist so far) and the host array API of
-- the guide, on every backend, against plain-Lua references computed here with loops over
-- Lua tables. Shapes are random and include empty arrays, rank 0 where allowed, odd
-- extents and ranks 1-3; element types f64 f32 i32 i64 u8 bool and (f32,i32).
local H = require "helper"
local sweep = H.sweeper(it)   -- the type sweeps run where spec/helper.lua says
local lacc = H.lacc
local unpack = table.unpack or unpack

H.seed(20240611)

-- ---------------------------------------------------------------- reference helpers

local BIG = math.floor(2 ^ 40)          -- an integer on Lua 5.4, exact everywhere

local function size_of(sh)
  local n = 1
  for _, e in ipairs(sh) do n = n * e end
  return n
end

-- All 1-based index tuples of a shape in row-major order ({{}} for rank 0).
local function indices(sh)
  local out = {}
  if size_of(sh) == 0 then return out end
  local ix = {}
  local function go(d)
    if d > #sh then
      out[#out + 1] = { unpack(ix, 1, #sh) }
      return
    end
    for i = 1, sh[d] do
      ix[d] = i
      go(d + 1)
    end
  end
  go(1)
  return out
end

-- 1-based linear position of an index tuple.
local function lin(sh, ix)
  local l = 0
  for d = 1, #sh do l = l * sh[d] + (ix[d] - 1) end
  return l + 1
end

local host = H.from_flat

local function show(v)
  if type(v) == "table" then
    local p = {}
    for i, x in ipairs(v) do p[i] = show(x) end
    return "{" .. table.concat(p, ",") .. "}"
  end
  return tostring(v)
end

local function eqv(g, e, tol)
  if type(e) == "table" then
    if type(g) ~= "table" or #g ~= #e then return false end
    for i = 1, #e do
      if not eqv(g[i], e[i], tol) then return false end
    end
    return true
  end
  return H.same(g, e, tol)
end

local function shape_str(sh)
  local p = {}
  for i, e in ipairs(sh) do p[i] = tostring(H.num(e)) end
  return "{" .. table.concat(p, ",") .. "}"
end

-- Check a host array's shape and every element against a reference.
local function check(a, sh, flat, tol, ctx)
  ctx = ctx and (" [" .. ctx .. "]") or ""
  local s = a:shape()
  local ok = #s == #sh
  for d = 1, #sh do ok = ok and H.num(s[d]) == sh[d] end
  if not ok then
    error(("shape: expected %s, got %s%s"):format(shape_str(sh), shape_str(s), ctx), 2)
  end
  if #a ~= #flat then
    error(("size: expected %d, got %d%s"):format(#flat, #a, ctx), 2)
  end
  for i = 1, #flat do
    local g = a:at_linear(i - 1)
    if not eqv(g, flat[i], tol) then
      error(("element %d of shape %s: expected %s, got %s%s"):format(
        i, shape_str(sh), show(flat[i]), show(g), ctx), 2)
    end
  end
end

local function run(p, b) return lacc.run(p, { backend = b }) end

-- Programs whose results a test checks one by one run 16 to a program (H.batch: one
-- build where there were 16, and builds are most of this file's time): later(p, b, ...)
-- records check(run(p, b), ...), and flush(), each such test's last line, runs them and
-- checks each result on its own. A test that fails midway leaves nothing to the next.
local pending, batches = {}, {}
before_each(function() pending, batches = {}, {} end)
local function later(p, b, ...)
  local batch = batches[b]
  if not batch then
    batch = H.batch(function(list) return lacc.run(list, { backend = b }) end)
    batches[b] = batch
  end
  pending[#pending + 1] = { batch, batch:add(p), { n = select("#", ...), ... } }
end
local function flush()
  local todo = pending
  pending, batches = {}, {}
  for _, c in ipairs(todo) do check(c[1]:get(c[2]), unpack(c[3], 1, c[3].n)) end
end

-- Random shapes of the given ranks: empties, ones, odd sizes and a random one each.
local function shapes(ranks)
  local out = {}
  for _, r in ipairs(ranks) do
    if r == 0 then
      out[#out + 1] = {}
    elseif r == 1 then
      for _, s in ipairs { { 0 }, { 1 }, { 7 }, { 13 }, { H.randint(2, 400) } } do out[#out + 1] = s end
    elseif r == 2 then
      for _, s in ipairs { { 0, 4 }, { 3, 0 }, { 1, 1 }, { 7, 13 }, { 13, 1 },
                           { H.randint(1, 30), H.randint(1, 30) } } do
        out[#out + 1] = s
      end
    elseif r == 3 then
      for _, s in ipairs { { 0, 2, 3 }, { 2, 0, 3 }, { 2, 3, 0 }, { 1, 1, 1 }, { 3, 7, 5 },
                           { H.randint(1, 9), H.randint(1, 9), H.randint(1, 9) } } do
        out[#out + 1] = s
      end
    end
  end
  return out
end

local function gen(T, n, which)
  local g = T[which or "gen"]
  local r = {}
  for i = 1, n do r[i] = g() end
  return r
end

-- ---------------------------------------------------------------- element types
-- Each type: a lacc function and its Lua reference for map, zipWith, fold (with a
-- non-neutral z) and generate (from the indices); gen gives general values, genx
-- values whose sums are exact in the type.

local function f32(x) return H.f32(x) end
local C = lacc.constant

-- An i64 code of the indices (Exp side and Lua side).
local function code_exp(ix)
  local s = C(5, "i64")
  for d = 1, #ix do s = s * 31 + ix[d] end
  return s
end
local function code_ref(ix)
  local s = 5
  for d = 1, #ix do s = s * 31 + ix[d] end
  return s
end

local TYPES = {
  {
    name = "f64", t = "f64", tol = 1e-12, numeric = true,
    gen = function() return H.rand() * 200 - 100 end,
    genx = function() return H.randint(-2000, 2000) / 16 end,
    map = function(x) return x * 0.1 + 1 end, mapr = function(x) return x * 0.1 + 1 end,
    zip = function(a, b) return a * 2 - b end, zipr = function(a, b) return a * 2 - b end,
    fold = function(a, b) return a + b end, foldr = function(a, b) return a + b end,
    z = 0.5, zr = 0.5,
    gen_ix = function(ix) return lacc.cast(code_exp(ix), "f64") * 0.25 end,
    gen_ixr = function(ix) return code_ref(ix) * 0.25 end,
    const = function() return C(2.5, "f64") end, constr = 2.5,
  },
  {
    name = "f32", t = "f32", tol = 1e-6, numeric = true,
    gen = function() return f32(H.rand() * 200 - 100) end,
    genx = function() return H.randint(-2000, 2000) / 16 end,
    map = function(x) return x * 0.1 + 1 end,
    mapr = function(x) return f32(f32(x * f32(0.1)) + 1) end,
    zip = function(a, b) return a - b * 0.5 end, zipr = function(a, b) return f32(a - b * 0.5) end,
    fold = function(a, b) return a + b end, foldr = function(a, b) return f32(a + b) end,
    z = 1.25, zr = 1.25,
    gen_ix = function(ix) return lacc.cast(code_exp(ix), "f32") * 0.25 end,
    gen_ixr = function(ix) return f32(code_ref(ix)) * 0.25 end,
    const = function() return C(0.1, "f32") end, constr = f32(0.1),
  },
  {
    name = "i32", t = "i32", numeric = true,
    gen = function() return H.randint(-100000000, 100000000) end,
    genx = function() return H.randint(-1000, 1000) end,
    map = function(x) return x * 3 - 7 end, mapr = function(x) return x * 3 - 7 end,
    zip = function(a, b) return a * 2 - b end, zipr = function(a, b) return a * 2 - b end,
    fold = function(a, b) return a + b end, foldr = function(a, b) return a + b end,
    z = 3, zr = 3,
    gen_ix = function(ix) return lacc.cast(code_exp(ix), "i32") - 1000 end,
    gen_ixr = function(ix) return code_ref(ix) - 1000 end,
    const = function() return C(-123456, "i32") end, constr = -123456,
  },
  {
    name = "i64", t = "i64", numeric = true,
    gen = function() return H.randint(-BIG, BIG) end,
    genx = function() return H.randint(-BIG, BIG) end,
    map = function(x) return x * 3 - 7 end, mapr = function(x) return x * 3 - 7 end,
    zip = function(a, b) return a * 2 - b end, zipr = function(a, b) return a * 2 - b end,
    fold = function(a, b) return a + b end, foldr = function(a, b) return a + b end,
    z = BIG * 8, zr = BIG * 8,
    gen_ix = function(ix) return code_exp(ix) * 4294967311 end,
    gen_ixr = function(ix) return code_ref(ix) * 4294967311 end,
    const = function() return C(BIG * 3 + 1, "i64") end, constr = BIG * 3 + 1,
  },
  {
    name = "u8", t = "u8", numeric = true,
    gen = function() return H.randint(0, 255) end,
    genx = function() return H.randint(0, 255) end,
    map = function(x) return x * 3 + 5 end, mapr = function(x) return (x * 3 + 5) % 256 end,
    zip = function(a, b) return a - b end, zipr = function(a, b) return (a - b) % 256 end,
    fold = function(a, b) return a + b end, foldr = function(a, b) return (a + b) % 256 end,
    z = 200, zr = 200,
    gen_ix = function(ix) return lacc.cast(code_exp(ix), "u8") end,
    gen_ixr = function(ix) return code_ref(ix) % 256 end,
    const = function() return C(254, "u8") end, constr = 254,
  },
  {
    name = "bool", t = "bool",
    gen = function() return H.rand() < 0.5 end,
    genx = function() return H.rand() < 0.5 end,
    map = function(x) return lacc.lnot(x) end, mapr = function(x) return not x end,
    zip = function(a, b) return lacc.land(a, lacc.lnot(b)) end,
    zipr = function(a, b) return a and not b end,
    fold = function(a, b) return lacc.ne(a, b) end, foldr = function(a, b) return a ~= b end,
    z = true, zr = true,
    gen_ix = function(ix) return lacc.eq(lacc.imod(code_exp(ix), 3), 0) end,
    gen_ixr = function(ix) return code_ref(ix) % 3 == 0 end,
    const = function() return true end, constr = true,
  },
  {
    name = "(f32,i32)", t = lacc.tuple("f32", "i32"),
    gen = function() return { f32(H.rand() * 200 - 100), H.randint(-1000, 1000) } end,
    genx = function() return { H.randint(-2000, 2000) / 16, H.randint(-1000, 1000) } end,
    map = function(p) return p[1] * 0.5, p[2] - 3 end,
    mapr = function(p) return { p[1] * 0.5, p[2] - 3 } end,
    zip = function(a, b) return a[1] - b[1], a[2] * 2 - b[2] end,
    zipr = function(a, b) return { f32(a[1] - b[1]), a[2] * 2 - b[2] } end,
    fold = function(a, b) return a[1] + b[1], lacc.max(a[2], b[2]) end,
    foldr = function(a, b) return { f32(a[1] + b[1]), math.max(a[2], b[2]) } end,
    z = nil, zr = { 0.25, -7 },
    gen_ix = function(ix)
      local s = code_exp(ix)
      return lacc.cast(s, "f32") * 0.5, lacc.cast(s, "i32")
    end,
    gen_ixr = function(ix) local s = code_ref(ix); return { f32(s) * 0.5, s } end,
    const = function() return lacc.tuple(C(1.5, "f32"), C(-9, "i32")) end, constr = { 1.5, -9 },
  },
}
-- A tuple z must be an expression.
TYPES[7].zfn = function() return lacc.tuple(C(0.25, "f32"), C(-7, "i32")) end
local function zval(T) return T.zfn and T.zfn() or T.z end

-- The shapes of a sweep for type T: all of them for the first type, every other one for
-- the rest (their kernels differ only in the element type's name; each shape's kernels
-- cost a compile: the full sweep of every type took minutes); all of them for every type
-- under LACC_TEST_SWEEP=full (spec/helper.lua).
-- The ranks a type's sweep covers: every one for f64 on the cpu backend and the
-- interpreter; the other types (and on OpenCL f64 too) every other rank of the list,
-- alternating from type to type, so every rank still meets every combinator on several
-- types, floats and integers (each rank of a program is a kernel of its own, and the
-- kernels of one combinator differ between types only in the element type: the full
-- product compiled about a thousand kernels, most of make test's time).
local function ranks_for(T, ranks, b)
  local k
  for i, U in ipairs(TYPES) do if U == T then k = i end end
  if H.sweep_mode == "full" or (k == 1 and b ~= "opencl") or #ranks == 1 then return ranks end
  local lesser = { [2] = 0, [4] = 1, [5] = 2, [6] = 3 }   -- f32, i64, u8, bool
  if b == "opencl" and lesser[k] then
    -- on OpenCL one rank each, in turn: their kernels are f64's and i32's with another
    -- typedef, and every rank is f64's or i32's
    return { ranks[lesser[k] % #ranks + 1] }
  end
  if k == 1 then k = 2 end   -- f64 on OpenCL: the ranks i32 and the tuple leave out
  local out = {}
  for i, r in ipairs(ranks) do
    if (i + k) % 2 == 0 then out[#out + 1] = r end
  end
  return out
end
local function sweep_shapes(T, ranks, b) return shapes(ranks_for(T, ranks, b)) end
local function ranks_name(T, ranks, b) return table.concat(ranks_for(T, ranks, b), " ") end

-- Every other shape of a sweep, the other half for the next type (reshape's kernels
-- differ by target shape: all of them for every type came to 250 kernels).
local function half_of(T, ranks)
  if H.sweep_mode == "full" then return shapes(ranks) end
  local k, some = 1, {}
  for i, U in ipairs(TYPES) do if U == T then k = i end end
  for i, sh in ipairs(shapes(ranks)) do
    if (i + k) % 2 == 0 then some[#some + 1] = sh end
  end
  return some
end

local function shapes_of(T, ranks, b)
  local all = shapes(ranks_for(T, ranks, b))
  if T == TYPES[1] or H.sweep_mode == "full" then return all end
  local some = {}
  for i = 1, #all, 2 do some[#some + 1] = all[i] end
  return some
end

local NUMERIC = {}
for _, T in ipairs(TYPES) do
  if T.numeric then NUMERIC[#NUMERIC + 1] = T end
end

-- Reference of an innermost-dimension fold.
local function ref_fold(sh, flat, f, z)
  local r = #sh
  local outer = {}
  for d = 1, r - 1 do outer[d] = sh[d] end
  local n = sh[r]
  local out = {}
  for k = 1, size_of(outer) do
    local acc = z
    for i = 1, n do
      local x = flat[(k - 1) * n + i]
      if acc == nil then acc = x else acc = f(acc, x) end
    end
    out[k] = acc
  end
  return outer, out
end

local function shape_min(a, b)
  local r = {}
  for d = 1, #a do r[d] = math.min(a[d], b[d]) end
  return r
end

-- A second shape of the same rank (for the intersection of zipWith).
local function other_shape(sh)
  local r = {}
  for d = 1, #sh do r[d] = H.randint(math.max(0, sh[d] - 3), sh[d] + 3) end
  if #sh > 0 and H.rand() < 0.2 then r[H.randint(1, #sh)] = sh[#sh] end
  return r
end

local function gather(sh, flat, ix) return flat[lin(sh, ix)] end

-- ---------------------------------------------------------------- specs

describe("introduction", function()
  for _, b in ipairs(H.backends) do
    for _, T in ipairs(TYPES) do
      sweep(T.name, b, ("use, ranks %s, %s on %s"):format(ranks_name(T, { 0, 1, 2, 3 }, b), T.name, b), function()
        for _, sh in ipairs(sweep_shapes(T, { 0, 1, 2, 3 }, b)) do
          local flat = gen(T, size_of(sh))
          local a = host(T.t, sh, flat)
          later(lacc.use(a), b, sh, flat, nil, "use")
          later(a, b, sh, flat, nil, "run of a host array")
        end
        flush()
      end)

      sweep(T.name, b, ("unit, fill, %s on %s"):format(T.name, b), function()
        local r = run(lacc.unit(T.const()), b)
        check(r, {}, { T.constr }, T.tol, "unit")
        for _, sh in ipairs(shapes_of(T, { 0, 1, 2, 3 }, b)) do
          local exp = {}
          for i = 1, size_of(sh) do exp[i] = T.constr end
          later(lacc.fill(sh, T.const()), b, sh, exp, T.tol, "fill")
        end
        flush()
      end)

      sweep(T.name, b, ("generate, ranks %s, %s on %s"):format(ranks_name(T, { 0, 1, 2, 3 }, b), T.name, b), function()
        for _, sh in ipairs(shapes_of(T, { 0, 1, 2, 3 }, b)) do
          local nargs
          local p = lacc.generate(sh, function(...)
            nargs = select("#", ...)
            return T.gen_ix({ ... })
          end)
          assert.are.equal(#sh, nargs)
          local exp = {}
          for k, ix in ipairs(indices(sh)) do exp[k] = T.gen_ixr(ix) end
          later(p, b, sh, exp, T.tol, "generate " .. shape_str(sh))
        end
        flush()
      end)
    end

    it("unit of expressions over arrays, and run of a scalar expression, on " .. b, function()
      local flat = gen(TYPES[3], 13)
      local xs = host("i32", { 13 }, flat)
      later(lacc.unit(lacc.size(xs)), b, {}, { 13 }, nil, "unit(size)")
      local ax = lacc.use(xs)
      later(lacc.unit(ax[5] * 2), b, {}, { flat[5] * 2 }, nil, "unit(xs[5]*2)")
      check(run(ax[7] + ax[1], b), {}, { flat[7] + flat[1] }, nil, "run(exp)")   -- a scalar: no table
      local m = host("f64", { 3, 4 }, gen(TYPES[1], 12))
      later(lacc.unit(lacc.shape(m)[2]), b, {}, { 4 }, nil, "unit(shape[2])")
      flush()
    end)
  end
end)

describe("element-wise", function()
  for _, b in ipairs(H.backends) do
    for _, T in ipairs(TYPES) do
      sweep(T.name, b, ("map, ranks %s, %s on %s"):format(ranks_name(T, { 0, 1, 2, 3 }, b), T.name, b), function()
        for _, sh in ipairs(sweep_shapes(T, { 0, 1, 2, 3 }, b)) do
          local flat = gen(T, size_of(sh))
          local exp = {}
          for i, x in ipairs(flat) do exp[i] = T.mapr(x) end
          later(lacc.map(T.map, host(T.t, sh, flat)), b, sh, exp, T.tol, "map")
        end
        flush()
      end)

      sweep(T.name, b, ("imap, ranks %s, %s on %s"):format(ranks_name(T, { 0, 1, 2, 3 }, b), T.name, b), function()
        for _, sh in ipairs(sweep_shapes(T, { 0, 1, 2, 3 }, b)) do
          local flat = gen(T, size_of(sh))
          local nargs
          local p = lacc.imap(function(...)
            local args = { ... }
            nargs = select("#", ...)
            local x = args[#args]
            args[#args] = nil
            local g = { T.gen_ix(args) }
            return T.zip(x, #g > 1 and lacc.tuple(unpack(g)) or g[1])
          end, host(T.t, sh, flat))
          assert.are.equal(#sh + 1, nargs)
          local exp = {}
          for k, ix in ipairs(indices(sh)) do exp[k] = T.zipr(flat[k], T.gen_ixr(ix)) end
          later(p, b, sh, exp, T.tol, "imap " .. shape_str(sh))
        end
        flush()
      end)

      sweep(T.name, b,
        ("zipWith with intersecting shapes, ranks %s, %s on %s"):format(ranks_name(T, { 0, 1, 2, 3 }, b), T.name, b), function()
        for _, sh in ipairs(sweep_shapes(T, { 0, 1, 2, 3 }, b)) do
          local sh2 = other_shape(sh)
          local fa, fb = gen(T, size_of(sh)), gen(T, size_of(sh2))
          local rs = shape_min(sh, sh2)
          local exp = {}
          for k, ix in ipairs(indices(rs)) do
            exp[k] = T.zipr(gather(sh, fa, ix), gather(sh2, fb, ix))
          end
          local p = lacc.zipWith(T.zip, host(T.t, sh, fa), host(T.t, sh2, fb))
          later(p, b, rs, exp, T.tol, "zipWith " .. shape_str(sh) .. " " .. shape_str(sh2))
        end
        flush()
      end)

      sweep(T.name, b, ("zip and unzip, ranks %s, %s on %s"):format(ranks_name(T, { 0, 1, 2, 3 }, b), T.name, b), function()
        local I = TYPES[3]
        for _, sh in ipairs(shapes_of(T, { 0, 1, 2, 3 }, b)) do
          local sh2 = other_shape(sh)
          local fa, fb = gen(T, size_of(sh)), gen(I, size_of(sh2))
          local rs = shape_min(sh, sh2)
          local ea, eb, ez = {}, {}, {}
          for k, ix in ipairs(indices(rs)) do
            ea[k], eb[k] = gather(sh, fa, ix), gather(sh2, fb, ix)
            ez[k] = { ea[k], eb[k] }
          end
          local z = lacc.zip(host(T.t, sh, fa), host("i32", sh2, fb))
          later(z, b, rs, ez, nil, "zip")
          local u1, u2 = lacc.unzip(z)
          local r1, r2 = run({ u1, u2 }, b)
          check(r1, rs, ea, nil, "unzip 1")
          check(r2, rs, eb, nil, "unzip 2")
        end
        flush()
      end)
    end

    it("zipWith of mixed element types and zipWith3, on " .. b, function()
      for _, sh in ipairs(shapes { 0, 1, 2, 3 }) do
        local sh2, sh3 = other_shape(sh), other_shape(sh)
        local fa = gen(TYPES[2], size_of(sh))   -- f32
        local fb = gen(TYPES[3], size_of(sh2))  -- i32
        local fc = gen(TYPES[6], size_of(sh3))  -- bool
        local a, bb, c = host("f32", sh, fa), host("i32", sh2, fb), host("bool", sh3, fc)
        local r2 = shape_min(sh, sh2)
        local exp2 = {}
        for k, ix in ipairs(indices(r2)) do
          exp2[k] = f32(gather(sh, fa, ix) + f32(gather(sh2, fb, ix)))
        end
        later(lacc.zipWith(function(x, y) return x + y:cast("f32") end, a, bb), b,
          r2, exp2, 1e-6, "zipWith f32 i32")
        local r3 = shape_min(r2, sh3)
        local exp3 = {}
        for k, ix in ipairs(indices(r3)) do
          local x, y, w = gather(sh, fa, ix), gather(sh2, fb, ix), gather(sh3, fc, ix)
          exp3[k] = w and x * 1 or y * 1.0
        end
        local p = lacc.zipWith3(function(x, y, w)
          return lacc.cond(w, x:cast("f64"), y:cast("f64"))
        end, a, bb, c)
        later(p, b, r3, exp3, nil, "zipWith3 " .. shape_str(sh) .. shape_str(sh2) .. shape_str(sh3))
        -- zip of three arrays
        local ez = {}
        for k, ix in ipairs(indices(r3)) do
          ez[k] = { gather(sh, fa, ix), gather(sh2, fb, ix), gather(sh3, fc, ix) }
        end
        later(lacc.zip(a, bb, c), b, r3, ez, nil, "zip3")
      end
      flush()
    end)
  end
end)

describe("reductions", function()
  for _, b in ipairs(H.backends) do
    for _, T in ipairs(TYPES) do
      sweep(T.name, b,
        ("fold along the innermost dimension, ranks %s, %s on %s"):format(ranks_name(T, { 1, 2, 3 }, b), T.name, b), function()
        for _, sh in ipairs(sweep_shapes(T, { 1, 2, 3 }, b)) do
          local flat = gen(T, size_of(sh), "genx")
          local rs, exp = ref_fold(sh, flat, T.foldr, T.zr)
          local p = lacc.fold(T.fold, zval(T), host(T.t, sh, flat))
          later(p, b, rs, exp, T.tol, "fold " .. shape_str(sh))
        end
        flush()
      end)

      sweep(T.name, b, ("fold1, ranks %s, %s on %s"):format(ranks_name(T, { 1, 2, 3 }, b), T.name, b), function()
        for _, sh in ipairs(sweep_shapes(T, { 1, 2, 3 }, b)) do
          local flat = gen(T, size_of(sh), "genx")
          local p = lacc.fold1(T.fold, host(T.t, sh, flat))
          local rs, exp = ref_fold(sh, flat, T.foldr, nil)
          if sh[#sh] == 0 and size_of(rs) > 0 then
            local ok, err = pcall(run, p, b)
            assert.is_false(ok, "fold1 over an empty innermost dimension must fail")
            assert.truthy(tostring(err):find("fold1", 1, true), tostring(err))
          else
            later(p, b, rs, exp, T.tol, "fold1 " .. shape_str(sh))
          end
        end
        flush()
      end)
    end

    it("fold1 keeps the order of the elements (first, last, max) on " .. b, function()
      for _, sh in ipairs(shapes { 1, 2, 3 }) do
        local outer = 1
        for d = 1, #sh - 1 do outer = outer * sh[d] end
        if sh[#sh] > 0 or outer == 0 then
          local flat = gen(TYPES[3], size_of(sh))
          local xs = host("i32", sh, flat)
          local rs, first = ref_fold(sh, flat, function(a) return a end, nil)
          local _, last = ref_fold(sh, flat, function(_, x) return x end, nil)
          local _, mx = ref_fold(sh, flat, math.max, nil)
          local r1, r2, r3 = run({ lacc.fold1(function(x) return x end, xs),
                                   lacc.fold1(function(_, y) return y end, xs),
                                   lacc.fold1(lacc.max, xs) }, b)
          check(r1, rs, first, nil, "fold1 first " .. shape_str(sh))
          check(r2, rs, last, nil, "fold1 last " .. shape_str(sh))
          check(r3, rs, mx, nil, "fold1 max " .. shape_str(sh))
        end
      end
    end)

    it("fold uses z once per result, with a z that is not neutral, on " .. b, function()
      for _, sh in ipairs(shapes { 1, 2, 3 }) do
        local flat = gen(TYPES[3], size_of(sh), "genx")
        local rs, exp = ref_fold(sh, flat, function(a, x) return a + x end, 100)
        later(lacc.fold(function(x, y) return x + y end, 100, host("i32", sh, flat)), b,
          rs, exp, nil, "fold z=100")
        local _, cnt = ref_fold(sh, flat, function(a) return a + 1 end, 0)
        -- count the elements: fold (+) z over map (const 1) must give z + n
        local p = lacc.fold(function(x, y) return x + y end, 7,
          lacc.map(function() return C(1, "i64") end, host("i32", sh, flat)))
        local e2 = {}
        for i, c in ipairs(cnt) do e2[i] = c + 7 end
        later(p, b, rs, e2, nil, "count")
      end
      flush()
    end)

    for _, T in ipairs(NUMERIC) do
      sweep(T.name, b,
        ("sum, product, maximum, minimum, ranks %s, %s on %s"):format(ranks_name(T, { 0, 1, 2, 3 }, b), T.name, b), function()
        for _, sh in ipairs(shapes_of(T, { 0, 1, 2, 3 }, b)) do
          local n = size_of(sh)
          local flat = gen(T, n, "genx")
          local xs = host(T.t, sh, flat)
          local s = 0
          for _, x in ipairs(flat) do s = T.foldr(s, x) end
          later(lacc.sum(xs), b, {}, { s }, T.tol, "sum " .. shape_str(sh))
          -- product over values whose product stays exact and in range
          local pf, bigs = {}, 0
          for i = 1, n do
            local r = H.rand()
            local v
            if T.name == "u8" then
              v = 2 * H.randint(0, 127) + 1
            elseif r < 0.05 and bigs < 10 then
              bigs = bigs + 1
              v = (T.name == "f64" or T.name == "f32") and (H.rand() < 0.5 and 0.5 or 4) or 3
            else
              v = r < 0.5 and -1 or 1
            end
            pf[i] = v
          end
          local pr = 1
          for _, x in ipairs(pf) do
            pr = pr * x
            if T.name == "u8" then pr = pr % 256 end
          end
          later(lacc.product(host(T.t, sh, pf)), b, {}, { pr }, nil, "product " .. shape_str(sh))
          local mflat = gen(T, n)
          local ms = host(T.t, sh, mflat)
          if n == 0 then
            assert.is_false((pcall(run, lacc.maximum(ms), b)), "maximum of an empty array")
            assert.is_false((pcall(run, lacc.minimum(ms), b)), "minimum of an empty array")
          else
            local mx, mn = mflat[1], mflat[1]
            for _, x in ipairs(mflat) do mx, mn = math.max(mx, x), math.min(mn, x) end
            local rmax, rmin = run({ lacc.maximum(ms), lacc.minimum(ms) }, b)
            check(rmax, {}, { mx }, nil, "maximum " .. shape_str(sh))
            check(rmin, {}, { mn }, nil, "minimum " .. shape_str(sh))
          end
        end
        flush()
      end)
    end
  end
end)

describe("permutations", function()
  for _, b in ipairs(H.backends) do
    for _, T in ipairs(TYPES) do
      sweep(T.name, b, ("backpermute, %s on %s"):format(T.name, b), function()
        -- rank 2 -> rank 1: the diagonal
        for _, sh in ipairs(shapes_of(T, { 2 }, b)) do
          local flat = gen(T, size_of(sh))
          local n = math.min(sh[1], sh[2])
          local exp = {}
          for i = 1, n do exp[i] = gather(sh, flat, { i, i }) end
          later(lacc.backpermute({ n }, function(i) return i, i end, host(T.t, sh, flat)), b,
            { n }, exp, nil, "diagonal " .. shape_str(sh))
        end
        -- rank 1 -> rank 2: a wrapped gather
        for _, sh in ipairs(shapes_of(T, { 1 }, b)) do
          local flat = gen(T, size_of(sh))
          local n = sh[1]
          local rs = n > 0 and { H.randint(0, 9), H.randint(1, 11) } or { 0, 3 }
          local exp = {}
          for k, ix in ipairs(indices(rs)) do exp[k] = flat[(ix[1] * 7 + ix[2] * 3) % n + 1] end
          local p = lacc.backpermute(rs, function(i, j) return lacc.imod(i * 7 + j * 3, n) + 1 end,
            host(T.t, sh, flat))
          later(p, b, rs, exp, nil, "gather " .. shape_str(sh) .. "->" .. shape_str(rs))
        end
        -- rank 3 {m,n,p} -> rank 2 {p,m}: source (j, (i+j) mod n + 1, i)
        for _, sh in ipairs(shapes_of(T, { 3 }, b)) do
          local m, n, q = sh[1], sh[2], sh[3]
          local flat = gen(T, size_of(sh))
          local rs = n > 0 and { q, m } or { 0, m }
          local exp = {}
          for k, ix in ipairs(indices(rs)) do
            local i, j = ix[1], ix[2]
            exp[k] = gather(sh, flat, { j, (i + j) % n + 1, i })
          end
          local p = lacc.backpermute(rs, function(i, j) return j, lacc.imod(i + j, n) + 1, i end,
            host(T.t, sh, flat))
          later(p, b, rs, exp, nil, "rank 3 -> 2 " .. shape_str(sh))
        end
        -- rank 1 -> rank 0 and rank 0 -> rank 1
        local flat = gen(T, 13)
        local k = H.randint(1, 13)
        later(lacc.backpermute({}, function() return k end, host(T.t, { 13 }, flat)), b,
          {}, { flat[k] }, nil, "to rank 0")
        local one = gen(T, 1)
        later(lacc.backpermute({ 5 }, function() end, host(T.t, {}, one)), b,
          { 5 }, { one[1], one[1], one[1], one[1], one[1] }, nil, "from rank 0")
        flush()
      end)

      sweep(T.name, b, ("reshape, %s on %s"):format(T.name, b), function()
        for _, sh in ipairs(half_of(T, { 0, 1, 2, 3 })) do
          local n = size_of(sh)
          local flat = gen(T, n)
          local targets = { { n } }
          if n == 0 then
            targets[#targets + 1] = { 3, 0, 2 }
            targets[#targets + 1] = { 0, 5 }
          elseif n == 1 then
            targets[#targets + 1] = {}
            targets[#targets + 1] = { 1, 1, 1 }
          else
            for d = 2, n do
              if n % d == 0 then
                targets[#targets + 1] = { d, n / d }
                targets[#targets + 1] = { n / d, 1, d }
                break
              end
            end
          end
          for _, ts in ipairs(targets) do
            for i = 1, #ts do ts[i] = math.floor(ts[i]) end
            local xs = host(T.t, sh, flat)
            later(lacc.reshape(ts, xs), b, ts, flat, nil, "reshape " .. shape_str(sh) .. "->" .. shape_str(ts))
            -- a reshape of a delayed array keeps the row-major order
            local exp = {}
            for i, x in ipairs(flat) do exp[i] = T.mapr(x) end
            later(lacc.reshape(ts, lacc.map(T.map, xs)), b, ts, exp, T.tol, "reshape of map")
          end
        end
        flush()
      end)

      sweep(T.name, b, ("replicate with lacc.all, %s on %s"):format(T.name, b), function()
        local specs = {
          [0] = { { 4 }, { 2, 3 }, {}, { 0 } },
          [1] = { { lacc.all, 3 }, { 2, lacc.all }, { 0, lacc.all }, { lacc.all }, { 2, lacc.all, 3 } },
          [2] = { { lacc.all, lacc.all, 2 }, { 3, lacc.all, lacc.all }, { lacc.all, 2, lacc.all } },
          [3] = { { lacc.all, 1, lacc.all, lacc.all }, { 2, lacc.all, lacc.all, lacc.all } },
        }
        for _, sh in ipairs(shapes_of(T, { 0, 1, 2, 3 }, b)) do
          local flat = gen(T, size_of(sh))
          for _, spec in ipairs(specs[#sh]) do
            local rs, k = {}, 0
            for d, e in ipairs(spec) do
              if e == lacc.all then k = k + 1; rs[d] = sh[k] else rs[d] = e end
            end
            local exp = {}
            for q, ix in ipairs(indices(rs)) do
              local src = {}
              for d, e in ipairs(spec) do
                if e == lacc.all then src[#src + 1] = ix[d] end
              end
              exp[q] = gather(sh, flat, src)
            end
            later(lacc.replicate(spec, host(T.t, sh, flat)), b, rs, exp, nil,
              "replicate " .. shape_str(sh) .. " to " .. shape_str(rs))
          end
        end
        flush()
      end)

      sweep(T.name, b, ("slice with lacc.all, %s on %s"):format(T.name, b), function()
        for _, sh in ipairs(shapes_of(T, { 1, 2, 3 }, b)) do
          local flat = gen(T, size_of(sh))
          for _ = 1, 4 do
            local spec, rs = {}, {}
            for d = 1, #sh do
              if sh[d] > 0 and H.rand() < 0.5 then
                spec[d] = H.randint(1, sh[d])
              else
                spec[d] = lacc.all
                rs[#rs + 1] = sh[d]
              end
            end
            local exp = {}
            for q, ix in ipairs(indices(rs)) do
              local src, k = {}, 0
              for d = 1, #sh do
                if spec[d] == lacc.all then k = k + 1; src[d] = ix[k] else src[d] = spec[d] end
              end
              exp[q] = gather(sh, flat, src)
            end
            local desc = {}
            for d = 1, #sh do desc[d] = spec[d] == lacc.all and "all" or tostring(spec[d]) end
            later(lacc.slice(host(T.t, sh, flat), spec), b, rs, exp, nil,
              "slice " .. shape_str(sh) .. " {" .. table.concat(desc, ",") .. "}")
          end
        end
        flush()
      end)

      sweep(T.name, b, ("transpose, %s on %s"):format(T.name, b), function()
        for _, sh in ipairs(shapes { 2 }) do
          local flat = gen(T, size_of(sh))
          local rs = { sh[2], sh[1] }
          local exp = {}
          for k, ix in ipairs(indices(rs)) do exp[k] = gather(sh, flat, { ix[2], ix[1] }) end
          later(lacc.transpose(host(T.t, sh, flat)), b, rs, exp, nil, "transpose " .. shape_str(sh))
        end
        flush()
      end)

      sweep(T.name, b, ("reverse and rotate on the innermost dimension, %s on %s"):format(T.name, b), function()
        for _, sh in ipairs(shapes_of(T, { 1, 2, 3 }, b)) do
          local flat = gen(T, size_of(sh))
          local xs = host(T.t, sh, flat)
          local n = sh[#sh]
          local exp = {}
          for k, ix in ipairs(indices(sh)) do
            local src = { unpack(ix) }
            src[#sh] = n - ix[#sh] + 1
            exp[k] = gather(sh, flat, src)
          end
          later(lacc.reverse(xs), b, sh, exp, nil, "reverse " .. shape_str(sh))
          for _, r in ipairs { 0, 1, -1, 2, n + 2, -3 * n - 1, 13 } do
            local e = {}
            for k, ix in ipairs(indices(sh)) do
              local src = { unpack(ix) }
              src[#sh] = (ix[#sh] - 1 + r) % n + 1
              e[k] = gather(sh, flat, src)
            end
            later(lacc.rotate(r, xs), b, sh, e, nil, "rotate " .. r .. " " .. shape_str(sh))
          end
        end
        flush()
      end)
    end

    it("rotate(1, {1,2,3}) = {2,3,1} and reverse {1,2,3} = {3,2,1} on " .. b, function()
      local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
      later(lacc.rotate(1, xs), b, { 3 }, { 2, 3, 1 })
      later(lacc.rotate(-1, xs), b, { 3 }, { 3, 1, 2 })
      later(lacc.reverse(xs), b, { 3 }, { 3, 2, 1 })
      flush()
    end)
  end
end)

describe("arrays captured in lambdas", function()
  for _, b in ipairs(H.backends) do
    for _, T in ipairs { TYPES[1], TYPES[2], TYPES[3], TYPES[4], TYPES[7] } do
      sweep(T.name, b, ("xs[i], xs:at(i, j), lacc.shape, lacc.size, %s on %s"):format(T.name, b), function()
        -- rank 1: reverse by hand, from a host array and from a program
        for _, sh in ipairs(shapes { 1 }) do
          local n = sh[1]
          local flat = gen(T, n)
          local xs = host(T.t, sh, flat)
          local exp, exp2 = {}, {}
          for i = 1, n do
            exp[i] = flat[n - i + 1]
            exp2[i] = T.mapr(flat[n - i + 1])
          end
          later(lacc.generate({ n }, function(i) return xs[n - i + 1] end), b, sh, exp, nil, "xs[i]")
          local ys = lacc.map(T.map, xs)
          later(lacc.generate(lacc.shape(ys), function(i) return ys[lacc.size(ys) - i + 1] end), b,
            sh, exp2, T.tol, "ys[i] of a program")
        end
        -- rank 2: xs:at(j, i) combined with ys:at(i, j), shape from lacc.shape
        for _, sh in ipairs(shapes { 2 }) do
          local m, n = sh[1], sh[2]
          local fx, fy = gen(T, m * n), gen(T, m * n)
          local xs, ys = host(T.t, { m, n }, fx), host(T.t, { n, m }, fy)
          local exp = {}
          for k, ix in ipairs(indices { n, m }) do
            exp[k] = T.zipr(gather({ m, n }, fx, { ix[2], ix[1] }), gather({ n, m }, fy, ix))
          end
          local s = lacc.shape(ys)
          assert.are.equal(2, #s)
          local p = lacc.generate(s, function(i, j) return T.zip(xs:at(j, i), ys:at(i, j)) end)
          later(p, b, { n, m }, exp, T.tol, "xs:at " .. shape_str(sh))
        end
        -- rank 3: xs:at(i, j, k), lacc.shape components and lacc.size inside a map
        for _, sh in ipairs(shapes { 3 }) do
          local flat = gen(T, size_of(sh))
          local xs = host(T.t, sh, flat)
          local rs = { sh[3], sh[2], sh[1] }
          local exp = {}
          for k, ix in ipairs(indices(rs)) do exp[k] = gather(sh, flat, { ix[3], ix[2], ix[1] }) end
          local s = lacc.shape(xs)
          later(lacc.generate({ s[3], s[2], s[1] }, function(i, j, k) return xs:at(k, j, i) end), b,
            rs, exp, nil, "rank 3 at " .. shape_str(sh))
          local cnt = lacc.map(function() return lacc.size(xs) * 10 + s[1] + s[2] * 100 end,
            host("i32", { 3 }, { 1, 2, 3 }))
          local v = size_of(sh) * 10 + sh[1] + sh[2] * 100
          later(cnt, b, { 3 }, { v, v, v }, nil, "size and shape in map")
        end
        flush()
      end)
    end
  end
end)

describe("compositions and scalar expressions in shapes and specs", function()
  for _, b in ipairs(H.backends) do
    it("chains of combinators match the composed references on " .. b, function()
      local T = TYPES[3]
      for _, sh in ipairs(shapes { 2 }) do
        local m, n = sh[1], sh[2]
        local flat = gen(T, m * n, "genx")
        local xs = host("i32", sh, flat)
        local tflat = {}
        for k, ix in ipairs(indices { n, m }) do tflat[k] = gather(sh, flat, { ix[2], ix[1] }) end
        -- fold of a transpose of a map
        local mt = {}
        for i, x in ipairs(tflat) do mt[i] = x * 3 - 7 end
        local rs, e = ref_fold({ n, m }, mt, function(a, c) return a + c end, 1)
        check(run(lacc.fold(function(a, c) return a + c end, 1,
          lacc.transpose(lacc.map(T.map, xs))), b), rs, e, nil, "fold . transpose . map")
        -- reshape of a transpose, transpose of a transpose
        later(lacc.reshape({ m * n }, lacc.transpose(xs)), b, { m * n }, tflat, nil, "reshape . transpose")
        later(lacc.transpose(lacc.transpose(xs)), b, sh, flat, nil, "transpose . transpose")
        -- sum of a reverse of a zipWith with a rotated copy
        local s = 0
        for k, ix in ipairs(indices(sh)) do
          local src = { ix[1], (ix[2] - 1 + 2) % n + 1 }
          s = s + flat[k] * gather(sh, flat, src)
        end
        check(run(lacc.sum(lacc.reverse(lacc.zipWith(function(a, c) return a * c end,
          xs, lacc.rotate(2, xs)))), b), {}, { s }, nil, "sum . reverse . zipWith rotate")
        -- slice of a replicate gives back the array; fold over a generate that reads xs
        later(lacc.slice(lacc.replicate({ 4, lacc.all, lacc.all }, xs), { 3, lacc.all, lacc.all }), b,
          sh, flat, nil, "slice . replicate")
        local _, rowsum = ref_fold(sh, flat, function(a, c) return a + c end, 0)
        local g = lacc.generate({ m, n }, function(i, j) return xs:at(i, n - j + 1) end)
        later(lacc.fold(function(a, c) return a + c end, 0, g), b, { m }, rowsum, nil, "fold . generate")
      end
      flush()
    end)

    it("scalar expressions as extents, indices, amounts and z on " .. b, function()
      for _, sh in ipairs(shapes { 2 }) do
        local m, n = sh[1], sh[2]
        local flat = gen(TYPES[3], m * n, "genx")
        local xs = host("i32", sh, flat)
        local s = lacc.shape(xs)
        -- generate and fill over lacc.shape(xs)
        local e1 = {}
        for k, ix in ipairs(indices(sh)) do e1[k] = flat[k] + ix[1] * 100 + ix[2] end
        later(lacc.generate(s, function(i, j) return xs:at(i, j) + (i * 100 + j):cast("i32") end), b,
          sh, e1, nil, "generate over lacc.shape")
        local e2 = {}
        for k = 1, m * n do e2[k] = m * 10 + n end
        later(lacc.fill(s, (s[1] * 10 + s[2]):cast("i32")), b, sh, e2, nil, "fill over lacc.shape")
        -- rotate by a scalar expression
        local e3 = {}
        for k, ix in ipairs(indices(sh)) do e3[k] = gather(sh, flat, { ix[1], (ix[2] - 1 + m) % n + 1 }) end
        later(lacc.rotate(s[1], xs), b, sh, e3, nil, "rotate by lacc.shape(xs)[1]")
        -- fold with z read from another array
        if m * n > 0 then
          local zs = lacc.use(host("i32", { 2 }, { 17, -4 }))
          local rs, e4 = ref_fold(sh, flat, function(a, c) return a + c end, -4)
          later(lacc.fold(function(a, c) return a + c end, zs[2], xs), b, rs, e4, nil, "fold z = zs[2]")
        end
      end
      flush()
    end)

    -- (Lua 5.4 calls __eq when a spec entry that is an expression meets lacc.all)
    it("slice with an index that is a scalar expression on " .. b, function()
      for _, sh in ipairs(shapes { 2 }) do
        local m, n = sh[1], sh[2]
        local flat = gen(TYPES[3], m * n)
        local xs = host("i32", sh, flat)
        local s = lacc.shape(xs)
        if n > 0 then
          local e5 = {}
          for i = 1, m do e5[i] = gather(sh, flat, { i, n }) end
          later(lacc.slice(xs, { lacc.all, s[2] }), b, { m }, e5, nil, "slice at lacc.shape(xs)[2]")
        end
      end
      flush()
    end)

    it("replicate with an extent that is a scalar expression on " .. b, function()
      for _, sh in ipairs(shapes { 2 }) do
        local m, n = sh[1], sh[2]
        local flat = gen(TYPES[3], m * n)
        local xs = host("i32", sh, flat)
        local s = lacc.shape(xs)
        local e6 = {}
        for k = 1, m do
          for q = 1, m * n do e6[(k - 1) * m * n + q] = flat[q] end
        end
        later(lacc.replicate({ s[1], lacc.all, lacc.all }, xs), b, { m, m, n }, e6, nil,
          "replicate by lacc.shape(xs)[1]")
      end
      flush()
    end)
  end
end)

describe("method forms and several results", function()
  for _, b in ipairs(H.backends) do
    it("xs:map, xs:fold, xs:zipWith and friends on " .. b, function()
      local T = TYPES[1]
      for _, sh in ipairs(shapes { 1, 2, 3 }) do
        local flat = gen(T, size_of(sh), "genx")
        local xs = host("f64", sh, flat)
        local mapped = {}
        for i, x in ipairs(flat) do mapped[i] = T.mapr(x) end
        check(xs:map(T.map):run { backend = b }, sh, mapped, T.tol, "host:map")
        local rs, folded = ref_fold(sh, mapped, T.foldr, 0.5)
        later(lacc.use(xs):map(T.map):fold(T.fold, 0.5), b, rs, folded, T.tol, "acc:map:fold")
        local _, hf = ref_fold(sh, flat, T.foldr, 0.5)
        later(xs:fold(T.fold, 0.5), b, rs, hf, T.tol, "host:fold")
        local _, f1 = ref_fold(sh, flat, math.max, nil)
        if sh[#sh] > 0 or size_of(rs) == 0 then
          later(xs:fold1(lacc.max), b, rs, f1, nil, "xs:fold1")
        end
        local zw = {}
        for i, x in ipairs(flat) do zw[i] = T.zipr(x, mapped[i]) end
        later(xs:zipWith(T.zip, xs:map(T.map)), b, sh, zw, T.tol, "xs:zipWith")
        local zz = {}
        for i, x in ipairs(flat) do zz[i] = { x, x } end
        later(xs:zip(xs), b, sh, zz, nil, "xs:zip")
        local s = 0
        for _, x in ipairs(flat) do s = s + x end
        later(xs:sum(), b, {}, { s }, T.tol, "xs:sum")
        local rev = {}
        for k, ix in ipairs(indices(sh)) do
          local src = { unpack(ix) }
          src[#sh] = sh[#sh] - ix[#sh] + 1
          rev[k] = gather(sh, flat, src)
        end
        later(xs:reverse(), b, sh, rev, nil, "xs:reverse")
        later(xs:reshape({ size_of(sh) }), b, { size_of(sh) }, flat, nil, "xs:reshape")
        later(xs:flatten(), b, { size_of(sh) }, flat, nil, "xs:flatten")
        local i1, i2 = xs:map(function(x) return x, x * 2 end):unzip()
        local dbl = {}
        for i, x in ipairs(flat) do dbl[i] = x * 2 end
        local r1, r2 = run({ i1, i2 }, b)
        check(r1, sh, flat, nil, "xs:unzip 1")
        check(r2, sh, dbl, nil, "xs:unzip 2")
      end
      -- rank 2 methods
      local m = host("i32", { 3, 5 }, gen(TYPES[3], 15))
      local mt = m:totable()
      local tr = run(m:transpose(), b)
      local row = run(m:slice({ 2, lacc.all }), b)
      local rep = run(m:replicate({ lacc.all, 2, lacc.all }), b)
      local rot = run(m:rotate(2), b)
      for i = 1, 3 do
        for j = 1, 5 do
          assert.is_true(H.same(mt[i][j], tr:get(j, i)))
          assert.is_true(H.same(mt[i][j], rep:get(i, 1, j)) and H.same(mt[i][j], rep:get(i, 2, j)))
          assert.is_true(H.same(mt[i][(j + 1) % 5 + 1], rot:get(i, j)))
        end
      end
      for j = 1, 5 do assert.is_true(H.same(mt[2][j], row:get(j))) end
      local bp = run(m:backpermute({ 5 }, function(j) return 3, j end), b)
      for j = 1, 5 do assert.is_true(H.same(mt[3][j], bp:get(j))) end
      local im = run(m:imap(function(i, j, x) return x + (i * 1000 + j):cast("i32") end), b)
      for i = 1, 3 do
        for j = 1, 5 do assert.is_true(H.same(mt[i][j] + i * 1000 + j, im:get(i, j))) end
      end
      flush()
    end)

    it("lacc.run of a table of programs gives several arrays on " .. b, function()
      for _, sh in ipairs(shapes { 1, 2, 3 }) do
        local flat = gen(TYPES[3], size_of(sh), "genx")
        local xs = lacc.use(host("i32", sh, flat))
        local shared = lacc.map(function(x) return x * 3 - 7 end, xs)
        local progs = {
          shared,
          lacc.fold(function(a, c) return a + c end, 3, shared),
          lacc.map(function(x) return x:cast("f64") / 2 end, shared),
          lacc.sum(xs),
          lacc.unit(lacc.size(xs)),
        }
        local results = { run(progs, b) }
        assert.are.equal(#progs, #results)
        local e1 = {}
        for i, x in ipairs(flat) do e1[i] = x * 3 - 7 end
        check(results[1], sh, e1, nil, "result 1")
        local rs, e2 = ref_fold(sh, e1, function(a, c) return a + c end, 3)
        check(results[2], rs, e2, nil, "result 2")
        local e3 = {}
        for i, x in ipairs(e1) do e3[i] = x / 2 end
        check(results[3], sh, e3, nil, "result 3")
        local s = 0
        for _, x in ipairs(flat) do s = s + x end
        check(results[4], {}, { s }, nil, "result 4")
        check(results[5], {}, { size_of(sh) }, nil, "result 5")
        assert.are.equal("i32", results[1]:type())
        assert.are.equal("f64", results[3]:type())
        assert.are.equal("i64", results[5]:type())
      end
    end)
  end
end)

describe("host arrays", function()
  local function deep_same(a, b)
    if type(b) == "table" then
      if type(a) ~= "table" or #a ~= #b then return false end
      for i = 1, #b do
        if not deep_same(a[i], b[i]) then return false end
      end
      return true
    end
    return H.same(a, b)
  end

  for _, T in ipairs(TYPES) do
    it("fromtable, shape, #, get, set, [], totable, type for " .. T.name, function()
      for _, sh in ipairs(shapes { 0, 1, 2, 3 }) do
        local n = size_of(sh)
        local flat = gen(T, n)
        local nested = H.nest(flat, sh)
        if n > 0 or #sh == 1 then
          if n == 0 then nested = {} end
          local a = lacc.fromtable(nested, T.t)
          local s = a:shape()
          assert.are.equal(#sh, #s)
          for d = 1, #sh do assert.are.equal(sh[d], H.num(s[d])) end
          assert.are.equal(n, #a)
          assert.are.equal(T.t, a:type())
          assert.is_true(deep_same(a:totable(), nested), "totable " .. shape_str(sh))
          for k, ix in ipairs(indices(sh)) do
            assert.is_true(eqv(a:get(unpack(ix)), flat[k]), "get " .. show(ix))
          end
          if #sh == 1 then
            for i = 1, n do assert.is_true(eqv(a[i], flat[i]), "a[i]") end
          end
          -- set a few elements, others stay
          local all = indices(sh)
          for _ = 1, math.min(3, n) do
            local k = H.randint(1, n)
            local v = T.gen()
            local args = { unpack(all[k]) }
            args[#args + 1] = v
            a:set(unpack(args))
            flat[k] = v
          end
          if #sh == 1 and n > 0 then
            local v = T.gen()
            a[n] = v
            flat[n] = v
          end
          check(a, sh, flat, nil, "after set")
          -- a program sees the new values
          check(lacc.run(lacc.use(a)), sh, flat, nil, "use after set")
        end
      end
      -- nested empties and ranks
      local e2 = lacc.fromtable({ {}, {}, {} }, T.t)
      assert.are.equal(2, #e2:shape())
      assert.are.equal(3, H.num(e2:shape()[1]))
      assert.are.equal(0, H.num(e2:shape()[2]))
      assert.are.equal(0, #e2)
    end)

    it("lacc.array(type, shape, fill) for " .. T.name, function()
      for _, sh in ipairs(shapes { 0, 1, 2, 3 }) do
        local n = size_of(sh)
        local v = T.gen()
        local a = lacc.array(T.t, sh, v)
        local exp = {}
        for i = 1, n do exp[i] = v end
        check(a, sh, exp, nil, "array fill " .. shape_str(sh))
        assert.are.equal(T.t, a:type())
        local u = lacc.array(T.t, sh)
        assert.are.equal(n, #u)
        assert.are.equal(#sh, #u:shape())
      end
    end)
  end

  it("rank 0 host arrays", function()
    local a = lacc.fromtable(2.5, "f64")
    assert.are.equal(0, #a:shape())
    assert.are.equal(1, #a)
    assert.are.equal(2.5, a:get())
    assert.are.equal(2.5, a:totable())
    a:set(-1.25)
    assert.are.equal(-1.25, a:get())
    local t = lacc.fromtable({ 1.5, 7 }, lacc.tuple("f32", "i32"))
    assert.are.equal(0, #t:shape())
    assert.is_true(eqv(t:get(), { 1.5, 7 }))
  end)

  it("tostring shows the shape, the type and the elements", function()
    H.seed(777)
    for _, sh in ipairs { { 5 }, { 2, 3 }, { 2, 2, 2 }, {}, { 0 }, { 3, 0 } } do
      local n = size_of(sh)
      local flat = {}
      for i = 1, n do flat[i] = H.randint(-999, 999) end
      local a = host("i32", sh, flat)
      local s = tostring(a)
      assert.truthy(s:find("i32", 1, true), s)
      -- every extent appears, then every element in order
      for _, e in ipairs(sh) do
        assert.truthy(s:find(tostring(e), 1, true), "extent " .. e .. " in " .. s)
      end
      local body = s:sub((s:find("[", 1, true)))
      local pos = 1
      for i = 1, n do
        local f, l = body:find("%-?%d+", pos)
        assert.truthy(f, s)
        assert.are.equal(flat[i], tonumber(body:sub(f, l)), s)
        pos = l + 1
      end
      -- identical text for every integer type (same on Lua 5.4 and LuaJIT)
      for _, t in ipairs { "i64", "i16", "u64" } do
        local vals = {}
        for i = 1, n do vals[i] = t == "u64" and math.abs(flat[i]) or flat[i] end
        local want = tostring(host("i32", sh, vals)):gsub("i32", t)
        assert.are.equal(want, tostring(host(t, sh, vals)))
      end
    end
    -- large arrays are elided
    local big = lacc.array("i32", { 1000 }, 12345)
    local s = tostring(big)
    assert.truthy(s:find("...", 1, true), "elision mark")
    assert.is_true(#s < 1000 * 6, "tostring of 1000 elements must be elided")
    local m = lacc.array("f64", { 100, 100 }, 0.5)
    local ms = tostring(m)
    assert.truthy(ms:find("...", 1, true))
    assert.is_true(#ms < 10000 * 4)
    -- tuples
    local tp = lacc.fromtable({ { 1.5, 2 }, { -3.25, 4 } }, lacc.tuple("f32", "i32"))
    local ts = tostring(tp)
    assert.truthy(ts:find("1.5", 1, true) and ts:find("-3.25", 1, true), ts)
  end)
end)
