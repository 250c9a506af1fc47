local H = require "helper"
local lacc = H.lacc

describe("dot product", function()
  for _, backend in ipairs(H.backends) do
    it("matches a Lua loop on " .. backend, function()
      local xs, ys, ref = {}, {}, 0
      for i = 1, 101 do
        xs[i], ys[i] = H.rand(), H.rand()
        ref = ref + xs[i] * ys[i]
      end
      local r = lacc.run(lacc.sum(lacc.zipWith(function(a, b) return a * b end,
        lacc.fromtable(xs, "f64"), lacc.fromtable(ys, "f64"))), { backend = backend })
      assert.is_true(H.same(r:get(), ref, 1e-12))
    end)
  end
end)
