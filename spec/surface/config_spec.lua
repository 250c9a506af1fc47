-- lacc.config (issue 20): settings checked when they are given (an error naming the
-- setting), put before the environment, and reported in force by lacc.config().
local H = require "helper"
local lacc = H.lacc

-- Run f with settings t, then back to the environment's (config is process-wide).
local function with(t, f)
  local names = {}
  for k in pairs(t) do names[k] = "" end
  lacc.config(t)
  local ok, err = pcall(f)
  lacc.config(names)
  if not ok then error(err, 0) end
end

describe("lacc.config", function()
  it("reports every setting in force", function()
    local c = lacc.config()
    for _, k in ipairs { "threads", "cache_mb", "cc", "cflags", "verbose", "backend", "contract", "grad_mb" } do
      assert.is_not_nil(c[k], k)
    end
    assert.are.equal("number", type(c.threads))
    assert.is_true(c.threads >= 1)
    assert.are.equal("boolean", type(c.verbose))
    assert.are.equal("boolean", type(c.contract))
    assert.are.equal("number", type(c.grad_mb))
    -- the guide's order: LACC_CACHE, $XDG_CACHE_HOME/lacc, ~/.cache/lacc
    local xdg, home = os.getenv("XDG_CACHE_HOME"), os.getenv("HOME")
    local default = xdg and xdg ~= "" and xdg .. "/lacc" or home and home .. "/.cache/lacc"
    local want = os.getenv("LACC_CACHE")
    if want == nil or want == "" then want = default end
    assert.are.equal(want, c.cache)
  end)

  it("puts its values before the environment's, and '' goes back to them", function()
    local before = lacc.config()
    with({ cflags = "-O1", cache_mb = 100, backend = "interp", verbose = false }, function()
      local c = lacc.config()
      assert.are.equal("-O1", c.cflags)
      assert.are.equal(100, c.cache_mb)
      assert.are.equal("interp", c.backend)
      -- the default backend is now the interpreter: a program runs there
      local r = lacc.run(lacc.map(function(x) return x * 2 end, lacc.fromtable({ 1, 2 }, "i32")))
      assert.are.same({ 2, 4 }, r:totable())
    end)
    local after = lacc.config()
    assert.are.equal(before.cflags, after.cflags)
    assert.are.equal(before.backend, after.backend)
    assert.are.equal(before.cache_mb, after.cache_mb)
  end)

  it("chooses the backend runs take by default", function()
    with({ backend = "opencl:99" }, function()
      local ok, err = pcall(lacc.run, lacc.map(function(x) return x + 1 end, lacc.fromtable({ 1 }, "i32")))
      assert.is_false(ok)
      assert.truthy(tostring(err):find("99", 1, true), err)
      -- an explicit backend still wins
      local r = lacc.run(lacc.map(function(x) return x + 1 end, lacc.fromtable({ 1 }, "i32")),
                         { backend = "interp" })
      assert.are.same({ 2 }, r:totable())
    end)
  end)

  it("builds kernels with the flags it gives #opt", function()
    local p = lacc.map(function(x) return x * 3 + 1 end, lacc.fromtable({ 1, 2 }, "i64"))
    with({ cflags = "-O1 -DLACC_CONFIG_SPEC" }, function()
      assert.are.same({ 4, 7 }, lacc.run(p, { backend = "cpu" }):totable())
    end)
    with({ cflags = "-O1 --lacc-no-such-flag" }, function()   -- the compiler sees them
      local q = lacc.map(function(x) return x * 5 - 2 end, lacc.fromtable({ 1, 2 }, "i64"))
      local ok, err = pcall(lacc.run, q, { backend = "cpu" })
      assert.is_false(ok)
      assert.truthy(tostring(err):find("lacc-no-such-flag", 1, true), err)
    end)
  end)

  it("lets the compiler fuse a * b + c into one rounding with contract = true #opt", function()
    -- x * x - c for x = 1 + 2^-30, c = 1 + 2^-29: x * x rounds to c (0 after the
    -- subtraction); fused, the product keeps its 2^-60
    local x, c = 1 + 2 ^ -30, 1 + 2 ^ -29
    local xs = lacc.fromtable({ x, -x }, "f64")
    local p = lacc.map(function(v) return v * v - c end, xs)
    assert.are.equal(false, lacc.config().contract)
    with({ tier = "opt" }, function()
      assert.are.same({ 0, 0 }, lacc.run(p, { backend = "cpu" }):totable())
    end)
    local f = io.open("/proc/cpuinfo")
    local info = f and f:read("a") or ""
    if f then f:close() end
    -- x86 with FMA (the kernels' -march=native) or any aarch64: the compiler fuses
    local fused = info:find("%sfma%s") ~= nil or info:find("asimd", 1, true) ~= nil
    with({ tier = "opt", contract = true }, function()
      assert.are.equal(true, lacc.config().contract)
      local r = lacc.run(p, { backend = "cpu" }):totable()
      local want = fused and 2 ^ -60 or 0
      assert.are.same({ want, want }, r)
      -- a product's sums stay within a rounding of each term of the interpreter's
      local a = lacc.fromtable({ { 0.1, 0.7, -1.3 }, { 2.5, 1e-3, 0.3 } }, "f32")
      local b = lacc.fromtable({ { 1.1, -0.2 }, { 0.9, 3.3 }, { -0.4, 0.6 } }, "f32")
      local got = lacc.run(lacc.matmul(a, b), { backend = "cpu" }):totable()
      local ref = lacc.run(lacc.matmul(a, b), { backend = "interp" }):totable()
      for i = 1, 2 do
        for j = 1, 2 do assert.is_true(math.abs(got[i][j] - ref[i][j]) <= 1e-6, i .. "," .. j) end
      end
    end)
    assert.are.equal(false, lacc.config().contract)
  end)

  it("refuses a bad value, naming the setting", function()
    local cases = {
      { { threads = "abc" }, "config: threads: expected a whole number from 1 to 256, got abc" },
      { { threads = 0 }, "config: threads: expected a whole number from 1 to 256, got 0" },
      { { cache_mb = -1 }, "config: cache_mb: expected a number from 0" },
      { { grad_mb = "lots" }, "config: grad_mb: expected a number from 0" },
      { { verbose = "maybe" }, "config: verbose: expected true or false, got maybe" },
      { { contract = "fast" }, "config: contract: expected true or false, got fast" },
      { { backend = "gpu" }, "config: backend: expected \"cpu\", \"interp\", \"opencl\"" },
      { { thread = 2 }, "config: unknown setting thread" },
      { { cc = {} }, "config: cc: expected a number, a string or a boolean, got table" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(lacc.config, c[1])
      assert.is_false(ok)
      assert.truthy(err:find(c[2], 1, true), err)
      assert.truthy(err:find("config_spec.lua", 1, true), err)
    end
    local ok, err = pcall(lacc.config, 5)
    assert.is_false(ok)
    assert.truthy(err:find("expected a table of settings", 1, true))
  end)

  it("keeps the thread count once the pool has started", function()
    lacc.run(lacc.sum(lacc.fromtable({ 1, 2 }, "i32")), { backend = "cpu" })
    local n = lacc.config().threads
    lacc.config { threads = n }   -- the same: accepted
    local ok, err = pcall(lacc.config, { threads = n + 1 })
    assert.is_false(ok)
    assert.truthy(err:find("the thread pool has started with " .. n .. " threads", 1, true), err)
  end)
end)

describe("environment settings", function()
  it("warn once about a bad value and use the default", function()
    local lua = H.vm
    local cmd = ("LACC_THREADS=abc LACC_CACHE_MB=lots %s -e 'local lacc = require \"lacc\"; " ..
                 "print(lacc.run(lacc.sum(lacc.fromtable({1, 2}, \"i32\"))):get(), lacc.config().cache_mb)' 2>&1")
                :format(lua)
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find("ignoring LACC_THREADS=abc", 1, true), out)
    assert.truthy(out:find("ignoring LACC_CACHE_MB=lots", 1, true), out)
    assert.truthy(out:find("3%s+512"), out)
  end)

  it("LACC_PROFILE=1 gives each step's time on stderr, named as explain names it", function()
    local cmd = ("LACC_PROFILE=1 %s -e 'local lacc = require \"lacc\"; " ..
                 "local xs = lacc.fromtable({1, 2, 3}, \"f64\"); " ..
                 "print(lacc.run(lacc.sum(lacc.map(function(x) return x * 2 end, lacc.compute(" ..
                 "lacc.map(function(x) return x + 1 end, xs)))), {backend = \"cpu\"}):get())' 2>&1"):format(H.vm)
    local p = io.popen(cmd)
    local out = p:read("*a")
    p:close()
    assert.truthy(out:find("lacc profile: 2 steps, [0-9.]+ ms"), out)
    assert.truthy(out:find("lacc profile: +[0-9.]+ ms  a%d+ = compute, rank 1 f64 %(at %(command line%):1%)"), out)
    assert.truthy(out:find("lacc profile: +[0-9.]+ ms  a%d+ = fold, rank 0 f64"), out)
    assert.truthy(out:find("\n18%.?0?\n"), out)
  end)
end)
