-- The kernel caches' trust model and failure modes: nothing another user or a damaged,
-- read-only or full cache can do runs code or changes a result; eviction touches only
-- lacc's own files; settings are parsed strictly; the compiler runs under a time limit.
-- Every scenario runs in a child process (a crash there fails the test, not busted);
-- the other-user scenarios run the children under unprivileged uids (setpriv, as root).
local H = require "helper"
local lacc = H.lacc

local vm = H.vm
-- the children that run lacc get LD_PRELOAD back explicitly (child, below)
local sh, quote = H.sh, H.quote
local is_root = sh("id -u"):match("^0%s") ~= nil
local have_setpriv = sh("command -v setpriv"):find("setpriv", 1, true) ~= nil
local cross_user = is_root and have_setpriv
local VICTIM, ATTACKER = 64001, 64002
local have_opencl = false
for _, b in ipairs(H.backends) do if b == "opencl" then have_opencl = true end end

local function tmpdir(mode)
  local d = sh("mktemp -d"):gsub("%s+$", "")
  if mode then os.execute(("chmod %s %s"):format(mode, quote(d))) end
  return d
end
local function rm(path) os.execute("rm -rf " .. quote(path)) end
local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end
local function ls(dir, pattern)
  local r = {}
  for name in io.popen(("ls -A %s 2>/dev/null"):format(quote(dir))):lines() do
    if not pattern or name:match(pattern) then r[#r + 1] = name end
  end
  table.sort(r)
  return r
end
local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a") or f:read("*a")
  f:close()
  return s
end
local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- A program whose answer the child prints: v * k + c over 1..4 on a backend, as k - 1
-- additions of v and c additions of 1, so that each (k, c) has a kernel of its own
-- (programs that differ only in constants share one).
local function program(k, c, backend)
  local e = "v" .. string.rep(" + v", k - 1) .. string.rep(" + 1", c)
  return ([[local lacc = require "lacc"
    local x = lacc.fromtable({1, 2, 3, 4}, "i32")
    io.write(table.concat(lacc.run(lacc.map(function(v) return %s end, x),
      {backend = %q}):totable(), ","))]]):format(e, backend or "cpu")
end
local function expected(k, c)
  local r = {}
  for i = 1, 4 do r[i] = i * k + c end
  return table.concat(r, ",")
end

-- Runs code in a fresh process: env (a table) on top of a clean environment with only
-- what lacc needs (opts.inherit: on top of this one); opts.uid runs it as that user.
local scripts = {}
local function child(code, env, opts)
  opts = opts or {}
  local script = os.tmpname()
  write(script, code)
  os.execute("chmod 644 " .. quote(script))
  scripts[#scripts + 1] = script
  local vars = {}
  local function set(k, v) if v ~= nil then vars[#vars + 1] = k .. "=" .. quote(v) end end
  if not opts.inherit then
    for _, k in ipairs { "PATH", "LUA_PATH", "LUA_CPATH", "LACC_LIB", "LD_PRELOAD",
                         "UBSAN_OPTIONS", "LACC_CL_OPTIONS", "OCL_ICD_VENDORS", "POCL_CACHE_DIR" } do
      set(k, os.getenv(k))
    end
    -- the tier of this process (helper.lua: opt): the children's builds are cc's
    set("LACC_TIER", lacc.config().tier)
    -- under make check-asan: leak checking stays with the parent (PoCL's threads)
    local asan = os.getenv("ASAN_OPTIONS")
    if asan then set("ASAN_OPTIONS", asan .. ":detect_leaks=0") end
  end
  for k, v in pairs(env or {}) do set(k, v) end
  local prefix = ""
  if opts.uid then
    prefix = ("setpriv --reuid=%d --regid=%d --clear-groups "):format(opts.uid, opts.uid)
  end
  local cmd = ("%s%s %s %s %s"):format(prefix, opts.inherit and "env" or "env -i",
    table.concat(vars, " "), vm, quote(script))
  if opts.command then return cmd end   -- to run in a shell line of one's own
  return sh(cmd)
end

-- Another user must be able to read this checkout (a clone under /root is not): else the
-- other-user scenarios are pending, with the reason.
if cross_user then
  local out = child('require "lacc"; io.write("readable")', { HOME = "/nonexistent" },
                    { uid = VICTIM })
  cross_user = out:find("readable", 1, true) ~= nil
end
local no_cross = is_root and have_setpriv
  and "another user cannot read this checkout (the other-user scenarios need that)"
  or "needs root and setpriv to act as two users"

-- A shared object whose constructor leaves a mark: the code another user plants.
local function planted_object(dir, mark, id)
  local c, so = dir .. "/evil.c", dir .. "/evil.so"
  write(c, ([[#include <stdio.h>
    __attribute__((constructor)) static void planted(void) {
      FILE *f = fopen("%s", "w");
      if (f) { fputs("planted code ran", f); fclose(f); }
    }
    const char lacc_kernel_id[] = "%s";
  ]]):format(mark, id or ""))
  local out = sh(("cc -shared -fPIC -o %s %s"):format(quote(so), quote(c)))
  assert(exists(so), out)
  os.execute("chmod 755 " .. quote(so))
  return so
end

local function kernel_files(dir) return ls(dir, "^k%x+%.kso$") end

-- The kernel name of program(k, c) under the given environment, learned in a private
-- cache of its own (names depend on the code, compiler and flags, not on the directory).
local function kernel_name(k, c, env, opts)
  local dir = tmpdir()
  if opts and opts.uid then os.execute(("chown %d %s"):format(opts.uid, quote(dir))) end
  env = env or {}
  local saved = env.LACC_CACHE
  env.LACC_CACHE = dir
  assert.are.equal(expected(k, c), child(program(k, c), env, opts))
  env.LACC_CACHE = saved
  local names = kernel_files(dir)
  rm(dir)
  assert.are.equal(1, #names)
  return names[1]
end

-- The victim of the scenarios below: an unprivileged user where the suite runs as root
-- (its cache and home its own), else this user. put() writes a file as another user
-- could, leaving it owned by the victim (lacc reads only its own files).
local function victim()
  local work = tmpdir("755")
  local dir, home, marks = work .. "/cache", work .. "/home", work .. "/marks"
  os.execute(("mkdir -m 700 %s %s && mkdir -m 777 %s"):format(quote(dir), quote(home), quote(marks)))
  local v = { work = work, dir = dir, mark = marks .. "/mark", env = { LACC_CACHE = dir, HOME = home } }
  if cross_user then
    os.execute(("chown %d %s %s"):format(VICTIM, quote(dir), quote(home)))
    v.opts = { uid = VICTIM }
  end
  function v.put(path, bytes)
    write(path, bytes)
    if cross_user then os.execute(("chown %d %s"):format(VICTIM, quote(path))) end
  end
  return v
end

describe("kernel cache trust #opt", function()
  teardown(function() for _, s in ipairs(scripts) do os.remove(s) end end)

  it("never loads a kernel file this user's lacc did not seal", function()
    local v = victim()
    assert.are.equal(expected(7, 1), child(program(7, 1), v.env, v.opts))
    local name = kernel_files(v.dir)[1]
    assert.truthy(name)
    local good = read(v.dir .. "/" .. name)
    local evil = read(planted_object(v.work, v.mark, name:match("^(k%x+)")))
    -- the raw object under the kernel's name; then lacc's header (magic, key, length,
    -- tag) taken from the real file in front of it; then a file of the right length
    local header = good:sub(1, 80)
    local forged = { evil, header .. evil, good:sub(1, 80) .. evil:sub(1, #good - 80) }
    for i, bytes in ipairs(forged) do
      v.put(v.dir .. "/" .. name, bytes)
      assert.are.equal(expected(7, 1), child(program(7, 1), v.env, v.opts), "forgery " .. i)
      assert.is_false(exists(v.mark), "planted code ran (forgery " .. i .. ")")
      assert.are.equal(good, read(v.dir .. "/" .. name), "rebuilt and sealed again")
    end
    -- the planted object does run when loaded (the check above can fail)
    local probe = sh(("%s -e 'package.loadlib(%q, \"*\")'"):format(vm, v.work .. "/evil.so"))
    assert.truthy(exists(v.mark), probe)
    rm(v.work)
  end)

  it("a truncated or damaged kernel file is rebuilt, never a crash", function()
    local dir = tmpdir()
    local env = { LACC_CACHE = dir }
    assert.are.equal(expected(3, 4), child(program(3, 4), env))
    local name = kernel_files(dir)[1]
    local good = read(dir .. "/" .. name)
    for _, bytes in ipairs { good:sub(1, 100), good:sub(1, math.floor(#good / 2)), "",
                             good:sub(1, 200) .. string.rep("\0", #good - 200) } do
      write(dir .. "/" .. name, bytes)
      assert.are.equal(expected(3, 4), child(program(3, 4), env))
      assert.are.equal(#good, #read(dir .. "/" .. name))
    end
    rm(dir)
  end)

  -- (named "on opencl": tools/runtests.sh runs those in the OpenCL process)
  if have_opencl then it("refuses a swapped binary (header rewritten for another program) on opencl", function()
    local v = victim()
    v.env.POCL_KERNEL_CACHE = "0"   -- PoCL caching nothing itself: lacc keeps binaries
    local cl = v.dir .. "/opencl/"
    assert.are.equal(expected(5, 1), child(program(5, 1, "opencl"), v.env, v.opts))
    local a = ls(cl, "%.clbin$")
    assert.are.equal(1, #a)
    assert.are.equal(expected(6, 2), child(program(6, 2, "opencl"), v.env, v.opts))
    local both = ls(cl, "%.clbin$")
    assert.are.equal(2, #both)
    local b = both[1] == a[1] and both[2] or both[1]
    local abytes, bbytes = read(cl .. a[1]), read(cl .. b)
    -- A's binary under B's name, as is, and with B's key written into its header
    for _, bytes in ipairs { abytes, abytes:sub(1, 8) .. bbytes:sub(9, 40) .. abytes:sub(41) } do
      v.put(cl .. b, bytes)
      assert.are.equal(expected(6, 2), child(program(6, 2, "opencl"), v.env, v.opts))
      assert.are.equal(bbytes:sub(1, 40), read(cl .. b):sub(1, 40))
    end
    -- truncated: rebuilt
    v.put(cl .. b, bbytes:sub(1, 200))
    assert.are.equal(expected(6, 2), child(program(6, 2, "opencl"), v.env, v.opts))
    rm(v.work)
  end) end

  if have_opencl then it("keeps no binary where PoCL caches programs itself, and builds again right on opencl", function()
    local v = victim()
    local own = v.work .. "/pocl"
    os.execute("mkdir -p " .. quote(own))
    v.env.POCL_CACHE_DIR = own
    if cross_user then os.execute(("chown %d %s"):format(VICTIM, quote(own))) end
    for _ = 1, 2 do
      assert.are.equal(expected(5, 3), child(program(5, 3, "opencl"), v.env, v.opts))
      assert.are.equal(0, #ls(v.dir .. "/opencl/", "%.clbin$"))
    end
    rm(v.work)
  end) end

  it("refuses a cache directory another user owns or may write", function()
    if not cross_user then return pending(no_cross) end
    local work = tmpdir("755")
    local mark = work .. "/marks/mark"
    os.execute(("mkdir -m 777 %s/marks"):format(quote(work)))
    local name = kernel_name(8, 3, { HOME = work }, { uid = VICTIM })
    local id = name:match("^(k%x+)")
    local evil = planted_object(work, mark, id)
    local function plant(dir, owner, mode)
      os.execute(("mkdir -p %s && cp %s %s/%s && cp %s %s/secret && chown -R %d %s && chmod %s %s")
        :format(quote(dir), quote(evil), quote(dir), name, quote(evil), quote(dir), owner,
                quote(dir), mode, quote(dir)))
    end
    local cases = {
      { dir = work .. "/theirs", owner = ATTACKER, mode = "777", why = "belongs to another user" },
      { dir = work .. "/theirs-755", owner = ATTACKER, mode = "755", why = "belongs to another user" },
      { dir = work .. "/open", owner = VICTIM, mode = "777", why = "other users may write to it (mode 0777)" },
    }
    -- a private directory of the victim's inside one the attacker may write (no sticky bit)
    os.execute(("mkdir -m 777 %s/shared"):format(quote(work)))
    cases[#cases + 1] = { dir = work .. "/shared/mine", owner = VICTIM, mode = "700",
                          why = "other users may write to " }
    for _, case in ipairs(cases) do
      plant(case.dir, case.owner, case.mode)
      local out = child(program(8, 3), { LACC_CACHE = case.dir, HOME = work }, { uid = VICTIM })
      assert.truthy(out:find(expected(8, 3), 1, true), out)
      assert.truthy(out:find("not using the kernel cache " .. case.dir, 1, true), out)
      assert.truthy(out:find(case.why, 1, true), out)
      local _, warnings = out:gsub("not using the kernel cache", "")
      assert.are.equal(1, warnings, out)
      assert.is_false(exists(mark), "planted code ran in " .. case.dir)
    end
    rm(work)
  end)

  it("without HOME uses no predictable shared directory", function()
    if not cross_user then return pending(no_cross) end
    local work = tmpdir("755")
    os.execute(("mkdir -m 777 %s/marks"):format(quote(work)))
    local mark = work .. "/marks/mark"
    local name = kernel_name(9, 2, { HOME = work }, { uid = VICTIM })
    local evil = planted_object(work, mark, name:match("^(k%x+)"))
    os.execute("chmod 755 " .. quote(work))
    -- what the old fallback used: /tmp/lacc-<uid>, pre-made by another user
    local shared = "/tmp/lacc-" .. VICTIM
    rm(shared)
    os.execute(("mkdir -m 777 %s && cp %s %s/%s && chown -R %d %s"):format(shared, quote(evil),
      shared, name, ATTACKER, shared))
    local out = child(program(9, 2), {}, { uid = VICTIM })   -- env -i: no HOME, no XDG
    assert.truthy(out:find(expected(9, 2), 1, true), out)
    assert.truthy(out:find("no kernel cache directory", 1, true), out)
    assert.is_false(exists(mark), "planted code ran")
    assert.are.same({ name }, ls(shared))   -- nothing of the victim's written there
    rm(shared)
    -- XDG_RUNTIME_DIR (private per user) is the fallback when it is set
    local run = work .. "/run"
    os.execute(("mkdir -m 700 %s && chown %d %s"):format(quote(run), VICTIM, quote(run)))
    out = child(program(9, 2), { XDG_RUNTIME_DIR = run }, { uid = VICTIM })
    assert.are.equal(expected(9, 2), out)
    assert.are.same({ name }, kernel_files(run .. "/lacc"))
    rm(work)
  end)
end)

describe("a cache that cannot be used #opt", function()
  it("read-only, a file in its place, an unwritable HOME: results unchanged, one warning", function()
    local work = tmpdir("755")
    local file = work .. "/afile"
    write(file, "user data")
    local out = child(program(2, 9) .. ";" .. program(2, 10), { LACC_CACHE = file })
    assert.truthy(out:find(expected(2, 9) .. expected(2, 10), 1, true), out)
    local _, n = out:gsub("not using the kernel cache", "")
    assert.are.equal(1, n, out)
    assert.are.equal("user data", read(file))
    if cross_user then
      local ro = work .. "/ro"
      os.execute(("mkdir %s && chown %d %s"):format(quote(ro), VICTIM, quote(ro)))
      -- a first run makes the key, a second finds the directory read-only
      assert.are.equal(expected(2, 11), child(program(2, 11), { LACC_CACHE = ro }, { uid = VICTIM }))
      os.execute("chmod 500 " .. quote(ro))
      out = child(program(2, 9) .. ";" .. program(2, 10), { LACC_CACHE = ro }, { uid = VICTIM })
      assert.truthy(out:find(expected(2, 9) .. expected(2, 10), 1, true), out)
      _, n = out:gsub("cannot write to the kernel cache", "")
      assert.are.equal(1, n, out)
      -- what is there is still used
      assert.are.equal(expected(2, 11), child(program(2, 11), { LACC_CACHE = ro }, { uid = VICTIM }))
      out = child(program(2, 9), { HOME = "/nonexistent" }, { uid = VICTIM })
      assert.truthy(out:find(expected(2, 9), 1, true), out)
      assert.truthy(out:find("not using the kernel cache /nonexistent/.cache/lacc", 1, true), out)
    end
    rm(work)
  end)

  it("a full disk: old kernels make room, user files stay", function()
    local mnt = tmpdir("755")
    if not is_root or sh(("mount -t tmpfs -o size=600k tmpfs %s && echo mounted"):format(quote(mnt)))
        :find("mounted", 1, true) == nil then
      rm(mnt)
      return pending("cannot mount a small file system here")
    end
    local ok, err = pcall(function()
      local env = { LACC_CACHE = mnt .. "/cache" }
      local kernels = {}
      for c = 1, 3 do
        assert.are.equal(expected(4, c), child(program(4, c), env))
        kernels[c] = kernel_files(mnt .. "/cache")
      end
      assert.are.equal(3, #kernels[3])
      -- fill the rest of the disk with the user's own data
      sh(("dd if=/dev/zero of=%s/user.dat bs=4k 2>/dev/null"):format(quote(mnt)))
      local out = child(program(4, 20), env)
      assert.truthy(out:find(expected(4, 20), 1, true), out)
      local after = kernel_files(mnt .. "/cache")
      assert.truthy(exists(mnt .. "/user.dat"))
      -- the new kernel was written in the room its oldest neighbours left
      local new = kernel_name(4, 20)
      local found = false
      for _, n in ipairs(after) do if n == new then found = true end end
      assert.is_true(found, table.concat(after, " ") .. "\n" .. out)
      assert.are.equal(expected(4, 20), child(program(4, 20), env))
    end)
    sh("umount " .. quote(mnt))
    rm(mnt)
    assert(ok, err)
  end)
end)

describe("eviction and settings #opt", function()
  it("evicts only lacc's own files, and a bad LACC_CACHE_MB is no bound of 0", function()
    local dir = tmpdir()
    local user = { "keep_me.so", "model.clbin", "k0123456789abcdef.so", "notes.txt",
                   "k0123456789abcdef0123456789abcdef.kso", "opencl/0123456789abcdef0123456789abcdef.clbin" }
    os.execute(("mkdir -p %s/opencl"):format(quote(dir)))
    for _, u in ipairs(user) do write(dir .. "/" .. u, "the user's own " .. u) end
    assert.are.equal(expected(1, 1), child(program(1, 1), { LACC_CACHE = dir }))
    assert.are.equal(1, #kernel_files(dir) - 1)   -- ours, beside the user's look-alike
    for _, bad in ipairs { "garbage", "1e20", "inf", "-5", "12abc" } do
      local out = child(program(1, 2), { LACC_CACHE = dir, LACC_CACHE_MB = bad })
      assert.truthy(out:find(expected(1, 2), 1, true), out)
      assert.truthy(out:find("ignoring LACC_CACHE_MB=" .. bad, 1, true), out)
      -- the default bound (512 MB): nothing was evicted
      assert.are.equal(3, #kernel_files(dir), bad)
    end
    -- a bound of 0 keeps no kernel, and never the user's files
    assert.are.equal(expected(1, 3), child(program(1, 3), { LACC_CACHE = dir, LACC_CACHE_MB = "0" }))
    assert.are.same({ "k0123456789abcdef0123456789abcdef.kso" }, kernel_files(dir))
    for _, u in ipairs(user) do
      assert.are.equal("the user's own " .. u, read(dir .. "/" .. u))
    end
    rm(dir)
  end)

  it("every setting with a bad value is told once, by name, and the default used", function()
    local dir = tmpdir()
    local bad = { LACC_THREADS = "two", LACC_VERBOSE = "maybe", LACC_STRIPS = "nah",
                  LACC_CACHE_MB = "lots", LACC_CC_TIMEOUT = "-1", LACC_RECYCLE_MB = "1e99" }
    local env = { LACC_CACHE = dir }
    for k, v in pairs(bad) do env[k] = v end
    -- large enough to start the pool, and an 8 MB array freed (kept for reuse)
    local big = [[;local a = lacc.run(lacc.generate({1000000}, function(i) return i end))
      io.write(";", string.format("%.0f", tonumber(lacc.run(lacc.sum(a)):get()))); a:free()]]
    local out = child(program(5, 5) .. ";" .. program(5, 6) .. big, env)
    assert.truthy(out:find(expected(5, 5) .. expected(5, 6) .. ";500000500000", 1, true), out)
    for k, v in pairs(bad) do
      local _, n = out:gsub("ignoring " .. k:gsub("_", "%%_") .. "=" .. v:gsub("[%-%.]", "%%%0"), "")
      assert.are.equal(1, n, k .. ": " .. out)
    end
    -- good values say nothing
    out = child(program(5, 5), { LACC_CACHE = dir, LACC_THREADS = "1", LACC_VERBOSE = "0",
                                 LACC_STRIPS = "off", LACC_CACHE_MB = "64", LACC_CC_TIMEOUT = "30" })
    assert.are.equal(expected(5, 5), out)
    rm(dir)
  end)

  it("a failed build leaves no temporary files; many LACC_CFLAGS words work", function()
    local dir, tmp = tmpdir(), tmpdir()
    local env = { LACC_CACHE = dir, TMPDIR = tmp, LACC_CFLAGS = "-O2 -include /nonexistent/x.h" }
    local out = child(program(2, 2), env)
    assert.truthy(out:find("the C compiler failed on generated code (check LACC_CFLAGS)", 1, true), out)
    assert.are.same({ "secret" }, ls(dir))
    assert.are.same({}, ls(tmp))
    env.LACC_CFLAGS = string.rep("-O2 ", 100)
    assert.are.equal(expected(2, 2), child(program(2, 2), env))
    env.LACC_CFLAGS = string.rep("-O2 ", 300)
    out = child(program(2, 3), env)
    assert.truthy(out:find(expected(2, 3), 1, true), out)
    assert.truthy(out:find("ignoring LACC_CFLAGS: 300 words", 1, true), out)
    assert.are.same({}, ls(tmp))
    rm(dir)
    rm(tmp)
  end)

  it("processes that miss one kernel at once build it once; a dead builder's claim is taken over", function()
    local dir, work = tmpdir(), tmpdir("755")
    -- a compiler that counts its builds and takes its time, so that the processes overlap
    local cc, count = work .. "/count-cc", work .. "/count"
    write(cc, ("#!/bin/sh\ncase \"$1\" in --version) exec cc --version;; esac\n" ..
      "echo build >> %s\nsleep 0.5\nexec cc \"$@\"\n"):format(quote(count)))
    os.execute("chmod 755 " .. quote(cc))
    local env = { LACC_CACHE = dir, LACC_CC = cc }
    local line = {}
    for i = 1, 4 do
      line[i] = ("%s > %s 2>&1 &"):format(child(program(4, 5), env, { command = true }), quote(work .. "/out" .. i))
    end
    sh("unset LD_PRELOAD; " .. table.concat(line, " ") .. " wait")
    for i = 1, 4 do assert.are.equal(expected(4, 5), read(work .. "/out" .. i)) end
    assert.are.equal("build\n", read(count))   -- one build; the other three waited for its file
    assert.are.same({}, ls(dir, "%.building$"))
    -- a builder killed while it builds leaves its claim: the next process takes it over
    -- (the same compiler, so the same kernel: it hangs while the file "hang" exists)
    local hang = work .. "/hang"
    write(cc, ("#!/bin/sh\ncase \"$1\" in --version) exec cc --version;; esac\n" ..
      "if [ -e %s ]; then exec sleep 986; fi\necho build >> %s\nexec cc \"$@\"\n"):format(quote(hang), quote(count)))
    write(hang, "")
    local t0 = os.time()
    sh(("unset LD_PRELOAD; %s & sleep 1; kill -9 $!; wait"):format(child(program(4, 6), env, { command = true })))
    sh("pkill -f 'sleep [9]86'")
    os.remove(hang)
    assert.are.equal(1, #ls(dir, "%.building$"))
    assert.are.equal(expected(4, 6), child(program(4, 6), env))
    assert.are.equal("build\nbuild\n", read(count))
    assert.are.same({}, ls(dir, "%.building$"))
    assert.truthy(os.time() - t0 < 30)
    rm(dir)
    rm(work)
  end)

  it("a compiler that hangs is stopped after LACC_CC_TIMEOUT", function()
    local dir, work = tmpdir(), tmpdir("755")
    local cc = work .. "/hang-cc"
    write(cc, "#!/bin/sh\ncase \"$1\" in --version) echo fake; exit 0;; esac\nexec sleep 987\n")
    os.execute("chmod 755 " .. quote(cc))
    local t0 = os.time()
    local out = child(program(3, 3), { LACC_CACHE = dir, LACC_CC = cc, LACC_CC_TIMEOUT = "1" })
    assert.truthy(out:find("did not finish within 1 s (LACC_CC_TIMEOUT)", 1, true), out)
    assert.truthy(os.time() - t0 < 20)
    assert.are.equal("", sh("pgrep -f 'sleep [9]87'"))   -- its process group was killed
    -- a SIGINT (^C) stops it too, though it runs in a process group of its own
    t0 = os.time()
    out = child([[local pid = io.open("/proc/self/stat"):read("*l"):match("^(%d+)")
      os.execute("(sleep 0.5; kill -INT " .. pid .. ") &")
      ]] .. program(3, 3), { LACC_CACHE = dir, LACC_CC = cc })
    assert.truthy(out:find("interrupted", 1, true), out)
    assert.truthy(os.time() - t0 < 20)
    assert.are.equal("", sh("pgrep -f 'sleep [9]87'"))
    out = child(program(3, 3), { LACC_CACHE = dir, LACC_CC_TIMEOUT = "soon" })
    assert.truthy(out:find(expected(3, 3), 1, true), out)
    assert.truthy(out:find("ignoring LACC_CC_TIMEOUT=soon", 1, true), out)
    rm(dir)
    rm(work)
  end)
end)

describe("programs too large to compile #opt", function()
  -- match over 4096 constructors: 4.3 MB of C, which gcc takes a minute over at -O1
  local n = 4096
  local cons = {}
  for c = 1, n do cons[c] = c % 2 == 1 and { "C" .. c, "i32" } or { "C" .. c } end
  local T = lacc.data("Huge", cons)
  local function matches(k, xs)
    local cases = {}
    for c = 1, n do
      if c % 2 == 1 then cases["C" .. c] = function(x) return x * k + c end
      else cases["C" .. c] = function() return lacc.constant(-c * k, "i32") end end
    end
    return lacc.map(function(v) return lacc.match(v, cases) end, xs)
  end
  for _, backend in ipairs(H.backends) do
    if backend ~= "interp" then
      it("are refused at once with the limit named on " .. backend, function()
        local xs = lacc.fromtable({ { tag = "C1", 5 }, { tag = "C4096" } }, T)
        local progs = {}
        for k = 1, 8 do progs[k] = matches(k, xs) end   -- 34 MB of C (OpenCL C: less)
        local t0 = os.clock()
        local ok, err = pcall(lacc.run, progs, { backend = backend })
        assert.is_false(ok)
        assert.truthy(tostring(err):find("past the limit of 16 MB", 1, true), tostring(err))
        assert.truthy(os.clock() - t0 < 30)
        -- one of them alone is compiled without optimisation, in seconds
        if backend == "cpu" then
          local r = lacc.run(matches(3, xs), { backend = backend })
          H.check_array(r, { 5 * 3 + 1, -4096 * 3 })
        end
      end)
    end
  end
end)

-- The kernel cache in use (issue 4): damaged files, LACC_CACHE_MB, LACC_VERBOSE, the -O2
-- choice for long programs, and a missing compiler.
local seq = H.seq

describe("kernel cache #opt", function()
  it("rebuilds a corrupted cache file instead of loading it", function()
    local dir = os.getenv("LACC_CACHE")
    if not dir then return end   -- runtests.sh always sets it
    local x = seq(4, "i16", function(i) return i end)
    local p = lacc.map(function(v) return v * 3 + 2 end, x)
    local before = lacc.run(p):totable()
    local n = 0
    for name in io.popen('ls "' .. dir .. '"'):lines() do
      if name:match("^k%x+%.kso$") then
        -- replaced by rename, never rewritten in place: this process has it mapped
        local tmp = dir .. "/corrupt.tmp"
        local f = io.open(tmp, "wb")
        f:write("not an ELF file")
        f:close()
        assert(os.rename(tmp, dir .. "/" .. name))
        n = n + 1
        if n > 20 then break end
      end
    end
    assert.is_true(n > 0)
    -- a fresh process sees only the disk cache
    local cmd = ([[%s -e 'local lacc = require "lacc"; local x = lacc.fromtable({1,2,3,4}, "i16");
      io.write(table.concat(lacc.run(lacc.map(function(v) return v * 3 + 2 end, x)):totable(), ","))']])
      :format(H.vm)
    local h = io.popen(cmd .. " 2>&1")
    local out = h:read("a")
    h:close()
    assert.are.equal(table.concat(before, ","), out)
  end)

  it("keeps the disk cache within LACC_CACHE_MB, evicting the least recently used", function()
    local dir = os.tmpname()
    os.remove(dir)
    local function run_child(body, mb)
      local cmd = ([[%sLACC_CACHE='%s' %s -e 'local lacc = require "lacc"; local x = lacc.fromtable({1,2,3,4}, "i32");
        io.write(table.concat(lacc.run(lacc.map(function(v) return %s end, x)):totable(), ","))' 2>&1]])
        :format(mb and ("LACC_CACHE_MB=" .. mb .. " ") or "", dir, H.vm, body)
      local h = io.popen(cmd)
      local out = h:read("a")
      h:close()
      return out
    end
    local function kernels()
      local files = {}
      for name in io.popen(("ls '%s'"):format(dir)):lines() do
        if name:match("^k%x+%.kso$") then
          local h = io.popen(("stat -c %%s '%s/%s'"):format(dir, name))
          files[name] = tonumber(h:read("a"))
          h:close()
        end
      end
      return files
    end
    local function names(t)
      local r = {}
      for k in pairs(t) do r[#r + 1] = k end
      table.sort(r)
      return r
    end
    assert.are.equal("5,8,11,14", run_child("v * 3 + 2"))          -- A
    local a = names(kernels())
    assert.are.equal(1, #a)
    assert.are.equal("1,4,7,10", run_child("v * 3 - 2"))           -- B
    local ab = kernels()
    local b
    for k in pairs(ab) do if k ~= a[1] then b = k end end
    assert.truthy(b)
    assert.are.equal("5,8,11,14", run_child("v * 3 + 2"))          -- A again: now the newer
    -- C pushes the total past the limit: B, the least recently used, goes
    local mb = (ab[a[1]] + ab[b] + 4096) / 1048576
    assert.are.equal("6,12,18,24", run_child("v * 3 * 2", mb))
    local left = kernels()
    assert.truthy(left[a[1]], "A was used last before C: kept")
    assert.is_nil(left[b], "B was the least recently used")
    assert.are.equal(2, #names(left))
    -- a limit of 0 keeps no kernel on disk; everything still runs
    assert.are.equal("1,4,7,10", run_child("v * 3 - 2", 0))
    assert.are.equal(0, #names(kernels()))
    os.execute(("rm -rf '%s'"):format(dir))
  end)

  it("LACC_VERBOSE reports each first build, once, with the time it took", function()
    local dir = os.tmpname()
    os.remove(dir)
    local cmd = ([[LACC_VERBOSE=1 LACC_CACHE='%s' %s -e 'local lacc = require "lacc";
      local x = lacc.fromtable({1,2,3,4}, "i16"); for _ = 1, 2 do
      io.write(table.concat(lacc.run(lacc.map(function(v) return v * 5 - 1 end, x)):totable(), ","), ";") end' 2>&1]])
      :format(dir, H.vm)
    local function run_child()
      local h = io.popen(cmd)
      local out = h:read("a")
      h:close()
      return out
    end
    local first = run_child()
    local _, n = first:gsub("lacc: compiled kernels %(%d+ bytes of C, the longest loop %d+ " ..
                            "operations%) in [%d.]+ s", "")
    assert.are.equal(1, n, first)
    assert.truthy(first:find("4,9,14,19;4,9,14,19;", 1, true), first)
    assert.are.equal("4,9,14,19;4,9,14,19;", run_child())   -- from the disk cache: nothing to say
    os.execute(("rm -rf '%s'"):format(dir))
  end)

  it("compiles a program with a loop of over 800 operations at -O2, unless LACC_CFLAGS is set", function()
    local dir = os.tmpname()
    os.remove(dir)
    -- a chain of 330 steps of four operations in the element loop: gcc's vectorisers at
    -- -O3 take seconds
    local prog = [[local lacc = require "lacc"; local x = lacc.fromtable({1, 2, 3}, "f64")
      local p = lacc.map(function(v) local a, b = v, v * 0.5
        for _ = 1, 330 do a, b = a * 1.0001 + b, b - a * 0.0001 end return a + b end, x)
      io.write(string.format("%.17g;", lacc.run(p):get(2)))
      io.write(string.format("%.17g;", lacc.run(p, { backend = "interp" }):get(2)))]]
    local function run_child(env)
      local h = io.popen(("%s LACC_VERBOSE=1 LACC_CACHE='%s' %s -e '%s' 2>&1"):format(env, dir, H.vm, prog))
      local out = h:read("a")
      h:close()
      return out
    end
    local out = run_child("")
    assert.truthy(out:find("the longest loop %d+ operations, at %-O2%) in"), out)
    local got, want = out:match("([^;\n]+);([^;]+);$")
    assert.are.equal(want, got, out)
    out = run_child("LACC_CFLAGS=-O1")
    assert.truthy(out:find("the longest loop %d+ operations%) in"), out)
    assert.is_nil(out:find("-O2", 1, true), out)
    assert.are.equal(want, out:match("([^;\n]+);[^;]+;$"), out)
    os.execute(("rm -rf '%s'"):format(dir))
  end)

  it("a process whose Lua state closes after parallel work exits cleanly", function()
    -- closing the state unloads the C module; the pool's workers must not be left
    -- waiting in unmapped code (caught under make check-asan, whose sanitizers the child
    -- keeps: H.vm_sh, without LeakSanitizer, whose exit-time tracer itself crashed at
    -- times in such a process, "Tracer caught signal 11")
    local cmd = ([[%s -e 'local lacc = require "lacc"
      local a = lacc.run(lacc.generate({ 300000 }, function(i) return lacc.cast(i, "f64") end))
      io.write(lacc.run(lacc.sum(a)):get()); os.exit(0, true)' 2>&1; echo " rc=$?"]])
      :format(H.vm)
    for _ = 1, 3 do
      local out = H.vm_sh(cmd)
      assert.truthy(out:find("^45000150000%.?0? rc=0\n$"), out)
    end
  end)

  it("without a working compiler warns once and runs the interpreter", function()
    local cmd = ([[LACC_CC=/nonexistent/cc %s -e 'local lacc = require "lacc"; local x = lacc.fromtable({1,2,3,4}, "i16");
      for _ = 1, 2 do io.write(table.concat(lacc.run(lacc.map(function(v) return v * 3 + 2 end, x)):totable(), ","), ";") end']])
      :format(H.vm)
    local h = io.popen(cmd .. " 2>&1")
    local out = h:read("a")
    h:close()
    local _, warnings = out:gsub("no C compiler %('/nonexistent/cc' failed%)", "")
    assert.are.equal(1, warnings)
    assert.truthy(out:find("5,8,11,14;5,8,11,14;", 1, true))
  end)
end)
