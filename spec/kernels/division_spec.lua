-- Division by a float constant that is a power of two is compiled as a multiplication by
-- its exact reciprocal (core/kir/lower_scalar.c): the same number for every x. Checked
-- bit for bit (NaN, -0, infinities, subnormals) against the interpreter and against the
-- division Lua does in doubles, for constants whose reciprocal is exact, subnormal,
-- or not representable (those stay divisions).
local H = require "helper"
local lacc = H.lacc

local function same(a, b)
  if a ~= a then return b ~= b end
  return a == b and (a ~= 0 or 1 / a == 1 / b)
end

local f32 = H.f32

local xs = { 0, -0.0, 1, -1, 3, 1 / 3, 1e-40, -1e-45, 2 ^ -126, 3.4e38, -3.4e38,
             1 / 0, -1 / 0, 0 / 0, 123456.789, 2 ^ -149, 7 * 2 ^ -140 }
local cs = { 256, -256, 0.5, -0.25, 2 ^ -126, 2 ^ -127, 2 ^ 127, 2 ^ -149, 2 ^ -140, 3, 0.1, 1, -1 }

for _, b in ipairs(H.backends) do
  describe("division by a constant on " .. b, function()
    for _, t in ipairs { "f32", "f64" } do
      it("x / c equals the interpreter's for " .. t, function()
        local a = lacc.fromtable(xs, t)
        for _, c in ipairs(cs) do
          local p = lacc.map(function(x) return x / lacc.constant(c, t) end, a)
          local want = lacc.run(p, { backend = "interp" }):totable()
          local got = lacc.run(p, { backend = b }):totable()
          for i = 1, #xs do
            local lua = t == "f32" and f32(f32(xs[i]) / f32(c)) or xs[i] / c
            assert(same(got[i], want[i]), ("%s: %.17g / %.17g gives %.17g, interp %.17g")
              :format(t, xs[i], c, got[i], want[i]))
            assert(same(got[i], lua), ("%s: %.17g / %.17g gives %.17g, Lua %.17g")
              :format(t, xs[i], c, got[i], lua))
          end
        end
      end)
    end
  end)
end
