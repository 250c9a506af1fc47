-- Every scalar operation on every scalar type against a plain-Lua reference (integer
-- semantics from spec/intref.lua), with extremes, wrap-around, NaN, infinities, -0.
local H = require "helper"
local R = require "intref"
local lacc = H.lacc
local sweep = H.sweeper(it)   -- the type sweeps run where spec/helper.lua says
local JIT = type(jit) == "table"

local function run(p, backend) return lacc.run(p, { backend = backend }) end

-- integer inputs: extremes, around zero, and a few random values
local function int_values(t)
  local v = { R.min(t), R.max(t), R.wrap(t, R.min(t) + 1), R.wrap(t, R.max(t) - 1),
              R.wrap(t, 0), R.wrap(t, 1), R.wrap(t, 2), R.wrap(t, 7), R.wrap(t, 3) }
  if R.signed[t] then
    for _, x in ipairs { -1, -2, -7, -3 } do v[#v + 1] = R.wrap(t, R.I(x)) end
  end
  for _ = 1, 4 do v[#v + 1] = R.wrap(t, R.I(H.randint(-100000, 100000))) end
  return v
end

-- all pairs of a list, as two flat input lists
local function pairs_of(vals)
  local a, b = {}, {}
  for _, x in ipairs(vals) do
    for _, y in ipairs(vals) do a[#a + 1], b[#b + 1] = x, y end
  end
  return a, b
end

local function host(t, list)
  local arr = lacc.array(t, { #list })
  for i, v in ipairs(list) do arr[i] = v end
  return arr
end

local function check_ints(t, got, ref, what)
  assert.are.equal(#ref, #got)
  for i = 1, #ref do
    if not R.eq(got[i], ref[i]) then
      error(("%s on %s, element %d: expected %s, got %s"):format(what, t, i,
        tostring(ref[i]), tostring(got[i])), 2)
    end
  end
end

local float_values = { 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 1e-300, 3.75, -7.25, 1e300,
                       math.huge, -math.huge, 0 / 0, 100.125, -0.1 }

local function fround(t, x) if t == "f32" then return H.f32(x) end return x end

local function check_floats(t, got, ref, what, tol)
  assert.are.equal(#ref, #got)
  for i = 1, #ref do
    local g, r = got[i], ref[i]
    local ok
    if type(r) == "boolean" then ok = g == r
    elseif r ~= r then ok = g ~= g
    elseif tol and r ~= math.huge and r ~= -math.huge then
      ok = math.abs(g - r) <= tol * math.max(1, math.abs(r))
    else ok = g == r end
    if not ok then
      error(("%s on %s, element %d: expected %s, got %s"):format(what, t, i, tostring(r),
        tostring(g)), 2)
    end
  end
end

local function lua_fmod(a, b)
  local m = math.fmod(a, b)
  if m ~= 0 and ((m < 0) ~= (b < 0)) then m = m + b end
  return m
end

local function lua_min(x, y) if y < x then return y end return x end
local function lua_max(x, y) if y > x then return y end return x end
local function round(x)
  if x ~= x or x == math.huge or x == -math.huge then return x end
  if x < 0 then return -round(-x) end
  local f = math.floor(x)
  if x - f >= 0.5 then f = f + 1 end
  return f
end

for _, backend in ipairs(H.backends) do
  describe("integer operations on " .. backend, function()
    for _, t in ipairs(R.types) do
      local vals = int_values(t)
      local xa, ya = pairs_of(vals)
      local X, Y = host(t, xa), host(t, ya)
      local nz_x, nz_y = {}, {}
      for i = 1, #xa do
        if not R.eq(ya[i], 0) then nz_x[#nz_x + 1], nz_y[#nz_y + 1] = xa[i], ya[i] end
      end
      local NX, NY = host(t, nz_x), host(t, nz_y)

      -- The binary operations of a type run together, each its own result: one program
      -- to compile a group (the divisions' inputs have no zero divisor), not one an
      -- operation. Registered while busted collects the tests, run by the first to look.
      local function run_list(list) return run(list, backend) end
      local groups = { all = H.batch(run_list), nz = H.batch(run_list) }
      local function binary(name, f, ref, xs, ys, XS, YS)
        local g = XS and groups.nz or groups.all
        local k = g:add(lacc.zipWith(f, XS or X, YS or Y))
        sweep(t, backend, name .. " on " .. t, function()
          local r = g:get(k)
          local got, want = {}, {}
          xs, ys = xs or xa, ys or ya
          for i = 1, #xs do got[i], want[i] = r[i], ref(xs[i], ys[i]) end
          if type(want[1]) == "boolean" then
            for i = 1, #want do assert.are.equal(want[i], got[i]) end
          else
            check_ints(t, got, want, name)
          end
        end)
      end

      binary("add", function(x, y) return x + y end, function(a, b) return R.wrap(t, a + b) end)
      binary("sub", function(x, y) return x - y end, function(a, b) return R.wrap(t, a - b) end)
      binary("mul", function(x, y) return x * y end, function(a, b) return R.wrap(t, a * b) end)
      binary("min", lacc.min, function(a, b) return R.lt(t, b, a) and b or a end)
      binary("max", lacc.max, function(a, b) return R.lt(t, a, b) and b or a end)
      binary("band", lacc.band, function(a, b) return R.band(t, a, b) end)
      binary("bor", lacc.bor, function(a, b) return R.bor(t, a, b) end)
      binary("bxor", lacc.bxor, function(a, b) return R.bxor(t, a, b) end)
      binary("eq", lacc.eq, function(a, b) return R.eq(a, b) end)
      binary("ne", function(x, y) return x:ne(y) end, function(a, b) return not R.eq(a, b) end)
      binary("lt", lacc.lt, function(a, b) return R.lt(t, a, b) end)
      binary("le", lacc.le, function(a, b) return not R.lt(t, b, a) end)
      binary("gt", function(x, y) return x:gt(y) end, function(a, b) return R.lt(t, b, a) end)
      binary("ge", lacc.ge, function(a, b) return not R.lt(t, a, b) end)
      binary("idiv", lacc.idiv, function(a, b) return R.idiv(t, a, b) end, nz_x, nz_y, NX, NY)
      binary("%", function(x, y) return x % y end, function(a, b) return R.mod(t, a, b) end,
        nz_x, nz_y, NX, NY)
      binary("quot", lacc.quot, function(a, b) return R.tdiv(t, a, b) end, nz_x, nz_y, NX, NY)
      binary("rem", lacc.rem, function(a, b) return R.trem(t, a, b) end, nz_x, nz_y, NX, NY)

      sweep(t, backend, "shl and shr on " .. t, function()
        local xs, ns = {}, {}
        for _, x in ipairs(vals) do
          for _, n in ipairs { 0, 1, 3, R.bits[t] - 1, R.bits[t], R.bits[t] + 5 } do
            xs[#xs + 1], ns[#ns + 1] = x, R.wrap(t, n)
          end
          if R.signed[t] then xs[#xs + 1], ns[#ns + 1] = x, R.wrap(t, -2) end
        end
        local XS, NS = host(t, xs), host(t, ns)
        local l, r = run({ lacc.zipWith(lacc.shl, XS, NS), lacc.zipWith(function(x, n) return x:shr(n) end, XS, NS) }, backend)
        local gl, gr, wl, wr = {}, {}, {}, {}
        for i = 1, #xs do
          gl[i], gr[i] = l[i], r[i]
          local n = R.signed[t] and ns[i] or ns[i]
          wl[i], wr[i] = R.shl(t, xs[i], n), R.shr(t, xs[i], n)
        end
        check_ints(t, gl, wl, "shl")
        check_ints(t, gr, wr, "shr")
      end)

      sweep(t, backend, "neg, abs, signum, bnot and weak constants on " .. t, function()
        local A = host(t, vals)
        local neg, abs, sig, bn, k = run({ lacc.map(function(x) return -x end, A), lacc.map(lacc.abs, A),
          lacc.map(lacc.signum, A), lacc.map(lacc.bnot, A), lacc.map(function(x) return x * 3 + 1 end, A) }, backend)
        local g = { {}, {}, {}, {}, {} }
        local w = { {}, {}, {}, {}, {} }
        for i, v in ipairs(vals) do
          g[1][i], g[2][i], g[3][i], g[4][i], g[5][i] = neg[i], abs[i], sig[i], bn[i], k[i]
          w[1][i] = R.wrap(t, 0 - v)
          w[2][i] = (R.signed[t] and v < 0) and R.wrap(t, 0 - v) or v
          w[3][i] = R.wrap(t, R.eq(v, 0) and 0 or ((R.signed[t] and v < 0) and -1 or 1))
          w[4][i] = R.bnot(t, v)
          w[5][i] = R.wrap(t, v * 3 + 1)
        end
        for j, name in ipairs { "neg", "abs", "signum", "bnot", "x * 3 + 1" } do
          check_ints(t, g[j], w[j], name)
        end
      end)

      sweep(t, backend, "division by zero is a run-time error on " .. t, function()
        local A = host(t, { R.wrap(t, 5), R.wrap(t, 0) })
        for _, f in ipairs { lacc.idiv, lacc.imod, lacc.quot, lacc.rem } do
          local ok, err = pcall(run, lacc.zipWith(f, A, A), backend)
          assert.is_false(ok)
          assert.truthy(tostring(err):find("division by zero", 1, true))
        end
        local r = run(lacc.map(function(x) return x + 1 end, A), backend)
        check_ints(t, { r[1] }, { R.wrap(t, 6) }, "after an error")
      end)

      sweep(t, backend, "/ and ^ give f64 on " .. t, function()
        local A, B = host(t, nz_x), host(t, nz_y)
        local r = run(lacc.zipWith(function(x, y) return x / y end, A, B), backend)
        assert.are.equal("f64", r:type())
        local p = run(lacc.map(function(x) return x ^ 2 end, A), backend)
        for i = 1, #nz_x do
          local a, b = R.tofloat(t, nz_x[i]), R.tofloat(t, nz_y[i])
          assert.are.equal(a / b, r[i])
          assert.are.equal(a ^ 2, p[i])
        end
      end)
    end
  end)

  describe("float operations on " .. backend, function()
    for _, t in ipairs { "f32", "f64" } do
      local vals = {}
      for i, v in ipairs(float_values) do vals[i] = fround(t, v) end
      local xa, ya = pairs_of(vals)
      local X, Y = host(t, xa), host(t, ya)
      -- (as for the integers: the binary operations in one run, the unary ones in another)
      local function run_list(list) return run(list, backend) end
      local bin, un = H.batch(run_list), H.batch(run_list)
      local A = host(t, vals)
      local function binary(name, f, ref, tol)
        local k = bin:add(lacc.zipWith(f, X, Y))
        sweep(t, backend, name .. " on " .. t, function()
          local r = bin:get(k)
          local got, want = {}, {}
          for i = 1, #xa do
            got[i] = r[i]
            local v = ref(xa[i], ya[i])
            want[i] = type(v) == "number" and fround(t, v) or v
          end
          check_floats(t, got, want, name, tol)
        end)
      end
      binary("add", function(x, y) return x + y end, function(a, b) return a + b end)
      binary("sub", function(x, y) return x - y end, function(a, b) return a - b end)
      binary("mul", function(x, y) return x * y end, function(a, b) return a * b end)
      binary("div", function(x, y) return x / y end, function(a, b) return a / b end)
      binary("idiv", lacc.idiv, function(a, b) return math.floor(fround(t, a / b)) end)
      binary("%", function(x, y) return x % y end, lua_fmod)
      binary("pow", lacc.pow, function(a, b) return a ^ b end, t == "f32" and 1e-6 or 1e-15)
      binary("atan2", lacc.atan2, function(a, b) return math.atan2 and math.atan2(a, b) or math.atan(a, b) end,
        t == "f32" and 1e-6 or 1e-15)
      binary("min", lacc.min, lua_min)
      binary("max", function(x, y) return x:max(y) end, lua_max)
      binary("eq", lacc.eq, function(a, b) return a == b end)
      binary("ne", lacc.ne, function(a, b) return a ~= b end)
      binary("lt", lacc.lt, function(a, b) return a < b end)
      binary("le", function(x, y) return x:le(y) end, function(a, b) return a <= b end)
      binary("gt", lacc.gt, function(a, b) return a > b end)
      binary("ge", lacc.ge, function(a, b) return a >= b end)

      local unary = {
        { "neg", function(x) return -x end, function(a) return -a end },
        { "abs", lacc.abs, math.abs },
        { "signum", lacc.signum, function(a) if a > 0 then return 1 elseif a < 0 then return -1 end return a end },
        { "floor", lacc.floor, math.floor }, { "ceil", lacc.ceil, math.ceil },
        { "round", lacc.round, round },
        { "truncate", lacc.truncate, function(a)
          if a ~= a then return a end
          return a >= 0 and math.floor(a) or math.ceil(a)
        end },
        { "isnan", lacc.isnan, function(a) return a ~= a end },
        { "sqrt", lacc.sqrt, math.sqrt, 1e-7 }, { "exp", lacc.exp, math.exp, 1e-6 },
        { "log", lacc.log, math.log, 1e-6 }, { "sin", lacc.sin, math.sin, 1e-6 },
        { "cos", lacc.cos, math.cos, 1e-6 }, { "tan", lacc.tan, math.tan, 1e-6 },
        { "asin", lacc.asin, math.asin, 1e-6 }, { "acos", lacc.acos, math.acos, 1e-6 },
        { "atan", lacc.atan, function(a) return math.atan(a) end, 1e-6 },
        { "weak constant", function(x) return x * 2 + 0.5 end, function(a) return fround(t, fround(t, a * 2) + 0.5) end },
      }
      for _, u in ipairs(unary) do
        local k = un:add(lacc.map(u[2], A))
        sweep(t, backend, u[1] .. " on " .. t, function()
          local r = un:get(k)
          local got, want = {}, {}
          for i, v in ipairs(vals) do
            got[i] = r[i]
            local w = u[3](v)
            want[i] = type(w) == "number" and fround(t, w) or w
          end
          local tol = u[4] and (t == "f32" and 1e-6 or 1e-15) or nil
          check_floats(t, got, want, u[1], tol)
        end)
      end
    end
  end)

  describe("bool operations on " .. backend, function()
    it("land, lor, lnot, eq, ne, cond", function()
      local xa, ya = pairs_of { true, false }
      local X, Y = host("bool", xa), host("bool", ya)
      local ops = {
        { lacc.land, function(a, b) return a and b end }, { lacc.lor, function(a, b) return a or b end },
        { function(x) return lacc.lnot(x) end, function(a) return not a end },
        { lacc.eq, function(a, b) return a == b end }, { lacc.ne, function(a, b) return a ~= b end },
        { function(x, y) return lacc.cond(x, y, lacc.lnot(y)) end, function(a, b) if a then return b end return not b end },
      }
      local progs = {}
      for k, o in ipairs(ops) do progs[k] = lacc.zipWith(o[1], X, Y) end
      local rs = { run(progs, backend) }
      for k, o in ipairs(ops) do
        for i = 1, #xa do assert.are.equal(o[2](xa[i], ya[i]), rs[k][i]) end
      end
    end)
  end)

  describe("casts on " .. backend, function()
    local all = { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" }
    local function inputs(t)
      if t == "bool" then return { true, false } end
      if t == "f32" or t == "f64" then
        local v = { 1e30, -1e30, 300.7, -300.7, 70000.5, -70000.5, 3e9, -3e9, 1e19, 4294967296.5 }
        for _, x in ipairs(float_values) do v[#v + 1] = x end
        for i = 1, #v do v[i] = fround(t, v[i]) end
        return v
      end
      return int_values(t)
    end
    -- the exact reference of one conversion
    local function convert(from, to, v)
      local fv
      if from == "bool" then fv = v and 1 or 0
      elseif from == "f32" or from == "f64" then fv = v
      else fv = R.tofloat(from, v) end
      if to == "bool" then return fv ~= 0 end
      if to == "f32" or to == "f64" then
        if from ~= "bool" and R.bits[from] then
          if to == "f32" and not JIT and (from == "i64" or from == "u64") then
            return H.f32(R.tofloat(from, v))
          end
        end
        return fround(to, fv)
      end
      if from == "bool" then return R.wrap(to, R.I(fv)) end
      if from == "f32" or from == "f64" then return R.from_float(to, fv) end
      return R.wrap(to, v)
    end
    for _, from in ipairs(all) do
      sweep(from, backend, "from " .. from .. " to every type", function()
        local vals = inputs(from)
        local A = host(from, vals)
        -- one run of every cast: one program to compile, not eleven
        local casts = {}
        for k, to in ipairs(all) do casts[k] = lacc.map(function(x) return x:cast(to) end, A) end
        local rs = { run(casts, backend) }
        for k, to in ipairs(all) do
          local r = rs[k]
          assert.are.equal(to, r:type())
          for i, v in ipairs(vals) do
            local want, got = convert(from, to, v), r[i]
            local ok
            if R.bits[to] then ok = R.eq(got, want)
            elseif want ~= want then ok = got ~= got
            else ok = got == want end
            if not ok then
              error(("cast %s -> %s of %s: expected %s, got %s"):format(from, to, tostring(v),
                tostring(want), tostring(got)))
            end
          end
        end
      end)
    end
  end)

  describe("tuples and loops on " .. backend, function()
    it("lambdas return and take tuples", function()
      local a, fa = H.random_array("f64", { 9 })
      local p = lacc.map(function(x) return x * 2, lacc.cast(x, "i32"), lacc.gt(x, 0) end, a)
      local r = run(p, backend)
      assert.are.equal("(f64,i32,bool)", r:type())
      local q = run(lacc.map(function(t)
        local d, i, pos = t:unpack()
        return lacc.cond(pos, d + lacc.cast(i, "f64"), t[1])
      end, p), backend)
      local built = run(lacc.map(function(x) return lacc.tuple(x, x + 1)[2] end, a), backend)
      for i, x in ipairs(fa) do
        local e = r[i]
        local ti = x >= 0 and math.floor(x) or math.ceil(x)
        assert.are.same({ x * 2, ti, x > 0 }, e)
        assert.are.equal(x > 0 and x * 2 + ti or x * 2, q[i])
        assert.are.equal(x + 1, built[i])
      end
    end)

    it("iterate and while_ with scalar and tuple states", function()
      local a = host("i32", { 0, 1, 5, 13 })
      local it3 = run(lacc.map(function(x) return lacc.iterate(3, function(v) return v * 2 + 1 end, x) end, a), backend)
      local collatz = run(lacc.map(function(x)
        local st = lacc.while_(function(s) return lacc.gt(s[1], 1) end,
          function(s)
            local n, steps = s:unpack()
            return lacc.cond(lacc.eq(lacc.imod(n, 2), 0), lacc.idiv(n, 2), n * 3 + 1), steps + 1
          end, lacc.tuple(x, lacc.constant(0, "i32")))
        return st[2]
      end, a), backend)
      local fib = run(lacc.map(function(x)
        return lacc.iterate(lacc.cast(x, "i64"), function(s) return s[2], s[1] + s[2] end,
          lacc.tuple(lacc.constant(0, "i64"), lacc.constant(1, "i64")))[1]
      end, a), backend)
      local function ref_collatz(n)
        local steps = 0
        while n > 1 do
          n = n % 2 == 0 and n / 2 or n * 3 + 1
          steps = steps + 1
        end
        return steps
      end
      local function ref_fib(n)
        local x, y = 0, 1
        for _ = 1, n do x, y = y, x + y end
        return x
      end
      for i, x in ipairs { 0, 1, 5, 13 } do
        assert.are.equal(((x * 2 + 1) * 2 + 1) * 2 + 1, it3[i])
        assert.are.equal(ref_collatz(x), collatz[i])
        assert.is_true(R.eq(fib[i], R.I(ref_fib(x))))
      end
    end)
  end)
end

if not JIT then
  describe("Lua 5.4 operators", function()
    it("// % & | ~ << >> and unary ~ build expressions", function()
      local f = load([[
        local lacc, a = ...
        return lacc.map(function(x) return lacc.tuple(x // 3, x % 3, x & 6, x | 1, x ~ 5,
          x << 2, x >> 1, ~x) end, a)
      ]])
      local vals = { -7, 0, 5, 100 }
      local r = lacc.run(f(lacc, lacc.fromtable(vals, "i32")))
      local ref = load([[
        local x = ...
        local function w(v) v = v & 0xffffffff; if v >= 0x80000000 then v = v - 0x100000000 end return v end
        -- shr is arithmetic on signed types: floor division by 2
        return { x // 3, x % 3, x & 6, x | 1, x ~ 5, w(x << 2), x // 2, ~x }
      ]])
      for i, x in ipairs(vals) do
        local want = ref(x)
        assert.are.same(want, r[i])
      end
    end)
  end)
end
