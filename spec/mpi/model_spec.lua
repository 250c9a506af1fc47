-- The scaling model (the guide's "Scaling model"): one process plays a rank of 64, 256 and
-- 1,024 over the simulated transport (lacc.mpi.simulate), which counts what the real one
-- would send; each program's messages and bytes per rank must equal the model's formulas
-- (spec/mpi/model.lua) exactly, at the ends and in the middle, and a fold's messages stay
-- within ceil(log2 P) a rank. No MPI runs here.
local H = require "helper"
local lacc = H.lacc
local model = require "mpi.model"

local sizes = { dot = 100, rows = 3, w = 16, keys = 50, bins = 256, turns = 2 }

describe("lacc.mpi scaling model (simulated ranks)", function()
  for _, P in ipairs { 64, 256, 1024, 3 } do
    it("messages and bytes per rank at P = " .. P .. " match the formulas", function()
      for _, name in ipairs(model.order) do
        for _, r in ipairs { 1, 2, math.max(1, math.floor(P / 2)), P - 1, P } do
          local msgs, bytes = model.simulate(lacc, name, P, r, sizes)
          local wm, wb = model.programs[name].formula(P, r, sizes)
          assert(msgs == wm and bytes == wb, ("%s, rank %d of %d: %d messages of %d bytes, the model says %d of %d")
            :format(name, r, P, msgs, bytes, wm, wb))
        end
      end
    end)
  end

  it("a fold sends at most ceil(log2 P) messages a rank, each of its partial (1 + 8 bytes)", function()
    for _, P in ipairs { 2, 3, 5, 64, 100, 1000, 1024 } do
      for r = 1, P, math.max(1, math.floor(P / 17)) do
        local msgs, bytes = model.simulate(lacc, "dot", P, r, sizes)
        assert(msgs <= model.ceil_log2(P), ("rank %d of %d: %d messages"):format(r, P, msgs))
        assert.are.equal(9 * msgs, bytes)
      end
    end
  end)

  it("simulate checks its arguments, and is not a run: its values are this rank's", function()
    for _, bad in ipairs { { 0, 1 }, { 4, 5 }, { 2.5, 1 } } do
      local ok, err = pcall(lacc.mpi.simulate, bad[1], bad[2])
      assert.is_false(ok)
      local want = ("mpi.simulate: expected a rank count P >= 1 and a rank from 1 to P, got %s and %s")
        :format(bad[1], bad[2])
      assert.are.equal(want, (tostring(err):gsub(" %(at [^)]*%)$", "")))
    end
    assert.are.same({ 3, 8 }, { lacc.mpi.simulate(8, 3) })
    assert.are.equal(3, lacc.mpi.rank())
    assert.are.equal(8, lacc.mpi.size())
    -- rank 3 of 8 holds rows 7-9 of 24 (0-based offset 6)
    local xs = lacc.run(lacc.mpi.generate({ 24 }, function(i) return i end))
    assert.are.same({ 3 }, xs:counts() and { xs:counts()[3] })
    assert.are.equal(6, xs:offset())
  end)
end)
