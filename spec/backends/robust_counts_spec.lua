-- Issue 25 (defects 6 and 9): element counts never wrap, and a long run can be stopped.
-- Counts: every element count is checked against 2^40 on every backend, fused producers
-- (which never allocate) included, with the interpreter's error. Stops: an error raised
-- by the progress callback, and a SIGINT, end a long run at its next chunk or launch.
local H = require "helper"
local lacc = H.lacc

local here = debug.getinfo(1, "S").short_src

local function i64(v) return lacc.constant(v, "i64") end

-- Wall-clock seconds (busted depends on luasystem; luasocket as a fallback).
local now
do
  local ok, system = pcall(require, "system")
  if ok and system.monotime then
    now = system.monotime
  else
    now = require("socket").gettime
  end
end

local function fails_with(p, b, frags)
  local ok, err = pcall(lacc.run, p, { backend = b })
  assert.is_false(ok, "expected an error, got " .. tostring(err))
  err = tostring(err)
  for _, f in ipairs(frags) do
    assert.is_truthy(err:find(f, 1, true), ("message %q lacks %q"):format(err, f))
  end
  return err
end

local function still_works(b)
  local xs = lacc.fromtable({ 1, 2, 3 }, "i32")
  H.check_array(lacc.run(lacc.map(function(x) return x * 2 + 1 end, xs), { backend = b }),
    { 3, 5, 7 })
end

describe("element counts past 2^40", function()
  -- Each builds a program whose counts wrapped past 2^64 (or ran for ever just past
  -- 2^40) on cpu and OpenCL; the interpreter, which allocates every array, refused them.
  local too_large = "array too large (more than 2^40 elements)"
  local cases = {
    { "concat of four 2^62-element generators and [1,2,3]", function()
      local parts = {}
      for k = 1, 4 do parts[k] = lacc.generate({ 2 ^ 62 }, function(i) return i + k end) end
      parts[5] = lacc.use(lacc.fromtable({ 1, 2, 3 }, "i64"))
      return lacc.concat(parts)
    end, "generate" },
    { "concat of four 2^62-element fills and [1,2,3]", function()
      local parts = {}
      for k = 1, 4 do parts[k] = lacc.fill({ 2 ^ 62 }, i64(k)) end
      parts[5] = lacc.use(lacc.fromtable({ 1, 2, 3 }, "i64"))
      return lacc.concat(parts)
    end, "generate" },
    { "sum of generate({2^32, 2^32}, 1)", function()
      return lacc.sum(lacc.generate({ 2 ^ 32, 2 ^ 32 }, function() return i64(1) end))
    end, "generate" },
    { "sum of fill({2^62}, 1)", function()
      return lacc.sum(lacc.fill({ 2 ^ 62 }, i64(1)))
    end, "generate" },
    { "sum of 2^40 + 1 generated elements", function()
      return lacc.sum(lacc.generate({ 2 ^ 40 + 1 }, function() return i64(1) end))
    end, "generate" },
    { "maximum of 2^40 + 2^20 elements over two dimensions", function()
      return lacc.maximum(lacc.flatten(lacc.generate({ 2 ^ 20 + 1, 2 ^ 20 }, function(i, j)
        return i + j
      end)))
    end, "generate" },
    { "a reshape to 2^32 x 2^32 (2^64 wraps to 0) of no elements", function()
      return lacc.reshape({ 2 ^ 32, 2 ^ 32 }, lacc.generate({ 0 }, function(i) return i end))
    end, "reshape" },
    { "a backpermute of 2^62 elements, summed", function()
      local xs = lacc.use(lacc.fromtable({ 1, 2, 3 }, "i64"))
      return lacc.sum(lacc.backpermute({ 2 ^ 62 }, function() return i64(0) end, xs))
    end, "backpermute" },
  }
  for _, b in ipairs(H.backends) do
    for _, c in ipairs(cases) do
      it(c[1] .. " is an error of " .. c[3] .. " on " .. b, function()
        local err = fails_with(c[2](), b, { c[3] .. ": " .. too_large, "(at " .. here .. ":" })
        assert.is_falsy(err:find("lacc[/\\][%w_]+%.lua"), err)
        still_works(b)
      end)
    end
  end
end)

-- A sum of n generated f64 elements, reading an input array (to check it stays intact).
local w = lacc.fromtable({ 0.5 }, "f64")
local function long_sum(n)
  local ws = lacc.use(w)
  return lacc.sum(lacc.generate({ n }, function(i) return lacc.cast(i, "f64") * ws[1] end))
end
local function sum_ref(n) return 0.5 * n * (n + 1) / 2 end   -- indices from 1

describe("an error raised by the progress callback", function()
  for _, b in ipairs(H.backends) do
    if b ~= "interp" then   -- the interpreter reports no progress
      it("stops a long run quickly on " .. b, function()
        local opts = { backend = b }
        H.check_array(lacc.run(long_sum(1000), opts), { sum_ref(1000) })   -- built, warm
        -- how long the long run would take: a 256th of it, timed
        local small = 2 ^ 26
        local t0 = now()
        lacc.run(long_sum(small), opts)
        local full = (now() - t0) * 256
        local calls = 0
        t0 = now()
        local ok, err = pcall(lacc.run, long_sum(small * 256), {
          backend = b, progress_after = 0.05,
          progress = function() calls = calls + 1; error("enough, said the callback") end,
        })
        local took = now() - t0
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("enough, said the callback", 1, true), tostring(err))
        assert.are.equal(1, calls)
        assert.is_true(took < 2 and took < full / 4,
          ("stopped after %.2f s of a run of about %.1f s"):format(took, full))
        -- the input is intact, and the next run (on every backend) is right
        H.check_array(w, { 0.5 })
        H.check_array(lacc.run(long_sum(100000), opts), { sum_ref(100000) })
        still_works(b)
      end)
    end
  end
end)

describe("SIGINT during a long run", function()
  local lua = H.vm
  local asan = os.getenv("ASAN_OPTIONS")   -- as in opencl_spec: no leak checks in children
  if asan then lua = ("ASAN_OPTIONS='%s:detect_leaks=0' %s"):format(asan, lua) end
  -- The child builds its program, warms it up, then has a shell send it SIGINT in 0.5 s
  -- and starts a run that would take minutes (2^40 elements; on the interpreter, which
  -- materialises arrays, 2^20 elements of 2^12 iterations each). The host's own handler
  -- (lua's "interrupted!") still runs, so either message may end the child.
  local child = [[
local lacc = require "lacc"
local b = arg[1]
local function prog(n)
  if b == "interp" then
    return lacc.sum(lacc.generate({ n }, function(i)
      return lacc.iterate(4096, function(x) return x * 0.5 + 1 end, lacc.cast(i, "f64"))
    end))
  end
  return lacc.sum(lacc.generate({ n }, function(i) return lacc.cast(i, "f64") * 0.5 end))
end
lacc.run(prog(1000), { backend = b })
local pid = io.open("/proc/self/stat"):read("*l"):match("^(%d+)")
os.execute("(sleep 0.5; kill -INT " .. pid .. ") &")
local ok, err = pcall(lacc.run, prog(b == "interp" and 2 ^ 20 or 2 ^ 40), { backend = b })
io.write(ok and "RUN COMPLETED\n" or ("run failed: " .. tostring(err) .. "\n"))
]]
  local path = os.tmpname()
  setup(function()
    local f = assert(io.open(path, "w"))
    f:write(child)
    f:close()
  end)
  teardown(function() os.remove(path) end)

  for _, b in ipairs(H.backends) do
    it("ends the run promptly with an interrupted error on " .. b, function()
      local t0 = now()
      local h = io.popen(("timeout 60 env %s %s %s 2>&1; echo \"exit $?\""):format(lua, path, b))
      local out = h:read("a") or h:read("*a")
      h:close()
      local took = now() - t0
      assert.is_falsy(out:find("RUN COMPLETED", 1, true), out)
      assert.is_falsy(out:find("exit 124", 1, true), "the child ran past 60 s: " .. out)
      assert.is_truthy(out:find("interrupted", 1, true), out)
      assert.is_true(took < 30, ("the child took %.1f s: %s"):format(took, out))
    end)
  end
end)
