-- Hostile input, round 3 (issue 49): loops nested past the depth limit, pointers that
-- are not addresses, fork and SIGTERM around background builds, a fast compiler that
-- hangs, progress callbacks that run programs, bool bytes written through a pointer, and
-- contractions whose iteration space is past 2^40. Each scenario that crashed or hung
-- runs in a child process under a time limit, so that it fails its test instead of
-- ending or stalling busted. The references are plain Lua values and loops.
local H = require "helper"
local lacc = H.lacc

local luajit = type(jit) == "table"
local asan = os.getenv("ASAN_OPTIONS")
local env = asan and ("ASAN_OPTIONS='%s:detect_leaks=0' "):format(asan) or ""
-- H.sh runs tools without the sanitizers; a child of this VM needs them back
local preload = os.getenv("LD_PRELOAD")
local child_env = env .. (preload and ("LD_PRELOAD=%s "):format(H.quote(preload)) or "")

-- source in a child of this VM (H.child) with the given environment words
local function child(source, vars, limit) return H.child(source, nil, vars, limit or 120) end

local tmpdir = H.tmpdir

local function files_under(dir)
  local out = H.sh("find " .. H.quote(dir) .. " -mindepth 1 | sort")
  return out
end

-- A loop whose body holds a loop, d deep; every condition is false at once, so each
-- level leaves its array as it is.
local nest_script = [[
local lacc = require "lacc"
local backend, d = arg[1], tonumber(arg[2])
local function cond(a) return lacc.lt(lacc.the(lacc.sum(a)), 0) end
local function build(k, a)
  if k == 0 then return a end
  return lacc.awhile(cond, function(x) return lacc.map(function(v) return v + 1 end, build(k - 1, x)) end, a)
end
local ok, r = pcall(function()
  return lacc.run(build(d, lacc.fromtable({ 1, 2, 3 }, "f64")), { backend = backend }):totable()
end)
print(ok and ("ok " .. table.concat(r, ",")) or ("error " .. tostring(r)))
]]

describe("hostile input, round 3", function()
  for _, b in ipairs(H.backends) do
    it("refuses loops nested in loop bodies past the depth limit on " .. b .. " (no crash)", function()
      local src = nest_script:gsub("arg%[1%], tonumber%(arg%[2%]%)", function() return ("%q, %%d"):format(b) end)
      local deeper = ("expression deeper than %d levels"):format(lacc.limits.depth)
      for _, d in ipairs { 20000, 1200 } do
        local out, status = child(src:format(d))
        assert.are.equal(0, status, out)
        -- 20000 levels of Lua functions may end LuaJIT's own stack first: an error too
        assert.truthy(out:find("error ", 1, true) and (out:find(deeper, 1, true) or
                      (d == 20000 and out:find("stack overflow", 1, true))), out)
      end
      -- just under the limit (each level is a loop and a map): runs, the array unchanged
      local out, status = child(src:format(990))
      assert.are.equal(0, status, out)
      assert.truthy(out:find("ok 1.0,2.0,3.0", 1, true) or out:find("ok 1,2,3", 1, true), out)
    end)
  end

  it("refuses a NULL or integer pointer in fromptr (LuaJIT)", function()
    if not luajit then
      local ok, err = pcall(lacc.fromptr, 0, "f64", { 4 })
      assert.is_false(ok)
      assert.truthy(tostring(err):find("fromptr: needs LuaJIT's FFI", 1, true), err)
      return
    end
    local ffi = require "ffi"
    local cases = {
      { ffi.cast("double *", nil), "the pointer is NULL" },
      { ffi.cast("double *", 16), "the pointer is NULL or not an address" },
      { ffi.new("int64_t", 12345), "expected an FFI pointer, got a ctype<int64_t>" },
      { ffi.new("uint64_t", 4096), "expected an FFI pointer" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(lacc.fromptr, c[1], "f64", { 4 })
      assert.is_false(ok)
      assert.truthy(tostring(err):find("fromptr: " .. c[2], 1, true), tostring(err))
    end
    -- an empty array needs no data; a real buffer and an array cdata are copied
    assert.are.same({ 0 }, lacc.fromptr(ffi.cast("double *", nil), "f64", { 0 }):shape())
    local buf = ffi.new("double[3]", { 1.5, -2, 7 })
    assert.are.same({ 1.5, -2, 7 }, lacc.fromptr(buf, "f64", { 3 }):totable())
    assert.are.same({ 1.5, -2, 7 }, lacc.fromptr(ffi.cast("double *", buf), "f64", { 3 }):totable())
  end)

  -- Lua 5.4 has no fork, and writes bools only through set and frombytes (which check)
  if luajit then it("a forked child runs large programs while its parent's background build is under way (LuaJIT)", function()
    local cache = tmpdir()
    local out, status = child([[
local lacc = require "lacc"
lacc.config{ tier = "auto" }
local ffi = require "ffi"
ffi.cdef[[int fork(void); int waitpid(int, int *, int); void _exit(int);]] .. "]]" .. [[
local f = lacc.compile(function(a) return lacc.sum(lacc.map(function(v) return v * 3 + 1 end, a)) end)
print("parent", f(lacc.fromtable({ 1, 2, 3 }, "f64")):get())   -- starts the cc build
io.stdout:flush()
-- AddressSanitizer's allocator is not fork-safe (glibc's is): under it the fork waits for
-- the build, every thread idle (test_core.c does the same)
if os.getenv("ASAN_OPTIONS") then
  ffi.cdef("int usleep(unsigned);")
  for _ = 1, 6000 do
    local t = lacc.tiers()
    if t.builds + t.failed > 0 then break end
    ffi.C.usleep(10000)
  end
end
local pid = ffi.C.fork()
if pid == 0 then
  local n = 3000000
  local big = lacc.run(lacc.generate({ n }, function(i) return lacc.cast(i, "f64") end))
  io.stdout:write("child ", string.format("%.0f", f(big):get()), "\n")
  io.stdout:flush()
  os.exit(0)
end
local st = ffi.new("int[1]")
ffi.C.waitpid(pid, st, 0)
print("child status", st[0])
]], ("LACC_TIER=auto LACC_CACHE=%s "):format(H.quote(cache)), 60)
    H.sh("rm -rf " .. H.quote(cache))
    assert.are.equal(0, status, out)
    local n = 3000000
    assert.truthy(out:find(("child %.0f"):format(3 * n * (n + 1) / 2 + n), 1, true), out)
    assert.truthy(out:find("child status\t0", 1, true), out)
  end) end

  it("a fast-tier compiler that hangs costs its own short limit, then the interpreter runs", function()
    local dir = tmpdir()
    local hang = dir .. "/hangcc"
    H.script(hang, "#!/bin/sh\nsleep 300\n")
    local t0 = os.time()
    local out, status = child([[
local lacc = require "lacc"
lacc.config{ tier = "fast" }
local xs = lacc.generate({ 20000 }, function(i) return lacc.cast(i, "i64") end)
print("sum", lacc.run(lacc.sum(lacc.map(function(v) return v * 2 end, xs)), { backend = "cpu" }):get())

]], ("LACC_VERBOSE=1 LACC_TIER=fast LACC_FAST_CC=%s LACC_FAST_CC_TIMEOUT=1 LACC_CACHE=%s "):format(
      H.quote(hang), H.quote(dir .. "/cache")), 60)
    local took = os.time() - t0
    H.sh("rm -rf " .. H.quote(dir))
    assert.are.equal(0, status, out)
    assert.truthy(out:find("sum\t400020000", 1, true), out)
    assert.truthy(out:find("the C compiler of the fast tier (LACC_FAST_CC) did not finish within 1 s " ..
                           "(LACC_FAST_CC_TIMEOUT)", 1, true), out)
    assert.is_true(took < 30, "took " .. took .. " s")
  end)

  it("SIGTERM during a background build leaves no directory and no claim", function()
    local dir = tmpdir()
    local slow = dir .. "/slowcc"
    H.script(slow, '#!/bin/sh\ncase "$1" in --version) exec cc --version;; esac\nsleep 300\nexec cc "$@"\n')
    H.sh("mkdir -p " .. H.quote(dir .. "/tmp"))
    -- the child starts a build, says so, then waits to be ended
    local script = dir .. "/term.lua"
    local f = assert(io.open(script, "w"))
    f:write([[
local lacc = require "lacc"
lacc.config{ tier = "auto" }
local xs = lacc.fromtable({ 1, 2, 3 }, "f64")
print(lacc.run(lacc.sum(lacc.map(function(v) return v * 7 end, xs))):get())
io.stdout:flush()
while true do end
]])
    f:close()
    local out = H.sh(("cd %s && (env %s TMPDIR=%s LACC_TIER=auto LACC_CC=%s LACC_CACHE=%s %s %s > out.txt 2>&1 & " ..
      "pid=$!; for i in $(seq 100); do ls tmp | grep -q lacc- && ls cache | grep -q building && break; sleep 0.1; done; " ..
      "ls tmp cache > during.txt; kill -TERM $pid; wait $pid; echo \"status=$?\"; sleep 0.2)"):format(
      H.quote(dir), child_env, H.quote(dir .. "/tmp"), H.quote(slow), H.quote(dir .. "/cache"), H.vm, H.quote(script)))
    local during = H.sh("cat " .. H.quote(dir .. "/during.txt"))
    local left_tmp, left_cache = files_under(dir .. "/tmp"), H.sh("ls " .. H.quote(dir .. "/cache"))
    local slow_left = H.sh("pgrep -f " .. H.quote("^/bin/sh " .. slow) .. " || true")
    H.sh("rm -rf " .. H.quote(dir))
    assert.truthy(out:find("status=143", 1, true), out)
    assert.truthy(during:find("lacc%-") and during:find("%.building"), during)
    assert.are.equal("", left_tmp)
    assert.falsy(left_cache:find("building", 1, true), left_cache)
    assert.are.equal("", slow_left)
  end)

  for _, b in ipairs(H.backends) do
    if b ~= "interp" then
      it("a progress callback may run programs on " .. b .. ": no recursion, the outer run's calls go on", function()
        local n = 400001
        local xs = lacc.generate({ n }, function(i) return lacc.cast(i, "f64") end)
        local slow = lacc.map(function(v)
          return lacc.while_(function(x) return lacc.lt(x, v + 300) end, function(x) return x + 1 end, v)
        end, xs)
        local small = lacc.sum(lacc.fromtable({ 1, 2, 3 }, "f64"))
        local seen, inner, depth, deepest = {}, 0, 0, 0
        local r = lacc.run(slow, { backend = b, progress_after = 0, progress = function(f)
          depth = depth + 1
          deepest = math.max(deepest, depth)
          seen[#seen + 1] = f
          if depth == 1 then
            assert.are.equal(6, H.num(lacc.run(small, { backend = b }):get()))
            lacc.run(small, { backend = b, progress_after = 0, progress = function() inner = inner + 1 end })
          end
          depth = depth - 1
        end })
        assert.are.equal(305, H.num(r:get(5)))
        assert.are.equal(1, deepest)
        assert.are.equal(0, inner)
        assert.is_true(#seen >= 2)
        assert.are.equal(1, seen[#seen])
      end)
    end
  end

  if luajit then it("bool bytes other than 0 and 1 written through ptr() read as true on every backend (LuaJIT)", function()
    local ffi = require "ffi"
    local bs = lacc.fromtable({ true, false, true, true, false }, "bool")
    local p = ffi.cast("uint8_t *", bs:ptr())
    p[0], p[2], p[3] = 3, 255, 2
    for _, b in ipairs(H.backends) do
      local count = lacc.run(lacc.sum(lacc.map(function(x) return lacc.cast(x, "i32") end, bs)), { backend = b })
      assert.are.equal(3, H.num(count:get()), b)
      local eq = lacc.run(lacc.map(function(x) return lacc.eq(x, true) end, bs), { backend = b })
      assert.are.same({ true, false, true, true, false }, eq:totable(), b)
      local nots = lacc.run(lacc.map(function(x) return lacc.lnot(x) end, bs), { backend = b })
      assert.are.same({ false, true, false, false, true }, nots:totable(), b)
    end
  end) end

  for _, b in ipairs(H.backends) do
    if b ~= "interp" then   -- the interpreter materialises a contraction's products
      it("counts a contraction's iteration space, not an array, on " .. b, function()
        -- 2^10 x 2^21 times 2^21 x 2^10: 2^41 products, past 2^40 in all, while each
        -- operand, each row and the result are in bounds; the run gets under way (a
        -- progress callback stops it once some of the work is done) instead of being
        -- refused. (Host operands of 10400 x 10400 take 0.9 GB: the same lowering.)
        local a = lacc.generate({ 2 ^ 10, 2 ^ 21 }, function(i, k) return lacc.cast(lacc.imod(i + k, 7), "f32") end)
        local v = lacc.generate({ 2 ^ 21, 2 ^ 10 }, function() return lacc.constant(1, "f32") end)
        local ok, err = pcall(lacc.run, lacc.matmul(a, v), { backend = b, progress_after = 0,
                                                             progress = function(f)
                                                               if f > 0 and f < 1 then error("stopped here") end
                                                             end })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("stopped here", 1, true), tostring(err))
        -- still refused: a row or a result past 2^40, and a single row past it
        for _, p in ipairs {
          lacc.sum(lacc.generate({ 2 ^ 41, 2 }, function(i) return i end)),
          lacc.sum(lacc.fill({ 2 ^ 62 }, lacc.constant(1, "i32"))),
          lacc.sum(lacc.generate({ 2, 2 ^ 41 }, function(i) return i end)),
        } do
          ok, err = pcall(lacc.run, p, { backend = b })
          assert.is_false(ok)
          assert.truthy(tostring(err):find("array too large (more than 2^40 elements)", 1, true), tostring(err))
        end
        -- a small contraction is still right
        local m = lacc.fromtable({ { 1, 2 }, { 3, 4 } }, "f64")
        assert.are.same({ { 7, 10 }, { 15, 22 } }, lacc.run(lacc.matmul(m, m), { backend = b }):totable())
      end)
    end
  end
end)
