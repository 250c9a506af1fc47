-- Progress of long runs (issue 8): lacc.run(p, {progress = f, progress_after = s}) and
-- lacc.compile(fn, {progress = f}) call f with the share of the run done, on the
-- running thread, on the cpu and opencl backends; the interpreter does not report.
local H = require "helper"
local lacc = H.lacc

-- Enough work that a run has several chunks: 300 loop steps for each of 400001 elements.
-- (The interpreter gets 1001 elements: it does not report, and would take minutes.)
local function program(n)
  local xs = lacc.generate({ n }, function(i) return lacc.cast(i, "f64") end)
  return xs, lacc.map(function(v)
    return lacc.while_(function(x) return lacc.lt(x, v + 300) end, function(x) return x + 1 end, v)
  end, xs)
end

for _, backend in ipairs(H.backends) do
  local n = backend == "interp" and 1001 or 400001
  local xs, slow = program(n)
  describe("progress on " .. backend, function()
    it("reports a growing share of the run, ending at 1, and the results are right", function()
      local seen = {}
      local r = lacc.run(slow, { backend = backend, progress_after = 0,
                                 progress = function(f) seen[#seen + 1] = f end })
      for _, i in ipairs { 1, 2, 777, n } do assert.are.equal(i + 300, H.num(r:get(i))) end
      if backend == "interp" then
        assert.are.equal(0, #seen)
        return
      end
      assert.is_true(#seen >= 2)
      for k = 1, #seen do
        assert.is_true(seen[k] >= 0 and seen[k] <= 1, tostring(seen[k]))
        if k > 1 then assert.is_true(seen[k] >= seen[k - 1]) end
      end
      assert.are.equal(1, seen[#seen])
    end)

    it("says nothing for a run shorter than progress_after", function()
      local calls = 0
      lacc.run(lacc.map(function(v) return v + 1 end, xs),
               { backend = backend, progress_after = 1000, progress = function() calls = calls + 1 end })
      assert.are.equal(0, calls)
    end)

    it("raises the callback's error after the run, and keeps working", function()
      if backend == "interp" then return end
      local ok, err = pcall(lacc.run, slow, { backend = backend, progress_after = 0,
                                              progress = function() error("enough progress") end })
      assert.is_false(ok)
      assert.truthy(tostring(err):find("enough progress", 1, true), err)
      assert.are.equal(n * (n + 1) / 2, H.num(lacc.run(lacc.sum(xs), { backend = backend }):get()))
      -- and the callback is gone
      local r = lacc.run(lacc.map(function(v) return v * 2 end, xs), { backend = backend })
      assert.are.equal(6, H.num(r:get(3)))
    end)

    it("reports for compiled functions too", function()
      local seen = 0
      local f = lacc.compile(function(a) return lacc.map(function(v) return v * 3 end, a) end,
                             { backend = backend, progress_after = 0, progress = function() seen = seen + 1 end })
      local host = lacc.run(lacc.generate({ 1000 }, function(i) return lacc.cast(i, "i32") end))
      assert.are.equal(30, H.num(f(host):get(10)))
      if backend ~= "interp" then assert.is_true(seen >= 1) end
    end)
  end)
end

describe("progress options", function()
  local xs = program(10)
  it("must be a function and a number", function()
    local ok, err = pcall(lacc.run, xs, { progress = 3 })
    assert.is_false(ok)
    assert.truthy(err:find("progress must be a function", 1, true), err)
    ok, err = pcall(lacc.run, xs, { progress = print, progress_after = "soon" })
    assert.is_false(ok)
    assert.truthy(err:find("progress_after must be a number", 1, true), err)
  end)
end)
