-- The cpu backend's tiers (LACC_TIER, lacc.config{tier}): every tier gives the
-- interpreter's results; under auto a new program starts on the interpreter (small runs)
-- or the fast tier's kernels (tcc) and switches to the optimised build between runs, once
-- cc has built it in the background; a failing background build leaves the fast tier
-- running; a process that ends while a build runs exits cleanly and leaves no files.
local H = require "helper"
local lacc = H.lacc

local sh, quote = H.sh, H.quote
local function tmpdir() return (sh("mktemp -d"):gsub("%s+$", "")) end

-- Settings changed by a test, put back after it (they are process-wide).
local saved
local function set(t)
  local now = lacc.config()
  for k, v in pairs(t) do
    if saved[k] == nil then saved[k] = tostring(now[k]) end
    lacc.config { [k] = v }
  end
end
before_each(function() saved = {} end)
after_each(function()
  for k, v in pairs(saved) do lacc.config { [k] = v } end
end)

local function counts() return lacc.tiers() end
-- A Lua script for a child process, in a file of its own (os.remove it when done).
local function script_file(text)
  local path = os.tmpname()
  local fh = assert(io.open(path, "w"))
  fh:write(text)
  fh:close()
  return path
end
-- Where tcc is missing (tools/deps.sh installs it), the fast tier is the interpreter.
local have_tcc = (os.getenv("LACC_FAST_CC") or "") == "" and sh("command -v tcc"):find("tcc") ~= nil
local first_tier = have_tcc and "fast" or "interp"
local function delta(a, b, k) return b[k] - a[k] end

-- A program that no other spec builds, of a random shape: a chain of `len` operations
-- and a constant shift count (written into the kernel, so its source is new).
local salt = os.time() % 100000
local made = 0
local function fresh_map()
  made = made + 1
  local len, shift = 3 + (salt + made) % 17, 1 + (salt * 7 + made) % 29
  local f = function(x)
    local y = x
    for i = 1, len do y = y * 3 + i end
    return y + lacc.shr(x, shift)
  end
  local ref = function(x)
    local y = x
    for i = 1, len do y = (y * 3 + i) % 4294967296 end
    return (y + math.floor(x / 2 ^ shift)) % 4294967296
  end
  return f, ref
end
local function u32s(n)
  local t = {}
  for i = 1, n do t[i] = (i * 2654435761) % 4294967296 end
  return t
end
local function check_map(f, ref, xs, r)
  local out = r:totable()
  assert.are.equal(#xs, #out)
  for i = 1, #xs do
    if out[i] ~= ref(xs[i]) then
      error(("element %d: got %s, expected %s"):format(i, tostring(out[i]), tostring(ref(xs[i]))))
    end
  end
end

-- The command that runs a Lua script in a child process with `vars` (VAR=value ...) and
-- LACC_TIER=tier; under make check-asan the child gets the sanitizers back (sh drops
-- them), leak checking included.
local function child(vars, tier, script)
  local preload = os.getenv("LD_PRELOAD")
  return ("env %s %s%s %s"):format(vars, preload and ("LD_PRELOAD=" .. quote(preload) .. " ") or "",
    (H.vm:gsub("^env ", ""):gsub("LACC_TIER=%S+", "LACC_TIER=" .. tier)), quote(script))
end

-- Runs fn until cond() holds or `seconds` pass; whether it held.
local function until_(cond, seconds, fn)
  local t0 = os.time()
  repeat
    fn()
    if cond() then return true end
    sh("sleep 0.05")
  until os.time() - t0 > seconds
  return cond()
end

describe("tiers #opt", function()
  it("lacc.config{tier} takes auto, fast and opt, and nothing else", function()
    set { tier = "fast" }
    assert.are.equal("fast", lacc.config().tier)
    set { tier = "auto" }
    assert.are.equal("auto", lacc.config().tier)
    local ok, err = pcall(lacc.config, { tier = "quick" })
    assert.is_false(ok)
    assert.matches('config: tier: expected "auto", "fast" or "opt", got quick', err, 1, true)
    local t = lacc.tiers()
    for _, k in ipairs { "interp", "fast", "opt", "fast_builds", "builds", "failed" } do
      assert.are.equal("number", type(t[k]), k)
    end
  end)

  it("fast: the fast tier's kernels give the interpreter's results (maps, folds, scans, a " ..
     "permute onto many targets, loops, stencils)", function()
    set { tier = "fast" }
    local n = 70007
    local xs = lacc.generate({ n }, function(i) return lacc.cast(i * 7919 % 100003, "i64") end)
    xs = lacc.run(xs, { backend = "interp" })
    local programs = {
      function() return lacc.map(function(x) return x * x - 3 * x end, xs) end,
      function() return lacc.sum(lacc.reshape({ 7, 10001 }, xs), 1) end,
      function() return lacc.scanl(function(a, b) return a + b end, 0, xs) end,
      function()   -- a histogram onto 100000 bins: the parallel compare-and-swap path under opt
        local zeros = lacc.fill({ 100000 }, lacc.constant(0, "i64"))
        return lacc.permute(function(a, b) return a + b end, zeros,
          function(i) return xs[i] % 100000 + 1 end, lacc.map(function(x) return x % 7 end, xs))
      end,
      function()
        return lacc.awhile(function(v)
            return lacc.map(function(t) return lacc.gt(t, 1e9) end, lacc.sum(v))
          end,
          function(v) return lacc.map(function(x) return lacc.idiv(x, 2) end, v) end, xs)
      end,
      function()
        return lacc.stencil(function(a, b, c) return a - 2 * b + c end, "clamp", xs)
      end,
    }
    local before = counts()
    for i, p in ipairs(programs) do
      local want = lacc.run(p(), { backend = "interp" }):totable()
      local got = lacc.run(p(), { backend = "cpu" }):totable()
      assert.are.same(want, got, "program " .. i)
    end
    local after = counts()
    assert.are.equal(#programs, delta(before, after, first_tier), "every run on " .. first_tier)
    assert.are.equal(0, delta(before, after, "opt"))
    assert.are.equal(0, delta(before, after, "builds"))
  end)

  it("fast: the fast tier's kernels are kept in the disk cache, where the next process " ..
     "finds them (no second build, the same results), and processes that start together " ..
     "build each once", function()
    local cache = tmpdir()
    local k = salt + 41
    local script = script_file(([[
      local lacc = require "lacc"
      local xs = {}
      for i = 1, 5000 do xs[i] = (i * 2654435761) %% 4294967296 end
      local r = lacc.run(lacc.map(function(x) return x * 3 + lacc.shr(x, %d) end,
        lacc.fromtable(xs, "u32"))):totable()
      for i = 1, #xs do
        local want = (xs[i] * 3 + math.floor(xs[i] / 2 ^ %d)) %% 4294967296
        assert(r[i] == want, "element " .. i)
      end
      io.write("same ", lacc.tiers().fast, "\n")
    ]]):format(k % 29 + 1, k % 29 + 1))
    local run = child(("LACC_VERBOSE=1 LACC_CACHE=%s"):format(quote(cache)), "fast", script)
    local function builds(out) return select(2, out:gsub("compiled kernels [^\n]*the fast tier's", "")) end
    local first = sh(run)
    if not have_tcc then   -- the fast tier is the interpreter: nothing built, nothing kept
      assert.matches("same 0\n$", first)
      assert.are.equal("secret\n", sh("ls " .. quote(cache)))
      os.remove(script)
      os.execute("rm -rf " .. quote(cache))
      return
    end
    assert.matches("same 1\n$", first)
    assert.are.equal(1, builds(first), first)
    assert.are.equal(1, select(2, sh("ls " .. quote(cache)):gsub("%.kso%s", "")))
    local second = sh(run)
    assert.matches("same 1\n$", second)
    assert.are.equal(0, builds(second), second)
    -- two processes at once on an empty cache: one builds, the other waits for its file
    os.execute("rm -rf " .. quote(cache) .. "/*")
    local both = sh(("{ (%s) & (%s); wait; }"):format(run, run))
    assert.are.equal(2, select(2, both:gsub("same 1\n", "")), both)
    assert.are.equal(1, builds(both), both)
    os.remove(script)
    os.execute("rm -rf " .. quote(cache))
  end)

  it("opt: the optimised kernels only", function()
    set { tier = "opt" }
    local f, ref = fresh_map()
    local xs = u32s(100)
    local before = counts()
    check_map(f, ref, xs, lacc.run(lacc.map(f, lacc.fromtable(xs, "u32"))))
    local after = counts()
    assert.are.equal(1, delta(before, after, "opt"))
    assert.are.equal(0, delta(before, after, "interp") + delta(before, after, "fast"))
  end)

  it("auto: a small first run on the interpreter, a large one on the fast tier, then the " ..
     "optimised build from a run between two, with the same results", function()
    set { tier = "auto", cache = tmpdir() }
    local f, ref = fresh_map()
    local small, large = u32s(1000), u32s(100000)
    local run = lacc.compile(function(x) return lacc.map(f, x) end)
    local before = counts()
    check_map(f, ref, small, run(lacc.fromtable(small, "u32")))
    assert.are.equal(1, delta(before, counts(), "interp"))
    local X = lacc.fromtable(large, "u32")
    local mid = counts()
    check_map(f, ref, large, run(X))
    assert.are.equal(1, delta(mid, counts(), first_tier))
    local switched = until_(function() return delta(mid, counts(), "opt") > 0 end, 120,
      function() check_map(f, ref, large, run(X)) end)
    assert.is_true(switched, "no switch to the optimised build within 120 s")
    assert.is_true(delta(before, counts(), "builds") >= 1)
    -- once switched, it stays
    local sw = counts()
    for _ = 1, 3 do check_map(f, ref, small, run(lacc.fromtable(small, "u32"))) end
    assert.are.equal(3, delta(sw, counts(), "opt"))
    -- and explain says where a program's code is
    assert.matches("-- code: the optimised kernels (cc), in the cache",
      lacc.explain(lacc.map(f, lacc.fromtable(small, "u32"))), 1, true)
    local g = fresh_map()
    assert.matches("-- code: not in the cache: runs of up to 8192 input elements start on " ..
      "the interpreter", lacc.explain(lacc.map(g, lacc.fromtable(small, "u32"))), 1, true)
    set { tier = "fast" }
    assert.matches("-- code: the fast tier's kernels (tcc)",
      lacc.explain(lacc.map(g, lacc.fromtable(small, "u32"))), 1, true)
    set { tier = "opt" }
    assert.is_nil(lacc.explain(lacc.map(g, lacc.fromtable(small, "u32"))):find("-- code:", 1, true))
  end)

  it("auto: small inputs but much work (a large generate, a replicate, a compiled scalar " ..
     "argument, a loop of many turns) run on compiled code, not the interpreter", function()
    set { tier = "auto", cache = tmpdir() }
    local salt_k = lacc.constant(salt % 97 + 2, "i64")
    local s = lacc.fromtable({ 1, 2, 3, 4, 5, 6, 7, 8 }, "i64")
    local n = 3000000
    local want_gen = 0
    for i = 1, n do want_gen = want_gen + i * (i % 8 + 1) * (salt % 97 + 2) end
    local sized = lacc.compile(function(k)
      return lacc.sum(lacc.generate({ 2000000 }, function(i) return lacc.cast(i, "f64") * k end))
    end)
    local programs = {
      { function()
          return lacc.sum(lacc.generate({ n }, function(i) return i * s[lacc.imod(i, 8) + 1] * salt_k end))
        end, want_gen },
      { function()
          return lacc.sum(lacc.map(function(v) return v * salt_k end,
            lacc.replicate({ 400000, lacc.all }, s)))
        end, 400000 * 36 * (salt % 97 + 2) },
      { function() return sized(salt % 89 + 3) end,
        (salt % 89 + 3) * 2000000 * 2000001 / 2 },
      { function()   -- 300000 turns of a loop over 8 elements
          return lacc.sum(lacc.awhile(function(v) return lacc.lt(lacc.the(lacc.sum(v)), 300000 * 8 + 36) end,
            function(v) return lacc.map(function(x) return x + 1 end, v) end,
            lacc.map(function(x) return x + salt_k - salt_k end, s)))
        end, 300000 * 8 + 36 },
    }
    for i, p in ipairs(programs) do
      local before = counts()
      local t0 = os.time()
      local prog = p[1]()
      local got = (i == 3 and prog or lacc.run(prog, { backend = "cpu" })):get()   -- 3: a call
      assert.are.equal(p[2], H.num(got), "program " .. i)
      assert.are.equal(0, delta(before, counts(), "interp"), "program " .. i .. " on the interpreter")
      assert.is_true(os.time() - t0 <= 10, "program " .. i .. " took " .. (os.time() - t0) .. " s")
    end
  end)

  it("auto: a loop on the fast tier's kernels takes up the optimised build between turns",
     function()
    local cache = tmpdir()
    -- a loop of 6000 turns over 200000 elements: seconds on the fast tier, its cc builds
    -- a fraction of that; the salt makes its kernels new
    local script = script_file(([[
      local lacc = require "lacc"
      local n, T = 200000, 6000
      local xs = lacc.fromtable({ %d }, "f64")
      local s0 = lacc.generate({ n }, function(i) return lacc.cast(lacc.imod(i, 7), "f64") + xs[1] * 0 end)
      local p = lacc.awhile(function(s) return lacc.lt(lacc.the(lacc.maximum(s)), T) end,
        function(s) return lacc.map(function(v) return v + 1 end, s) end, s0)
      local r = lacc.run(lacc.sum(p))
      io.stdout:write("done ", string.format("%%.0f", r:get()), "\n")
      io.stdout:flush()
    ]]):format(salt))
    local out = sh(child(("LACC_DETACH_BUILDS=0 LACC_VERBOSE=1 LACC_CACHE=%s"):format(quote(cache)),
      "auto", script))
    os.remove(script)
    os.execute("rm -rf " .. quote(cache))
    local n, T, want = 200000, 6000, 0
    for i = 1, n do want = want + i % 7 + (T - 6) end
    local switched = out:find("optimised kernels are loaded", 1, true)
    local done = out:find("done " .. ("%.0f"):format(want), 1, true)
    assert.truthy(out:find("runs on the fast tier's kernels", 1, true), out)
    assert.truthy(done, out)
    assert.truthy(switched and switched < done, out)
  end)

  it("auto: a long run on the fast tier's kernels stops once the optimised ones are ready, " ..
     "or once its pace says waiting for them is quicker, and runs again on them, with the " ..
     "same result", function()
    local cache = tmpdir()
    -- small inputs, much work: seconds on tcc's code, its cc build a fraction of that
    local L = 3000 + salt % 5
    local script = script_file(([[
      local lacc = require "lacc"
      local k = lacc.fromtable({ 3 }, "i64")
      local p = lacc.sum(lacc.generate({ 2500, 2500 }, function(i, j)
        local v0 = i * 7 + j
        return lacc.while_(function(x) return lacc.lt(x, v0 + %d) end,
                           function(x) return x + k[1] end, v0)
      end))
      io.stdout:write("done ", string.format("%%.0f", lacc.run(p):get()), "\n")
    ]]):format(L))
    local out = sh(child(("LACC_DETACH_BUILDS=0 LACC_VERBOSE=1 LACC_CACHE=%s"):format(quote(cache)),
      "auto", script))
    os.remove(script)
    os.execute("rm -rf " .. quote(cache))
    -- each element: v0 + 3 * ceil(L / 3), v0 = 7i + j over 1-based i, j up to 2500
    local n = 2500
    local want = 8 * n * (n * (n + 1) / 2) + n * n * 3 * math.ceil(L / 3)
    assert.truthy(out:find("runs on the fast tier's kernels", 1, true), out)
    local why = out:match("a program's optimised kernels are ([%a ]-) during its run on the " ..
                          "fast tier: it runs again on them")
    assert.truthy(why == "ready" or why == "quicker to wait for", out)
    assert.truthy(out:find("optimised kernels are loaded", 1, true), out)
    assert.truthy(out:find("done " .. ("%.0f"):format(want), 1, true), out)
  end)

  it("auto: a background build that fails leaves the program on the fast tier, counted",
     function()
    set { tier = "auto", cache = tmpdir(), cflags = "-fno-such-option-for-lacc" }
    local f, ref = fresh_map()
    local large = u32s(20000)
    local X = lacc.fromtable(large, "u32")
    local run = lacc.compile(function(x) return lacc.map(f, x) end)
    local before = counts()
    local failed = until_(function() return delta(before, counts(), "failed") > 0 end, 120,
      function() check_map(f, ref, large, run(X)) end)
    assert.is_true(failed, "the background build did not fail within 120 s")
    for _ = 1, 3 do check_map(f, ref, large, run(X)) end
    assert.are.equal(0, delta(before, counts(), "opt"))
    assert.is_true(delta(before, counts(), first_tier) >= 4)
    -- under opt the same failure is the run's error
    set { tier = "opt" }
    local g = fresh_map()
    local ok, err = pcall(lacc.run, lacc.map(g, X))
    assert.is_false(ok)
    assert.matches("the C compiler failed on generated code (check LACC_CFLAGS)", err, 1, true)
  end)

  it("auto without a fast tier: a failed background build leaves large runs on the " ..
     "interpreter, not an error", function()
    local cache = tmpdir()
    local script = script_file(([[
      local lacc = require "lacc"
      lacc.config { cflags = "-fno-such-option-for-lacc" }
      local t = {}
      for i = 1, 100000 do t[i] = i end
      local xs = lacc.fromtable(t, "f64")
      local f = lacc.compile(function(x) return lacc.map(function(v) return v * %d + 1 end, x) end)
      local t0 = os.time()
      repeat
        assert(f(xs):get(100000) == 100000 * %d + 1)
      until lacc.tiers().failed > 0 or os.time() - t0 > 60
      for _ = 1, 3 do assert(f(xs):get(7) == 7 * %d + 1) end
      local c = lacc.tiers()
      io.write(("interp>3 %%s fast %%d opt %%d failed %%d"):format(tostring(c.interp > 3), c.fast,
        c.opt, c.failed))
    ]]):format(salt + 5, salt + 5, salt + 5))
    local out = sh(child(("LACC_CACHE=%s LACC_FAST_CC=false"):format(quote(cache)), "auto", script))
    os.remove(script)
    os.execute("rm -rf " .. quote(cache))
    assert.matches("interp>3 true fast 0 opt 0 failed 1$", out)
  end)

  it("a large program compiles in parts at once, one cc process per part, with the " ..
     "interpreter's results", function()
    local cores = tonumber(sh("nproc")) or 1
    local cache = tmpdir()
    local script = script_file(([[
      local lacc = require "lacc"
      local xs = lacc.fromtable({1, 2, 3, 4, 5, 6, 7, 8}, "f64")
      local ps = {}
      for k = 1, 5 do
        local m = lacc.map(function(x)
          local y = x
          for i = 1, k + 1 do y = lacc.sqrt(y * %d + i) end
          return y
        end, xs)
        ps[#ps + 1] = lacc.scanl(function(a, b) return a + b end, 0, m)
        ps[#ps + 1] = lacc.sum(lacc.map(function(x) return x * k end, m))
      end
      local a, b = { lacc.run(ps) }, { lacc.run(ps, { backend = "interp" }) }
      for i = 1, #ps do
        local x, y = a[i]:totable(), b[i]:totable()
        if type(y) ~= "table" then x, y = { x }, { y } end
        for j = 1, #y do assert(math.abs(x[j] - y[j]) <= 1e-9 * math.abs(y[j]), "result " .. i) end
      end
      io.write("same")
    ]]):format(salt + 3))
    local out = sh(child(("LACC_CACHE=%s LACC_VERBOSE=1"):format(quote(cache)), "opt", script))
    os.remove(script)
    os.execute("rm -rf " .. quote(cache))
    assert.matches("same$", out)
    local _, builds = out:gsub("lacc: compiled kernels %(", "")
    assert.are.equal(cores >= 2 and 2 or 1, builds, out)
  end)

  -- A short script: its first run on the interpreter, cc under way when it exits.
  local function short_script(k)
    local script = script_file(([[
      local lacc = require "lacc"
      local xs = lacc.fromtable({1, 2, 3}, "f64")
      local r = lacc.run(lacc.map(function(x) return x * %d + 0.5 end, xs))
      io.write(r:get(2), " ", lacc.tiers().interp, " ", lacc.tiers().opt)
      -- the compiler under way (it takes some 0.15 s; os.clock counts this process's time
      -- only, which a loaded machine stretches: a short wait, so that it is still running)
      local t0 = os.clock()
      while os.clock() - t0 < 0.01 do end
      os.exit(0, true)   -- closes the Lua state, then exits: the build is still running
    ]]):format(k))
    return script
  end

  it("LACC_DETACH_BUILDS=0: a process that ends while a background build runs exits " ..
     "cleanly, leaving no compiler and no files behind", function()
    local tmp, cache = tmpdir(), tmpdir()
    local script = short_script(salt + 17)
    local out = sh(child(("LACC_DETACH_BUILDS=0 TMPDIR=%s LACC_CACHE=%s"):format(quote(tmp), quote(cache)),
      "auto", script) .. "; echo \" exit=$?\"")
    os.remove(script)
    assert.matches(("^%s 1 0 exit=0"):format(2 * (salt + 17) + 0.5), out)
    assert.are.equal("", sh("ls -A " .. quote(tmp)))   -- nor the compiler's own files
    assert.are.equal("", sh("ls " .. quote(cache) .. " | grep -v '^secret$' || true"))
    os.execute("rm -rf " .. quote(tmp) .. " " .. quote(cache))
  end)

  it("a build under way when a short script exits lands in the cache: the next run of " ..
     "the script starts on the optimised kernels, and nothing is left over", function()
    local tmp, cache = tmpdir(), tmpdir()
    local script = short_script(salt + 29)
    local run = child(("LACC_DETACH_BUILDS=1 TMPDIR=%s LACC_CACHE=%s"):format(quote(tmp), quote(cache)),
      "auto", script)
      .. "; echo \" exit=$?\""
    local want = 2 * (salt + 29) + 0.5
    local t0 = os.time()
    -- the host's output is read to its end at once: the builder holds none of its pipes
    assert.matches(("^%s 1 0 exit=0"):format(want), sh(run))
    assert.is_true(os.time() - t0 <= 5, "the script's exit waited for the build")
    local landed = until_(function() return sh("ls " .. quote(cache)):find("%.kso%s") ~= nil end,
      120, function() end)
    assert.is_true(landed, "no kernel in the cache within 120 s")
    -- the builder ends with its build: its directory and claim gone, no compiler left
    assert.is_true(until_(function() return sh("ls -A " .. quote(tmp)) == "" end, 30, function() end),
      sh("ls -A " .. quote(tmp)))
    assert.falsy(sh("ls " .. quote(cache)):find("building", 1, true))
    assert.matches(("^%s 0 1 exit=0"):format(want), sh(run))
    os.remove(script)
    os.execute("rm -rf " .. quote(tmp) .. " " .. quote(cache))
  end)
end)
