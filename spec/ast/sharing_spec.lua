-- Sharing recovery seen from Lua ("Optimising Purely Functional GPU Programs", section 3): a node used more than once is
-- let-bound once, at the lowest node that dominates all its uses; a node used once is not;
-- arrays referenced from scalar code are bound at the array level; traced scalar values
-- cannot escape the function they were traced in. Every result is checked against a
-- plain-Lua reference on every backend in H.backends.
local H = require "helper"
local lacc = H.lacc

local is_jit = type(jit) == "table"
local ffi = is_jit and require "ffi" or nil

-- A wrapping 64-bit integer for reference computations (int64 cdata on LuaJIT,
-- a native integer on Lua 5.4, where integer arithmetic wraps).
local function int64(v)
  if is_jit then return ffi.new("int64_t", v) end
  return math.tointeger(v)
end

-- A 64-bit value as text without LuaJIT's "LL" suffix, so both sides compare alike.
local function i64s(v)
  return (tostring(v):gsub("[LU]+$", ""))
end

local function count(text, pat)
  local _, n = text:gsub(pat, "")
  return n
end

local line_of = H.line_of   -- the line of this file holding "--@name"

local function ints(a)
  local r = {}
  for i = 1, #a do r[i] = H.num(a:at_linear(i - 1)) end
  return r
end

describe("sharing recovery (Lua surface)", function()
  describe("the seed example: let inc = (+) 1 in ...", function()
    -- let inc = (+) 1
    -- in let nine = let three = inc 2 in (*) three three
    -- in (-) (inc nine) nine
    local function build()
      local one = lacc.constant(1, "i32")
      local two = lacc.constant(2, "i32")
      local function inc(x) return one + x end
      local nine
      do
        local three = inc(two)
        nine = three * three
      end
      return lacc.unit(inc(nine) - nine)
    end

    local function reference()
      local function inc(x) return 1 + x end
      local three = inc(2)
      local nine = three * three
      return inc(nine) - nine
    end

    it("explain shows exactly three lets (one, three, nine)", function()
      local text, st = lacc.explain(build())
      assert.are.equal("string", type(text))
      assert.are.equal(3, st.lets)
      assert.are.equal(3, count(text, "%f[%w]let "))
      -- `one` is used by both applications of inc: bound once, at the top
      assert.are.equal(1, count(text, "1:i32"))
      assert.are.equal(1, count(text, "2:i32"))
      -- `three` is only used inside `nine`: its binding sits inside nine's
      assert.truthy(text:find("let x%d+ = let x%d+ = %(x%d+ %+ 2:i32%)"),
        "three is not bound inside nine's binding:\n" .. text)
    end)

    for _, b in ipairs(H.backends) do
      it("runs to the plain-Lua result on " .. b, function()
        local r = lacc.run(build(), { backend = b })
        assert.are.same({}, r:shape())
        assert.are.equal(reference(), H.num(r:get()))
        assert.are.equal(1, H.num(r:get()))
      end)
    end
  end)

  describe("a chain of 60 self-additions inside a map lambda", function()
    local values = { 1, 2, 3, -7, 16, 0, 12345, -1 }

    local function reference(v)
      local x = int64(v)
      for _ = 1, 60 do x = x + x end   -- wraps modulo 2^64 on both VMs
      return x
    end

    for _, b in ipairs(H.backends) do
      it("is linear, binds 59 lets and wraps like int64 on " .. b, function()
        local xs = lacc.fromtable(values, "i64")
        local t0 = os.clock()
        local p = lacc.map(function(x)
          for _ = 1, 60 do x = x + x end
          return x
        end, xs)
        local text, st = lacc.explain(p)
        local dt = os.clock() - t0   -- tracing to lowering; not the backend's kernel build
        assert.is_true(dt < 0.5, ("took %.3f s"):format(dt))
        local r = lacc.run(p, { backend = b })
        -- x0 is the parameter (never bound); sums 1..59 are each used twice, the 60th once
        assert.are.equal(59, st.lets)
        assert.are.equal(59, count(text, "%f[%w]let "))
        assert.are.equal("i64", r:type())
        assert.are.equal(#values, #r)
        for i, v in ipairs(values) do
          assert.are.equal(i64s(reference(v)), i64s(r:at_linear(i - 1)))
        end
        -- spot checks of the wrap-around: 16 * 2^60 = 2^64 wraps to 0
        assert.are.equal("0", i64s(r:at_linear(4)))
        assert.are.equal(i64s(reference(1)), "1152921504606846976")
      end)
    end
  end)

  describe("30 nested zipWith(f, a, a) at the array level", function()
    local init = { 1, 2.5, -3, 0.125, 7 }
    local f = function(x, y) return x + y end

    for _, b in ipairs(H.backends) do
      it("is linear and binds each shared intermediate once on " .. b, function()
        local t0 = os.clock()
        local a = lacc.use(lacc.fromtable(init, "f64"))
        for _ = 1, 30 do a = lacc.zipWith(f, a, a) end
        local text, st = lacc.explain(a)
        -- tracing, sharing recovery and lowering are linear (an exponential blow-up takes
        -- minutes); building kernels is the backend's (PoCL alone takes ~0.5 s here)
        local dt = os.clock() - t0
        assert.is_true(dt < 0.5, ("took %.3f s"):format(dt))
        local r = lacc.run(a, { backend = b })
        -- the use and the first 29 zipWiths are each used twice by the next one:
        -- 30 bindings; the last zipWith is the root (used once)
        assert.are.equal(30, st.lets)
        assert.are.equal(30, count(text, "%f[%w]let "))
        -- nothing shared may be fused into two consumers: 30 kernels, 29 intermediates
        assert.are.equal(30, st.kernels)
        assert.are.equal(29, st.intermediates)
        local expected = {}
        for i, x in ipairs(init) do
          local v = x
          for _ = 1, 30 do v = f(v, v) end
          expected[i] = v
          assert.are.equal(x * 2 ^ 30, v)
        end
        H.check_array(r, expected)
      end)
    end
  end)

  describe("sharing that must not happen", function()
    it("does not bind a scalar node used once", function()
      local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
      local p = lacc.map(function(x) return (x + 1) * 2 - 3 end, xs)
      local text, st = lacc.explain(p)
      assert.are.equal(0, st.lets)
      assert.are.equal(0, count(text, "%f[%w]let "))
      for _, b in ipairs(H.backends) do
        H.check_array(lacc.run(p, { backend = b }), { 1, 3, 5 })
      end
    end)

    it("does not bind lambda parameters however often they are used", function()
      local xs = lacc.fromtable({ 1, -2, 3 }, "i32")
      local p = lacc.map(function(x) return x * x * x + x end, xs)
      local _, st = lacc.explain(p)
      assert.are.equal(0, st.lets)
      for _, b in ipairs(H.backends) do
        H.check_array(lacc.run(p, { backend = b }), { 2, -10, 30 })
      end
    end)

    it("does not bind arrays used once by their consumer", function()
      local src = { 4, 5, 6 }
      local xs = lacc.fromtable(src, "f32")
      local p = lacc.map(function(x) return x * 2 end, lacc.map(function(x) return -x end, xs))
      local _, st = lacc.explain(p)
      assert.are.equal(0, st.lets)
      local expected = {}
      for i, v in ipairs(src) do expected[i] = -v * 2 end
      for _, b in ipairs(H.backends) do H.check_array(lacc.run(p, { backend = b }), expected) end
    end)

    it("binds a scalar used twice once, but not its operands used once", function()
      local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
      local p = lacc.map(function(x)
        local y = (x + 1) * 3        -- used twice: bound
        return y * y - 1             -- x + 1 and the constants: used once each
      end, xs)
      local text, st = lacc.explain(p)
      assert.are.equal(1, st.lets)
      assert.are.equal(1, count(text, "%f[%w]let "))
      local expected = {}
      for i = 1, 3 do
        local y = (i + 1) * 3
        expected[i] = y * y - 1
      end
      for _, b in ipairs(H.backends) do H.check_array(lacc.run(p, { backend = b }), expected) end
    end)
  end)

  describe("an array with two consumers run as two results", function()
    local src = { 1, 2, 3, -4 }
    local function build()
      local xs = lacc.fromtable(src, "i32")
      local ys = lacc.map(function(x) return x * 10 end, xs)
      local p = lacc.map(function(y) return y + 1 end, ys)
      local q = lacc.sum(ys)
      return p, q
    end

    it("is bound once", function()
      local p, q = build()
      local text, st = lacc.explain({ p, q })
      assert.are.equal(1, st.lets)
      assert.are.equal(1, count(text, "%f[%w]let "))
      assert.truthy(text:find("result 1", 1, true))
      assert.truthy(text:find("result 2", 1, true))
      -- the shared map appears once in the text
      assert.are.equal(1, count(text, "10:i32"))
    end)

    for _, b in ipairs(H.backends) do
      it("gives both plain-Lua results on " .. b, function()
        local p, q = build()
        local a, s = lacc.run({ p, q }, { backend = b })
        local ea, es = {}, 0
        for i, v in ipairs(src) do
          ea[i] = v * 10 + 1
          es = es + v * 10
        end
        H.check_array(a, ea)
        assert.are.same({}, s:shape())
        assert.are.equal(es, H.num(s:get()))
      end)
    end

    it("binds one program given twice as two results once", function()
      local xs = lacc.fromtable(src, "i32")
      local ys = lacc.map(function(x) return x - 1 end, xs)
      local _, st = lacc.explain({ ys, ys })
      assert.are.equal(1, st.lets)
      for _, b in ipairs(H.backends) do
        local r1, r2 = lacc.run({ ys, ys }, { backend = b })
        local e = {}
        for i, v in ipairs(src) do e[i] = v - 1 end
        H.check_array(r1, e)
        H.check_array(r2, e)
      end
    end)
  end)

  describe("arrays captured in lambdas", function()
    local src = { 5, 6, 7 }

    it("are let-bound at the array level even when indexed once", function()
      local xs = lacc.fromtable(src, "i32")
      local doubled = lacc.map(function(x) return x * 2 end, xs)
      local p = lacc.generate({ 3 }, function(i) return doubled[4 - i] end)
      local text, st = lacc.explain(p)
      assert.are.equal(1, st.lets)
      -- bound by an array-level let, indexed through the array variable
      assert.truthy(text:find("let a0 = map", 1, true), text)
      assert.truthy(text:find("a0 ! ", 1, true), text)
      -- the map is not copied into the scalar code of the generate
      assert.are.equal(1, count(text, "%f[%w]map "))
      for _, b in ipairs(H.backends) do
        H.check_array(lacc.run(p, { backend = b }), { 14, 12, 10 })
      end
    end)

    it("are bound once when both mapped over and captured", function()
      local xs = lacc.fromtable(src, "i32")
      local d = lacc.map(function(x) return x * 2 end, xs)
      local p = lacc.map(function(x) return x + d[3] - d[1] end, d)
      local text, st = lacc.explain(p)
      assert.are.equal(1, st.lets)
      assert.are.equal(1, count(text, "2:i32"))
      local e = {}
      for i, v in ipairs(src) do e[i] = v * 2 + src[3] * 2 - src[1] * 2 end
      for _, b in ipairs(H.backends) do H.check_array(lacc.run(p, { backend = b }), e) end
    end)

    it("share an index computation used twice inside the lambda", function()
      local xs = lacc.fromtable(src, "i32")
      local d = lacc.map(function(x) return x * 2 end, xs)
      local p = lacc.generate({ 3 }, function(i) return d[i] * 10 + d[4 - i] end)
      local _, st = lacc.explain(p)
      -- d at the array level, and the 1-based index i (built from the 0-based one) inside
      assert.are.equal(2, st.lets)
      local e = {}
      for i = 1, 3 do e[i] = src[i] * 2 * 10 + src[4 - i] * 2 end
      for _, b in ipairs(H.backends) do H.check_array(lacc.run(p, { backend = b }), e) end
    end)
  end)

  describe("scalar values and function scopes", function()
    it("binds a value shared with a nested lambda in the enclosing one", function()
      local src = { 1, 2, 3 }
      local xs = lacc.fromtable(src, "i32")
      local p = lacc.map(function(x)
        local y = x * 3
        return lacc.iterate(2, function(z) return z + y end, y)
      end, xs)
      local _, st = lacc.explain(p)
      assert.are.equal(1, st.lets)
      local e = {}
      for i, v in ipairs(src) do e[i] = v * 3 * 3 end
      for _, b in ipairs(H.backends) do H.check_array(lacc.run(p, { backend = b }), e) end
    end)

    it("rejects a value traced in one lambda and used in another", function()
      local xs = lacc.fromtable({ 1, 2 }, "f64")
      local leaked
      lacc.map(function(x) --@leakfn
        leaked = x * 3 --@leak
        return x
      end, xs)
      local ok, err = pcall(function()
        local p = lacc.map(function(x) return x + leaked end, xs)
        local _, st = lacc.explain(p)
        local r = lacc.run(p)
        return st, r
      end)
      assert.is_false(ok)
      err = tostring(err)
      assert.truthy(err:find("used outside the function it belongs to", 1, true), err)
      assert.truthy(err:find("nested parallelism", 1, true) and err:find("fold its inner dimension", 1, true), err)
      -- it points at the leaked value's line, or at least at the function it escaped from
      assert.truthy(err:find("sharing_spec.lua:" .. line_of("leak"), 1, true)
        or err:find("sharing_spec.lua:" .. line_of("leakfn"), 1, true), err)
      for _, b in ipairs(H.backends) do
        local ok2, err2 = pcall(function()
          local p = lacc.map(function(x) return x + leaked end, xs)
          local r = lacc.run(p, { backend = b })
          return r
        end)
        assert.is_false(ok2)
        assert.truthy(tostring(err2):find("used outside the function it belongs to", 1, true))
      end
      -- the process keeps working
      for _, b in ipairs(H.backends) do
        H.check_array(lacc.run(lacc.map(function(x) return x + 1 end, xs), { backend = b }),
          { 2, 3 })
      end
    end)

    it("rejects a leaked lambda parameter used at the top level", function()
      local xs = lacc.fromtable({ 1, 2 }, "i32")
      local leaked
      lacc.map(function(x) leaked = x; return x end, xs)
      local ok, err = pcall(function()
        local p = lacc.unit(leaked)
        local r = lacc.run(p)
        return r
      end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("used outside the function it belongs to", 1, true))
      H.check_array(lacc.run(lacc.map(function(x) return x * 5 end, xs)), { 5, 10 })
      assert.are.same({ 5, 10 }, ints(lacc.run(lacc.map(function(x) return x * 5 end, xs))))
    end)
  end)
end)
