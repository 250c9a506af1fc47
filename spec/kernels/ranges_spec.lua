-- Range tests made one comparison (core/kir/ranges.c): a check 0 <= x < n left in a
-- kernel becomes x <u n, and a 1-based index of a narrow type (`ys[i] + 1` in i8, i16,
-- i32, u8, u16) is tested and used without its sum, whose wrap at the type's end decides
-- what happens. Every case against plain Lua loops, and every failure against the
-- interpreter's message.
local H = require "helper"
local lacc = H.lacc

local function add(a, b) return a + b end

-- The sum x + 1 in a `bits`-bit integer type, as lacc computes it (wrapping).
local function wrap(x, bits, signed)
  local m = 2 ^ bits   -- exact in a double for bits <= 32
  local v = (x + 1) % m
  if signed and v >= m / 2 then v = v - m end
  return v
end

-- Histogram of 1-based targets t (0 drops, outside 1..bins: nil = an error).
local function ref_hist(ts, bins)
  local out = {}
  for b = 1, bins do out[b] = 0 end
  for _, t in ipairs(ts) do
    if t ~= 0 then
      if t < 1 or t > bins then return nil end
      out[t] = out[t] + 1
    end
  end
  return out
end

local function message(f)
  local ok, err = pcall(f)
  assert.is_false(ok)
  return tostring(err)
end

-- p's result is want, or (want nil) p fails on backend opts with the interpreter's message.
local function check(p, opts, want)
  if want then
    H.check_array(lacc.run(p, opts), want)
  else
    assert.are.equal(message(function() lacc.run(p, { backend = "interp" }) end),
                     message(function() lacc.run(p, opts) end))
  end
end

local types = {
  { "i8", 8, true }, { "i16", 16, true }, { "i32", 32, true },
  { "u8", 8, false }, { "u16", 16, false },
}

for _, b in ipairs(H.backends) do
  describe("range tests on " .. b, function()
    local opts = { backend = b }

    -- Enough elements for the cpu backend's private copies (two threads or more), and
    -- few, so that each path runs.
    for _, ty in ipairs(types) do
      local name, bits, signed = ty[1], ty[2], ty[3]
      local lo = signed and -(2 ^ (bits - 1)) or 0
      local hi = signed and 2 ^ (bits - 1) - 1 or 2 ^ bits - 1
      it("a histogram of " .. name .. " data through `x + 1` at the type's ends", function()
        H.seed(bits)
        for _, n in ipairs { 0, 1, 9, 20000 } do
          -- more bins than the type's top: the wrap, not the bins, decides
          for _, bins in ipairs { 1, 7, 100, 300, bits == 16 and 70000 or 2 } do
            local data = {}
            for k = 1, n do data[k] = H.randint(0, bins - 1) end
            -- x = -1: the sum is 0, dropped; the type's top: the sum wraps (signed: to
            -- the bottom, an error; unsigned: to 0, dropped)
            for _, extra in ipairs { { -1 }, { hi }, { lo }, { bins - 1 }, { bins } } do
              local x = extra[1]
              if x >= lo and x <= hi and n > 0 then
                local d = {}
                for k = 1, n do d[k] = data[k] end
                d[math.floor((n + 1) / 2)] = x
                local ts = {}
                for k = 1, n do ts[k] = wrap(d[k], bits, signed) end
                local xs = lacc.fromtable(d, name)
                local p = lacc.permute(add, lacc.fill({ bins }, lacc.constant(0, "i32")),
                  function(i) return xs[i] + 1 end,
                  lacc.map(function() return lacc.constant(1, "i32") end, xs))
                check(p, opts, ref_hist(ts, bins))
              end
            end
          end
        end
      end)

      it("a gather of " .. name .. " indices through `x + 1` at the type's ends", function()
        local src = {}
        for k = 1, 50 do src[k] = k * 10 end
        local s = lacc.fromtable(src, "i32")
        for _, x in ipairs { 0, 49, 50, -1, -2, lo, hi } do
          if x >= lo and x <= hi then
            local ix = lacc.fromtable({ 3, x, 7 }, name)
            local p = lacc.map(function(v) return s[v + 1] end, ix)
            local t = wrap(x, bits, signed)
            check(p, opts, t >= 1 and t <= 50 and { 40, src[t], 80 } or nil)
          end
        end
      end)
    end

    it("a range test on an index that no sum feeds (i64 data, negative and past the end)", function()
      local src = lacc.fromtable({ 5, 6, 7 }, "i32")
      for _, x in ipairs { 1, 3, 0, 4, -1, math.mininteger, math.maxinteger } do
        local ix = lacc.fromtable({ 2, x }, "i64")
        local p = lacc.map(function(v) return src[v] end, ix)
        check(p, opts, x >= 1 and x <= 3 and { 6, ({ 5, 6, 7 })[x] } or nil)
        if x < 1 or x > 3 then   -- the message names the index as given, the ends too
          local want = ("index (%s) out of bounds for shape (3)"):format(tostring(x))
          local got = message(function() lacc.run(p, opts) end)
          assert.truthy(got:find(want, 1, true), got)
        end
      end
    end)
  end)
end
