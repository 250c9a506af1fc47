-- Stencils (issue 5): stencil and stencil2 on ranks 1 to 3, windows 1 to 9, every
-- boundary, on every backend against a plain-Lua reference.
local H = require "helper"
local lacc = H.lacc
local unpack = table.unpack or unpack

-- 0-based index k into 0 .. n - 1 under a boundary; nil: outside (constant boundary).
local function adjust(b, k, n)
  if k >= 0 and k < n then return k end
  if b == "clamp" then return k < 0 and 0 or n - 1 end
  if b == "wrap" then return k % n end
  if b == "mirror" then
    k = k < 0 and -k or 2 * n - 2 - k
    return math.max(0, math.min(n - 1, k))
  end
  return nil
end

-- Reference: for each element (row-major), the window values in row-major order.
local function ref_stencil(f, b, cval, flat, sh, w)
  local rank, n = #sh, H.size(sh)
  local out = {}
  for lin = 0, n - 1 do
    local ix = H.unravel(sh, lin)
    local args = {}
    local idx = {}
    local function walk(d)
      if d > rank then
        local at, outside = {}, false
        for e = 1, rank do
          local k = adjust(b, idx[e] - 1, sh[e])
          if k == nil then outside = true; k = 0 end
          at[e] = k + 1
        end
        args[#args + 1] = outside and cval or flat[H.ravel(sh, at) + 1]
        return
      end
      local h = math.floor((w[d] - 1) / 2)
      for off = -h, h do
        idx[d] = ix[d] + off
        walk(d + 1)
      end
    end
    walk(1)
    out[lin + 1] = f(unpack(args))
  end
  return out
end

-- A weighted sum that tells every position apart.
local function weigh(...)
  local s = 0
  for i, v in ipairs { ... } do s = s + v * (i % 5 + 1) end
  return s
end

for _, be in ipairs(H.backends) do
  describe("stencils on " .. be, function()
    local opts = { backend = be }

    it("every boundary, ranks 1 to 3, windows 1 to 9, against Lua loops", function()
      H.seed(1001)
      local cases = {
        { { 7 }, { 3 } }, { { 9 }, { 5 } }, { { 2 }, { 9 } }, { { 0 }, { 3 } },
        { { 4, 5 }, { 3, 3 } }, { { 3, 6 }, { 5, 3 } }, { { 1, 1 }, { 3, 7 } },
        { { 2, 3, 4 }, { 3, 3, 3 } },
        -- one-dimensional windows along a dimension (a separable filter's two passes), and
        -- a window of one element
        { { 5, 6 }, { 1, 5 } }, { { 6, 5 }, { 5, 1 } }, { { 3, 4, 5 }, { 1, 3, 1 } }, { { 4 }, { 1 } },
        { { 2, 7 }, { 1, 9 } },
        -- windows of more than 64 values (issue 27: a tuple's limit was 64 fields); on
        -- OpenCL (seconds of PoCL compiling each) one boundary each
        { { 10, 11 }, { 9, 9 }, "clamp" }, { { 4, 5, 6 }, { 5, 5, 3 }, "wrap" },
        { { 3, 4, 5 }, { 5, 5, 5 }, "mirror" },
      }
      -- the stencils run 16 to a program (one build each, not one a stencil), each
      -- result checked on its own
      local batch = H.batch(function(list) return lacc.run(list, opts) end)
      local checks = {}
      for _, c in ipairs(cases) do
        local sh, w = c[1], c[2]
        local xs, flat = H.random_array("i32", sh)
        for i, v in ipairs(flat) do flat[i] = v % 1000 end
        xs = lacc.run(lacc.map(function(v) return lacc.imod(v, 1000) end, xs))
        local bounds = { "clamp", "mirror", "wrap", "constant" }
        if c[3] and be == "opencl" then bounds = { c[3] } end
        for _, b in ipairs(bounds) do
          local bd = b == "constant" and lacc.constant(-7, "i32") or b
          local want = ref_stencil(function(...)
            local s = 0
            for i, v in ipairs { ... } do s = s + v * (i % 5 + 1) end
            return s
          end, b, -7, flat, sh, w)
          checks[#checks + 1] = { batch:add(lacc.stencil(weigh, bd, xs, w)), want, sh, w, b }
        end
      end
      for _, k in ipairs(checks) do
        local got, want, sh, w, b = batch:get(k[1]), k[2], k[3], k[4], k[5]
        assert.are.same(sh, got:shape())
        local ok, err = pcall(H.check_array, got, want)
        if not ok then error(("%s %s window %s: %s"):format(b, table.concat(sh, "x"),
          table.concat(w, "x"), err)) end
      end
    end)

    it("stencil2 reads two arrays, the shapes intersect", function()
      local a = lacc.fromtable({ 1, 2, 3, 4 }, "f64")
      local b = lacc.fromtable({ 10, 20, 30 }, "f64")
      local p = lacc.stencil2(function(l, c, r, l2, c2, r2) return c * 1000 + l + r + l2 + r2 end,
        "clamp", a, lacc.constant(0, "f64"), b)
      -- i=1: 1*1000 + 1 + 2 + 0 + 20; i=2: 2000 + 1 + 3 + 10 + 30; i=3: 3000 + 2 + 4 + 20 + 0
      assert.are.same({ 1023, 2044, 3026 }, lacc.run(p, opts):totable())
    end)
  end)
end

-- Separable filters (lua/lacc/stencil.lua, compose): a stencil of a stencil whose windows
-- lie along different dimensions, with the same clamp, mirror or wrap boundary, is one
-- stencil over the product window while it reads at most 32 values an element; its values
-- are the two passes', checked against the plain-Lua reference applied twice, and the
-- forms it must not compose (a 7x7 filter, constant or mixed boundaries, windows that
-- overlap in a dimension, three 1-D passes of a rank-3 array past the bound) still right.
describe("stencils of stencils", function()
  local function w1(a, b, c) return a + 2 * b - c end
  local function w5(a, b, c, d, e) return a + 4 * b + 6 * c + 4 * d + e end
  local function w7(...) local s = 0; for i, v in ipairs { ... } do s = s + i * v end; return s end
  local function fn_of(k) return k == 3 and w1 or k == 5 and w5 or w7 end
  local cases = {   -- shape, inner window, outer window, boundary, composed
    { { 9, 11 }, { 1, 5 }, { 5, 1 }, "clamp", true },
    { { 7, 6 }, { 1, 3 }, { 3, 1 }, "mirror", true },
    { { 6, 8 }, { 5, 1 }, { 1, 5 }, "wrap", true },
    { { 1, 1 }, { 1, 3 }, { 3, 1 }, "clamp", true },
    { { 0, 4 }, { 1, 3 }, { 3, 1 }, "clamp", true },
    { { 10, 12 }, { 1, 7 }, { 7, 1 }, "clamp", false },
    { { 5, 7 }, { 1, 3 }, { 3, 1 }, "constant", false },
    { { 5, 7 }, { 3, 3 }, { 3, 1 }, "clamp", false },
    { { 4, 5, 6 }, { 1, 1, 3 }, { 1, 3, 1 }, "wrap", true },
  }
  for _, be in ipairs(H.backends) do
    it("give the two passes' values, composed or not, on " .. be, function()
      H.seed(77)
      for _, c in ipairs(cases) do
        local sh, wi, wo, b, want_composed = c[1], c[2], c[3], c[4], c[5]
        local xs, flat = H.random_array("i32", sh)
        for i, v in ipairs(flat) do flat[i] = v % 100 end
        xs = lacc.run(lacc.map(function(v) return lacc.imod(v, 100) end, xs))
        local bd = b == "constant" and lacc.constant(-3, "i32") or b
        local ki, ko = 1, 1
        for d = 1, #sh do ki, ko = math.max(ki, wi[d]), math.max(ko, wo[d]) end
        local fi, fo = fn_of(ki), fn_of(ko)
        if wi[1] == 3 and wi[2] == 3 then fi = w7 end
        local p = lacc.stencil(fo, bd, lacc.stencil(fi, bd, xs, wi), wo)
        local mid = ref_stencil(fi, b, -3, flat, sh, wi)
        local want = ref_stencil(fo, b, -3, mid, sh, wo)
        local got = lacc.run(p, { backend = be })
        local ok, err = pcall(H.check_array, got, want)
        if not ok then error(("%s %s %s then %s: %s"):format(b, table.concat(sh, "x"),
          table.concat(wi, "x"), table.concat(wo, "x"), err)) end
        local text = lacc.explain(p)
        assert.are.equal(want_composed, text:find("two stencils along different dimensions in one pass", 1, true) ~= nil,
          ("%s %s then %s: %s"):format(b, table.concat(wi, "x"), table.concat(wo, "x"), text))
      end
    end)

    it("a rank-3 separable filter of three passes, and tuples between the passes, on " .. be, function()
      H.seed(78)
      local sh = { 4, 5, 6 }
      local xs, flat = H.random_array("i32", sh)
      for i, v in ipairs(flat) do flat[i] = v % 100 end
      xs = lacc.run(lacc.map(function(v) return lacc.imod(v, 100) end, xs))
      local p, want = xs, flat
      for _, w in ipairs { { 1, 1, 3 }, { 1, 3, 1 }, { 3, 1, 1 } } do
        p, want = lacc.stencil(w1, "clamp", p, w), ref_stencil(w1, "clamp", 0, want, sh, w)
      end
      H.check_array(lacc.run(p, { backend = be }), want)
      -- the inner stencil gives a pair; the outer reads both fields of each neighbour
      local pairs_ = lacc.stencil(function(a, b2, c) return lacc.tuple(a + c, b2 * 2) end, "mirror", xs, { 1, 1, 3 })
      local q = lacc.stencil(function(u, v, w) return u[1] + v[2] - w[1] + u[2] end, "mirror", pairs_, { 1, 3, 1 })
      local fa = ref_stencil(function(a, _, c) return a + c end, "mirror", 0, flat, sh, { 1, 1, 3 })
      local fb = ref_stencil(function(_, b2) return b2 * 2 end, "mirror", 0, flat, sh, { 1, 1, 3 })
      local n = H.size(sh)
      local wantq = {}
      for lin = 0, n - 1 do
        local ix = H.unravel(sh, lin)
        local nb = {}
        for o = -1, 1 do
          local k = ix[2] + o
          k = k < 1 and 2 - k or k > sh[2] and 2 * sh[2] - k or k
          nb[#nb + 1] = H.ravel(sh, { ix[1], k, ix[3] }) + 1
        end
        wantq[lin + 1] = fa[nb[1]] + fb[nb[2]] - fa[nb[3]] + fb[nb[1]]
      end
      H.check_array(lacc.run(q, { backend = be }), wantq)
      assert.is_truthy(lacc.explain(q):find("in one pass", 1, true))
    end)

    it("an inner stencil used elsewhere too keeps its own values, on " .. be, function()
      local x = lacc.fromtable({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } }, "f32")
      local rows = lacc.stencil(w1, "clamp", x, { 1, 3 })
      local a, r = lacc.run({ lacc.stencil(w1, "clamp", rows, { 3, 1 }), rows }, { backend = be })
      local rows_ref = ref_stencil(w1, "clamp", 0, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, { 3, 4 }, { 1, 3 })
      H.check_array(r, rows_ref)
      H.check_array(a, ref_stencil(w1, "clamp", 0, rows_ref, { 3, 4 }, { 3, 1 }))
    end)
  end
end)

describe("stencils in generated code", function()
  local function avg(a, b, c, d, e, f, g, h, i) return (a + b + c + d + e + f + g + h + i) / 9 end
  local x = lacc.fromtable({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 } }, "f32")

  it("the interior loop reads fixed offsets with no boundary code", function()
    local text = lacc.explain(lacc.stencil(avg, "mirror", x), { source = true })
    local clean = 0
    for body in text:gmatch("for %([^\n]*%) {\n(.-)\n%s*}") do
      if body:find("b%d+_%d+%[") and not body:find("?", 1, true) and not body:find("if (", 1, true) then
        clean = clean + 1
      end
    end
    assert.are.equal(1, clean, text)   -- the interior's loop; the border's have boundary code
  end)

  it("a producer feeding a stencil is materialised once, not recomputed per neighbour", function()
    local p = lacc.stencil(avg, "clamp", lacc.map(function(v) return v * 2 end, x))
    local _, stats = lacc.explain(p)
    assert.are.equal(2, stats.kernels)
    local q = lacc.stencil(avg, "clamp", lacc.transpose(x))   -- an index transform: pulled
    local _, qs = lacc.explain(q)
    assert.are.equal(1, qs.kernels)
    for _, b in ipairs(H.backends) do
      local r = lacc.run(q, { backend = b }):totable()
      assert.are.equal(4, #r)
      assert.is_true(math.abs(r[1][1] - (1 + 1 + 2 + 1 + 1 + 2 + 5 + 5 + 6) / 9) < 1e-5)
    end
  end)
end)

describe("stencil errors", function()
  it("name bad windows, boundaries and ranks", function()
    local x = lacc.fromtable({ 1, 2, 3 }, "i32")
    local id = function(a, b, c) return b end
    local ok, err = pcall(lacc.stencil, id, "clamp", x, { 4 })
    assert.is_false(ok)
    assert.truthy(err:find("stencil: window sizes must be odd, 1 to 9", 1, true))
    ok, err = pcall(lacc.stencil, id, "reflect", x)
    assert.is_false(ok)
    assert.truthy(err:find("stencil: boundary must be", 1, true))
    ok, err = pcall(lacc.stencil, id, lacc.constant(1.5, "f64"), x)
    assert.is_false(ok)
    assert.truthy(err:find("a constant boundary of type f64 for elements of i32", 1, true))
    ok, err = pcall(lacc.stencil, id, "clamp", lacc.unit(lacc.constant(1, "i32")))
    assert.is_false(ok)
    assert.truthy(err:find("stencil: expected an array of rank 1 to 3", 1, true))
  end)
end)
