-- Grouped producers (lower_group.c): a map whose element at index i shares work with its
-- neighbours through i >> c (a Philox block gives four neighbouring words) is lowered w =
-- 2^c elements at a time at b + k, b a multiple of w, and what they share is computed once.
-- Checked against plain Lua loops computing the same formulas: shifts and masks of the
-- index with offsets of either sign, in signed and unsigned arithmetic (a wrapped unsigned
-- offset must not be rewritten), narrowed to 32 bits, shifts past the group sizes, every
-- size from 0 to past several groups and chunks, ranks 1 to 3, sibling maps, and consumers
-- that read part of a grouped producer (a slice, a drop, a gather) against the whole.
local H = require "helper"
local lacc = H.lacc

local U64 = "u64"

-- The element function of each form (i is 1-based); each is checked against the
-- interpreter, which computes every element on its own (no groups), and on Lua 5.4, whose
-- integers wrap and shift as u64 does, against the same formula in plain Lua too.
local function mix(x)   -- some shared work: a few rounds of multiply-xorshift on a u64
  for _ = 1, 3 do x = lacc.bxor(x * lacc.constant(0x7F4A7C15, U64), lacc.shr(x, 29)) end
  return x
end
local forms = {
  { "philox-like: a block of four by (i - 1) >> 2, word (i - 1) & 3",
    function(i)
      local p = lacc.cast(i - 1, U64)
      local b = mix(lacc.shr(p, 2))
      local k = lacc.band(p, 3)
      return lacc.cond(lacc.lt(k, 2), lacc.cond(lacc.eq(k, 0), b, lacc.shr(b, 7)),
                       lacc.cond(lacc.eq(k, 2), lacc.bxor(b, 5), b * 3))
    end },
  { "pairs by i >> 1 (a 1-based offset: the group's second half moves up)",
    function(i) return mix(lacc.shr(lacc.cast(i, U64), 1)) + lacc.cast(i, U64) end },
  { "eights by (i + 6) >> 3 and masks of 7",
    function(i)
      local p = lacc.cast(i + 6, U64)
      return mix(lacc.shr(p, 3)) + lacc.band(p, 7)
    end },
  { "signed (i - 6) >> 2: negative at the start, an arithmetic shift",
    function(i) return lacc.cast(mix(lacc.cast(lacc.shr(i - 6, 2), U64)), "i64") end },
  { "unsigned (i - 6) >> 2: wraps at the start (must not be rewritten)",
    function(i) return mix(lacc.shr(lacc.cast(i - 6, U64), 2)) end },
  { "narrowed to i32 before the shift",
    function(i) return lacc.cast(mix(lacc.cast(lacc.shr(lacc.cast(i, "i32"), 1), U64)), "i64") end },
  { "a shift by 5: past the group sizes",
    function(i) return mix(lacc.shr(lacc.cast(i, U64), 5)) end },
}

-- Lua 5.4 only (LuaJIT has neither 64-bit integers nor these operators): the first form
-- in plain Lua, loaded from text so that LuaJIT never parses it
local philox_like_ref = _VERSION == "Lua 5.4" and load([[
  return function(i)
    local function mix(x)
      for _ = 1, 3 do x = (x * 0x7F4A7C15) ~ (x >> 29) end
      return x
    end
    local p = i - 1
    local b, k = mix(p >> 2), p & 3
    if k == 0 then return b elseif k == 1 then return b >> 7 elseif k == 2 then return b ~ 5 end
    return b * 3
  end]])() or nil

local function ints_of(a, n)
  local flat = lacc.run(lacc.reshape({ n }, a))
  local t = {}
  for i = 1, n do t[i] = flat[i] end
  return t
end

describe("grouped producers", function()
  local sizes = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 257, 1001, 40003 }
  local function same(got, want)
    return got == want or tostring(got) == tostring(want)
  end
  for _, b in ipairs(H.backends) do
    for _, f in ipairs(forms) do
      it(("%s, sizes 0 to 40003, on %s, as the interpreter computes each element"):format(f[1], b), function()
        for _, n in ipairs(sizes) do
          local p = lacc.generate({ n }, f[2])
          local a, want = lacc.run(p, { backend = b }), lacc.run(p, { backend = "interp" })
          assert.are.equal(n, a:size())
          for i = 1, n do
            if not same(a[i], want[i]) then
              error(("%s: n %d element %d: %s, want %s"):format(f[1], n, i, tostring(a[i]), tostring(want[i])))
            end
          end
        end
      end)
    end

    if philox_like_ref then
      it("the philox-like form against plain Lua on " .. b, function()
        local a = lacc.run(lacc.generate({ 1001 }, forms[1][2]), { backend = b })
        for i = 1, 1001 do assert.are.equal(philox_like_ref(i), math.tointeger(a[i]) or a[i]) end
      end)
    end

    it("ranks 2 and 3 by the row-major position, odd extents, on " .. b, function()
      local f = forms[1]
      for _, shape in ipairs { { 3, 5 }, { 0, 4 }, { 7, 1 }, { 2, 3, 5 }, { 33, 17 } } do
        local n = H.size(shape)
        local p = lacc.reshape(shape, lacc.generate({ n }, f[2]))
        local got, want = ints_of(lacc.run(p, { backend = b }), n), lacc.run(lacc.generate({ n }, f[2]), { backend = "interp" })
        for i = 1, n do
          assert.is_true(same(got[i], want[i]), ("shape %s element %d"):format(table.concat(shape, "x"), i))
        end
      end
    end)

    it("random numbers read in part equal the same elements of the whole, on " .. b, function()
      for _, t in ipairs { "f32", "f64" } do
        local whole = lacc.run(lacc.random.uniform({ 1003 }, 77, t), { backend = b })
        local part = lacc.run(lacc.drop(5, lacc.random.uniform({ 1003 }, 77, t)), { backend = b })
        assert.are.equal(998, part:size())
        for i = 1, 998 do assert.are.equal(H.num(whole[i + 5]), H.num(part[i])) end
        local sl = lacc.run(lacc.slice(lacc.random.uniform({ 1003 }, 77, t), { { 2, 1003, 7 } }), { backend = b })
        for i = 1, sl:size() do assert.are.equal(H.num(whole[2 + 7 * (i - 1)]), H.num(sl[i])) end
        local src = lacc.random.uniform({ 1003 }, 77, t)
        local g = lacc.run(lacc.generate({ 50 }, function(i) return src[(i * 37) % 1003 + 1] end), { backend = b })
        for i = 1, 50 do assert.are.equal(H.num(whole[(i * 37) % 1003 + 1]), H.num(g[i])) end
      end
      -- integers, summed: every element once, exactly
      local d = lacc.run(lacc.random.integers({ 4099 }, 5, 1, 6), { backend = b })
      local s = 0
      for i = 1, 4099 do s = s + H.num(d[i]) end
      assert.are.equal(s, H.num(lacc.run(lacc.sum(lacc.random.integers({ 4099 }, 5, 1, 6)), { backend = b }):get()))
    end)

    it("two grouped producers in one program, each its own numbers, on " .. b, function()
      local x, y = lacc.random.uniform({ 1001 }, 1, "f32"), lacc.random.normal({ 1001 }, 2, "f32")
      local a1, a2 = lacc.run({ x, y }, { backend = b })
      local w1 = lacc.run(lacc.random.uniform({ 1001 }, 1, "f32"), { backend = b })
      local w2 = lacc.run(lacc.random.normal({ 1001 }, 2, "f32"), { backend = b })
      for i = 1, 1001 do
        assert.are.equal(H.num(w1[i]), H.num(a1[i]))
        assert.are.equal(H.num(w2[i]), H.num(a2[i]))
      end
    end)
  end

  it("explain names the grouped producer; a map without a shift of its index has none", function()
    local e = lacc.explain(lacc.random.uniform({ 100 }, 1, "f32"), { backend = "cpu" })
    assert.is_truthy(e:find("4 neighbouring elements an iteration", 1, true), e)
    e = lacc.explain(lacc.random.uniform({ 10, 10 }, 1), { backend = "cpu" })
    assert.is_truthy(e:find("2 neighbouring elements an iteration", 1, true), e)
    e = lacc.explain(lacc.generate({ 100 }, function(i) return i * 2 end), { backend = "cpu" })
    assert.is_falsy(e:find("neighbouring elements", 1, true), e)
  end)

  it("LACC_GROUPS=0 lowers the same program element by element, with the same numbers", function()
    local out = H.child([[
      local lacc = require "lacc"
      local a = lacc.run(lacc.random.uniform({ 103 }, 9, "f32"), { backend = "cpu" })
      local e = lacc.explain(lacc.random.uniform({ 103 }, 9, "f32"), { backend = "cpu" })
      local s = 0
      for i = 1, 103 do s = s + a[i] * i end
      io.write(string.format("%.9g %s", s, tostring(e:find("neighbouring", 1, true) ~= nil)))
    ]], "", "LACC_GROUPS=0")
    local a = lacc.run(lacc.random.uniform({ 103 }, 9, "f32"), { backend = "cpu" })
    local s = 0
    for i = 1, 103 do s = s + H.num(a[i]) * i end
    assert.are.equal(string.format("%.9g false", s), out)
  end)
end)
