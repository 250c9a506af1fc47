-- Arithmetic on arrays (issue 46): the Lua operators and lacc's scalar functions on host
-- arrays and array programs, with NumPy's broadcasting and lacc's type promotion; the
-- reductions as methods; the constructors. Every operator against the same program
-- written with the combinators (bit for bit), every broadcast against a plain-Lua
-- reference for a table of shape pairs whose result shapes NumPy gives (np.broadcast_shapes),
-- reductions and constructors against plain Lua; on every backend, under both VMs.
local H = require "helper"
local lacc = H.lacc

local LUA54 = _VERSION == "Lua 5.4" and type(jit) ~= "table"

local function flat(a)
  local r = {}
  for i = 1, #a do r[i] = H.num(a:at_linear(i - 1)) end
  return r
end

local function same_bits(x, y)
  assert.are.same(x:shape(), y:shape())
  assert.are.equal(x:type(), y:type())
  local fx, fy = flat(x), flat(y)
  for i = 1, #fx do
    if not H.same(fx[i], fy[i]) then
      error(("element %d: %s against %s"):format(i, tostring(fx[i]), tostring(fy[i])), 2)
    end
  end
end

-- Values with the awkward cases: NaN, infinities, zeros of both signs, integer extremes.
local function values(t, n, nonzero)
  local v = {}
  local special = t:sub(1, 1) == "f" and { 0 / 0, 1 / 0, -1 / 0, -0.0, 0.5, 3 } or
    (t == "i32" and { 2147483647, -2147483647, 1, -1, 7 } or { 255, 1, 7 })
  for i = 1, n do
    local x = special[i] or H.value(t)
    if nonzero and x == 0 then x = 3 end
    v[i] = x
  end
  return v
end

local OPS = {
  { "+", function(x, y) return x + y end },
  { "-", function(x, y) return x - y end },
  { "*", function(x, y) return x * y end },
  { "/", function(x, y) return x / y end },
  { "%", function(x, y) return x % y end },
  { "^", function(x, y) return x ^ y end },
}
if LUA54 then OPS[#OPS + 1] = { "//", load("return function(x, y) return x // y end")() } end

-- NumPy's result shapes (np.broadcast_shapes), and the pairs it refuses.
local BROADCAST = {
  { { 3 }, { 3 }, { 3 } }, { { 2, 3 }, { 3 }, { 2, 3 } }, { { 2, 1 }, { 1, 3 }, { 2, 3 } },
  { {}, { 2, 2 }, { 2, 2 } }, { { 1 }, { 0 }, { 0 } }, { { 4, 1, 3 }, { 2, 1 }, { 4, 2, 3 } },
  { { 0, 3 }, { 1, 3 }, { 0, 3 } }, { { 1, 1 }, {}, { 1, 1 } }, { { 5 }, { 1, 1, 1 }, { 1, 1, 5 } },
  { { 2, 3 }, { 2 } }, { { 3 }, { 4 } }, { { 2, 0 }, { 2, 3 } }, { { 0 }, { 2 } },
}

-- Element ix (1-based, of the result's rank) of an array of shape s holding f, broadcast.
local function read_broadcast(f, s, ix)
  local at = {}
  for d = 1, #s do
    local i = ix[d + #ix - #s]
    at[d] = s[d] == 1 and 1 or i
  end
  return f[H.ravel(s, at) + 1]
end

local function shape_text(s)
  return "{" .. table.concat(s, ", ") .. "}"
end

for _, b in ipairs(H.backends) do
  local opts = { backend = b }
  local function run(p) return lacc.run(p, opts) end

  describe("array arithmetic on " .. b, function()
    for _, t in ipairs { "f32", "f64", "i32", "u8" } do
      it("every operator on " .. t .. " arrays is the zipWith of the scalar operator", function()
        local n = 9
        local a = H.from_flat(t, { 3, 3 }, values(t, n))
        local c = H.from_flat(t, { 3, 3 }, values(t, n, true))
        -- the operators' programs and the scalar operators' in separate runs, 16 programs
        -- a run (one kernel to build each: on PoCL a build is most of this test's time)
        local got, want = {}, {}
        for _, op in ipairs(OPS) do
          local f = op[2]
          if not (t ~= "f32" and t ~= "f64" and (op[1] == "^")) then
            got[#got + 1], want[#want + 1] = f(a, c), lacc.zipWith(f, a, c)
            got[#got + 1], want[#want + 1] = f(a, 2), lacc.map(function(x) return f(x, 2) end, a)
            got[#got + 1], want[#want + 1] = f(3, c), lacc.map(function(x) return f(3, x) end, c)
          end
        end
        got[#got + 1], want[#want + 1] = -a, lacc.map(function(x) return -x end, a)
        local g, w = H.batch(function(list) return lacc.run(list, opts) end),
                     H.batch(function(list) return lacc.run(list, opts) end)
        for i = 1, #got do assert.are.equal(g:add(got[i]), w:add(want[i])) end
        for i = 1, #got do same_bits(g:get(i), w:get(i)) end
      end)
    end

    it("a chain of operators is one fused kernel, its sum too", function()
      local a, bb, c = H.random_array("f64", { 40, 30 }), H.random_array("f64", { 30 }),
        H.random_array("f64", { 40, 1 })
      local p = (a * bb + c):sum()
      local kernels = tonumber(lacc.explain(p):match("%-%- (%d+) kernels?"))
      assert.are.equal(1, kernels)
      local want = lacc.sum(lacc.zipWith(function(x, y) return x + y end,
        lacc.zipWith(function(x, y) return x * y end, a, lacc.replicate({ 40, lacc.all }, bb)),
        lacc.replicate({ lacc.all, 30 }, lacc.reshape({ 40 }, c))))
      same_bits(run(p), run(want))
    end)

    it("broadcasts as NumPy does, and names both shapes where it cannot", function()
      for _, case in ipairs(BROADCAST) do
        local sa, sb, S = case[1], case[2], case[3]
        local a, fa = H.random_array("f64", sa)
        local c, fc = H.random_array("f64", sb)
        if S then
          local r = run(a - c)
          assert.are.same(S, r:shape())
          local got = flat(r)
          for lin = 0, H.size(S) - 1 do
            local ix = H.unravel(S, lin)
            assert.are.equal(read_broadcast(fa, sa, ix) - read_broadcast(fc, sb, ix), got[lin + 1])
          end
          -- the same program compiled: the shapes known only when it runs
          local f = lacc.compile(function(x, y) return x - y end, opts)
          same_bits(f(a, c), r)
        else
          local ok, err = pcall(function() return a - c end)   --@mismatch
          assert.is_false(ok)
          err = tostring(err)
          assert.truthy(err:find(shape_text(sa), 1, true), err)
          assert.truthy(err:find(shape_text(sb), 1, true), err)
          assert.truthy(err:find("do not broadcast", 1, true), err)
          assert.truthy(err:find("arith_spec.lua:" .. H.line_of("mismatch"), 1, true), err)
          -- compiled, the mismatch is found when the program runs
          local f = lacc.compile(function(x, y) return x - y end, opts)
          assert.is_false((pcall(f, a, c)))
        end
      end
    end)

    it("compiled, arrays of one shape run a loop without the stretch tests and their checks " ..
       "tested once before it; stretched ones the loop with both, as a Lua loop", function()
      H.seed(77)
      local f = lacc.compile(function(x, y, k) return x - y * k end, opts)
      for _, case in ipairs { { { 37, 129 }, { 37, 129 } }, { { 1, 7 }, { 1, 7 } },
                              { { 37, 1 }, { 37, 129 } }, { { 129 }, { 37, 129 } },
                              { { 3, 1 }, { 1, 5 } }, { { 0, 4 }, { 0, 4 } }, { { 300001 }, { 300001 } } } do
        local sa, sb = case[1], case[2]
        local a, fa = H.random_array("f64", sa)
        local c, fc = H.random_array("f64", sb)
        local r = f(a, c, 3)
        local S = r:shape()
        local got = flat(r)
        for lin = 0, H.size(S) - 1 do
          local ix = H.unravel(S, lin)
          assert.are.equal(read_broadcast(fa, sa, ix) - read_broadcast(fc, sb, ix) * 3, got[lin + 1])
        end
      end
      -- an awhile's body reads its arrays' extents when it runs, as a compiled function
      local p = lacc.awhile(function(_, _, i) return lacc.lt(i, 2) end,
        function(x, y, i) return x - y * 0.5, y, lacc.map(function(v) return v + 1 end, i) end,
        { lacc.fromtable({ { 1, 2 }, { 3, 4 } }, "f64"), lacc.fromtable({ { 2, 4 }, { 6, 8 } }, "f64"),
          lacc.unit(lacc.constant(0, "i64")) })
      -- (on the cpu backend: OpenCL keeps the loop that tests each element)
      local text = lacc.explain(p, { backend = "cpu" })
      assert.truthy(text:find("generate, rank 2 f64", 1, true), text)
      assert.truthy(text:find("checks per element: 0 of 2 left, 2 tested once before their loop", 1, true), text)
      assert.are.same({ { -1, -2 }, { -3, -4 } }, (run(p)):totable())
    end)

    it("knows the shapes of maps, folds, reshapes and generates of known shapes: a zipWith, " ..
       "and a mismatch named at the line", function()
      local X, y = H.random_array("f64", { 5, 3 }), H.random_array("f64", { 5 })
      local z = lacc.sum(X * 2, 2)                     -- {5}: a fold along 2 of a {5, 3}
      local text = lacc.explain((1 - 2 * y) * z)
      assert.is_nil(text:find("generate", 1, true), text)   -- zipped, no run-time extents
      local want = lacc.zipWith(function(u, v) return (1 - 2 * u) * v end, y,
                                lacc.fold(function(u, v) return u + v end, 0, lacc.map(function(v) return v * 2 end, X)))
      same_bits(run((1 - 2 * y) * z), run(want))
      for _, p in ipairs { lacc.map(function(v) return v end, z), lacc.reshape({ 5 }, lacc.flatten(z)),
                           lacc.generate({ 5 }, function(i) return lacc.cast(i, "f64") end),
                           lacc.maximum(X, 2), lacc.flatten(lacc.reshape({ 5, 1 }, z)) } do
        local ok, err = pcall(function() return p + lacc.fromtable({ 1, 2 }, "f64") end)   --@known
        assert.is_false(ok)
        assert.truthy(tostring(err):find("the shapes {5} and {2} do not broadcast", 1, true), tostring(err))
        assert.truthy(tostring(err):find("arith_spec.lua:" .. H.line_of("known"), 1, true), tostring(err))
      end
      -- a compiled program's parameters have no known shape: extents when it runs
      local f = lacc.compile(function(u, v) return (1 - 2 * v) * lacc.sum(u * 2, 2) end, opts)
      same_bits(f(X, y), run(want))
    end)

    it("promotes element types by lacc's rule; Lua numbers take the array's type", function()
      local function ty(x, y) return run(x + y):type() end
      local i32, f32 = lacc.fromtable({ 1, 2 }, "i32"), lacc.fromtable({ 0.5, 1 }, "f32")
      local u8, i8 = lacc.fromtable({ 200, 3 }, "u8"), lacc.fromtable({ -100, 3 }, "i8")
      local f64, u64 = lacc.fromtable({ 1, 2 }, "f64"), lacc.fromtable({ 1, 2 }, "u64")
      assert.are.equal("f32", ty(i32, f32))
      assert.are.equal("f64", ty(f32, f64))
      assert.are.equal("i16", ty(u8, i8))
      assert.are.same({ 100, 6 }, flat(run(u8 + i8)))
      assert.are.equal("i32", ty(i32, 5))
      assert.are.equal("f32", ty(f32, 5))
      assert.are.equal("f64", run(i32 / 2):type())
      assert.has_error(function() return i32 * 2.5 end)
      local ok, err = pcall(function() return u64 + i32 end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("no common integer type", 1, true))
      ok, err = pcall(function() return lacc.fromtable({ true }, "bool") + i32 end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("cast it first", 1, true))
      same_bits(run(i32 + f32), run(lacc.zipWith(function(x, y) return lacc.cast(x, "f32") + y end, i32, f32)))
    end)

    it("applies lacc's scalar functions element-wise to arrays, broadcasting", function()
      local a = lacc.fromtable({ { 1, -2, 3 }, { -4, 5, 0 / 0 } }, "f64")
      local row = lacc.fromtable({ 0, 1, 2 }, "f64")
      same_bits(run(lacc.exp(a)), run(lacc.map(lacc.exp, a)))
      same_bits(run(a:abs()), run(lacc.map(lacc.abs, a)))
      same_bits(run(lacc.max(a, row)), run(lacc.zipWith(lacc.max, a, lacc.replicate({ 2, lacc.all }, row))))
      same_bits(run(lacc.atan2(a, 2)), run(lacc.map(function(x) return lacc.atan2(x, 2) end, a)))
      local mask = lacc.lt(a, row)
      assert.are.equal("bool", run(mask):type())
      assert.are.same({ false, true, false, true, false, false }, flat(run(mask)))
      assert.are.same({ 0, -2, 2, -4, 1, 2 }, flat(run(lacc.cond(mask, a, row))))
      assert.are.equal("i32", run(lacc.cast(a:floor():abs():min(2) + 1, "i32")):type())
      assert.are.equal(-4, lacc.run(lacc.min(a), opts):totable())
      -- scalars alone still give scalars
      assert.are.equal(3, lacc.max(2, 3))
    end)

    it("reduces with methods: sum, mean, var, std, max, min, argmax, argmin, cumsum, cumprod", function()
      local rows = { { 1, 5, 2, 8 }, { 3, -1, 4, 0 }, { 2, 2, 7, 1 } }
      local a = lacc.fromtable(rows, "f64")
      local function col(j) return { rows[1][j], rows[2][j], rows[3][j] } end
      local function mean(v) local s = 0; for _, x in ipairs(v) do s = s + x end; return s / #v end
      local function var(v)
        local m, s = mean(v), 0
        for _, x in ipairs(v) do s = s + (x - m) * (x - m) end
        return s / #v
      end
      local all = {}
      for _, r in ipairs(rows) do for _, x in ipairs(r) do all[#all + 1] = x end end
      assert.are.equal(34, run(a:sum()):totable())
      assert.are.same({ 16, 6, 12 }, run(a:sum(2)):totable())
      assert.are.same({ 6, 6, 13, 9 }, run(a:sum(1)):totable())
      assert.is_true(H.same(mean(all), run(a:mean()):totable(), 1e-12))
      assert.is_true(H.same(var(all), run(a:var()):totable(), 1e-12))
      for j = 1, 4 do
        assert.is_true(H.same(var(col(j)), run(a:var(1)):totable()[j], 1e-12))
        assert.is_true(H.same(math.sqrt(var(col(j))), run(a:std(1)):totable()[j], 1e-12))
      end
      assert.are.same({ 8, 4, 7 }, run(a:max(2)):totable())
      assert.are.same({ 1, -1, 1 }, run(a:min(2)):totable())
      assert.are.same({ 4, 3, 3 }, flat(run(a:argmax(2))))
      assert.are.same({ 1, 2, 4 }, flat(run(a:argmin(2))))
      assert.are.same({ { 1, 6, 8, 16 }, { 3, 2, 6, 6 }, { 2, 4, 11, 12 } }, run(a:cumsum(2)):totable())
      assert.are.same({ 1, 5, 10, 80, 240, -240, -960, 0, 0, 0, 0, 0 }, run(a:cumprod()):totable(),
        "cumprod of the flattened array")
      local ints = lacc.fromtable({ 1, 2, 3, 4 }, "i32")
      assert.are.equal("f64", run(ints:mean()):type())
      assert.are.equal(2.5, run(ints:mean()):totable())
      local f = lacc.compile(function(x) return x:mean(1) - x:std() end, opts)
      local want = run(a:mean(1) - a:std())
      for j = 1, 4 do assert.is_true(H.same(flat(want)[j], flat(f(a))[j], 1e-12)) end
    end)

    it("a.T reverses the dimensions", function()
      local a = lacc.fromtable({ { 1, 2, 3 }, { 4, 5, 6 } }, "i32")
      assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, run(a.T):totable())
      assert.are.same({ { 1, 4 }, { 2, 5 }, { 3, 6 } }, run((a + 0).T):totable())
      local c = H.random_array("f32", { 2, 3, 4 })
      local r = run(c.T)
      assert.are.same({ 4, 3, 2 }, r:shape())
      assert.are.equal(H.num(c:get(2, 1, 3)), H.num(r:get(3, 1, 2)))
    end)

    it("builds zeros, ones, full, arange, linspace and eye", function()
      assert.are.same({ { 0, 0, 0 }, { 0, 0, 0 } }, run(lacc.zeros({ 2, 3 })):totable())
      assert.are.equal("f64", run(lacc.ones(4)):type())
      assert.are.same({ 1, 1, 1, 1 }, run(lacc.ones(4, "u8")):totable())
      assert.are.same({ 7, 7 }, run(lacc.full(2, 7, "i16")):totable())
      assert.are.equal(2.5, run(lacc.full({}, 2.5)):totable())
      assert.are.same({ 0, 1, 2, 3, 4 }, flat(run(lacc.arange(5))))
      assert.are.equal("i64", run(lacc.arange(5)):type())
      assert.are.same({ 2, 5, 8 }, flat(run(lacc.arange(2, 10, 3))))
      assert.are.same({ 1, 0.5, 0, -0.5 }, run(lacc.arange(1, -1, -0.5)):totable())
      assert.are.same({}, flat(run(lacc.arange(3, 1))))
      local ls = run(lacc.linspace(0, 1, 11)):totable()
      for i = 1, 11 do assert.is_true(H.same((i - 1) * 0.1, ls[i], 1e-15)) end
      assert.are.equal(1, ls[11])
      assert.are.same({ 3 }, run(lacc.linspace(3, 9, 1)):totable())
      assert.are.same({ { 1, 0, 0 }, { 0, 1, 0 } }, run(lacc.eye(2, 3)):totable())
      assert.are.equal("i32", run(lacc.eye(2, "i32")):type())
      -- constructors broadcast like arrays
      local col = lacc.reshape({ 2, 1 }, lacc.arange(1, 3, 1, "f64"))
      assert.are.same({ { 1, 1 }, { 2, 2 } }, run(lacc.ones({ 2, 2 }) * col):totable())
    end)
  end)
end
