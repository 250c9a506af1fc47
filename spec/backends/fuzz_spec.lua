-- Differential fuzzing (issue 9): random well-typed programs (tools/fuzz.lua) run on the
-- reference interpreter and on the cpu backend (and, for some, through lacc.compile, on
-- the fast tier and with fusion or sharing switched off) must agree exactly, or fail with
-- the same error.
-- A fixed seed and a few programs keep this short (most of the time is compiling new
-- kernels, about 0.1 s each with a cold cache); `lua5.4 tools/fuzz_main.lua [seconds]
-- [seed]` runs the same generator for longer.
local fuzz = dofile("tools/fuzz.lua")

local SEED, PROGRAMS, DSEED, DIFFERENTIATED = 1, 40, 9, 40

local function report(res)
  if #res.failures > 0 then
    local lines = { ("%d of %d programs disagree (replay one with `lua5.4 tools/fuzz_main.lua replay SEED`):")
                      :format(#res.failures, res.programs) }
    for i, f in ipairs(res.failures) do
      lines[#lines + 1] = ("\nfailure %d (program seed %d): %s\n%s"):format(i, f.seed, f.message, f.description)
    end
    error(table.concat(lines, "\n"), 0)
  end
end

describe("differential fuzzing, interp against cpu", function()
  it(("agrees on %d random programs (seed %d)"):format(PROGRAMS, SEED), function()
    local res = fuzz.run { seed = SEED, programs = PROGRAMS }
    assert.are.equal(PROGRAMS, res.programs)
    report(res)
  end)

  -- the share of programs differentiated with respect to their float inputs: the
  -- pullback against the tangents by the dot-product test <u, jvp(v)> = <vjp(u), v>
  it(("differentiates its float programs: the dot-product test (seed %d)"):format(DSEED), function()
    local before = fuzz.stats.nonzero
    local res = fuzz.run { seed = DSEED, programs = DIFFERENTIATED, differentiated = true }
    assert.are.equal(DIFFERENTIATED, res.programs)
    report(res)
    -- not vacuous: programs whose derivative is not zero were compared (a tangent scaled
    -- by 1.01 in the map rule fails 2 of them)
    assert.is_true(fuzz.stats.nonzero - before >= 4,
      ("only %d of the programs had a derivative to compare"):format(fuzz.stats.nonzero - before))
  end)
end)
