-- Files under hostile conditions (issue 49): save and write_png on a full disk keep the
-- file that was there; the mode of a file they replace is kept and a new one gets the
-- umask's; a name as long as NAME_MAX allows can be written; every file error names the
-- function, the file and the system's reason; shapes past 2^40 elements (frombytes, a
-- .npy header) are errors of their own, the same on Lua 5.4 and LuaJIT.
-- A full disk is a file size limit (ulimit -f with SIGXFSZ ignored: write() fails with
-- EFBIG) in a child process, which needs no privilege; and, where root may, a small tmpfs
-- filled up and a device node of /dev/full's (ENOSPC).
local H = require "helper"
local lacc = H.lacc
local JIT = type(jit) == "table"

local tmpdir = H.tmpdir
local function rmdir(d) os.execute("rm -rf " .. H.quote(d)) end

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- The permission bits of path, as octal text ("600").
local function mode(path) return (H.sh("stat -c %a " .. H.quote(path)):gsub("%s+$", "")) end

-- The names of dir's entries that are no file the test made (temporaries left behind).
local function leftovers(dir)
  local out = {}
  for name in H.sh("ls -A " .. H.quote(dir)):gmatch("[^\n]+") do
    if name:find("^%.") or name:find("tmp", 1, true) then out[#out + 1] = name end
  end
  return out
end

-- body (Lua source, with lacc in scope) run by a child VM after the shell commands setup;
-- what it prints, stderr too.
local function child(setup, body)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write('local lacc = require "lacc"\n', body)
  f:close()
  local p = assert(io.popen(("sh -c %s 2>&1"):format(H.quote(setup .. "; exec " .. H.vm .. " " ..
    H.quote(path)))))
  local out = p:read("*a")
  p:close()
  os.remove(path)
  return out
end

-- A child's script: noise (which compresses to nothing smaller) as a u8 array of 120 x 360
-- bytes and an RGB image of 120 x 120, each 43200 bytes; then the lines of body.
local NOISE = [[
local t, x = {}, 1
for i = 1, 43200 do x = (x * 75 + 74) % 65537; t[i] = string.char(x % 256) end
local noise = table.concat(t)
local grey = lacc.frombytes(noise, "u8", { 120, 360 })
local rgb = lacc.frombytes(noise, "(u8,u8,u8)", { 120, 120 })
local function try(f, ...) local ok, err = pcall(f, ...); print(ok and "ok" or err) end
]]

-- The system's words for an errno, from Lua's own io.open: the same strerror lacc uses.
local function reason_open(path, how)
  local f, err = io.open(path, how or "r")
  if f then f:close() end
  assert(not f, path)
  return (err:gsub("^.-: ", ""))
end

describe("files on a full disk", function()
  local dir = tmpdir()
  teardown(function() rmdir(dir) end)
  local small = lacc.fromtable({ { 1, 2 }, { 3, 4 } }, "u8")

  it("keep the old file, and the error names the function, the file and the reason", function()
    local npy, png = dir .. "/old.npy", dir .. "/old.png"
    small:save(npy)
    small:write_png(png)
    local old_npy, old_png = slurp(npy), slurp(png)
    -- a file size limit below the new files' sizes (8 or 16 KiB: dash counts 512-byte
    -- blocks, bash 1024)
    local out = child('trap "" XFSZ; ulimit -f 16', NOISE .. ([[
try(grey.save, grey, %q)
try(rgb.write_png, rgb, %q)
try(lacc.write_png, %q, grey)
]]):format(npy, png, png))
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(old_npy, slurp(npy))
    assert.are.equal(old_png, slurp(png))
    assert.are.equal(3, #lines, out)
    assert.truthy(lines[1]:find("save: cannot write " .. npy .. ": File too large (at ", 1, true), out)
    assert.truthy(lines[2]:find("write_png: cannot write " .. png .. ": File too large (at ", 1, true), out)
    assert.truthy(lines[3]:find("write_png: cannot write " .. png .. ": File too large (at ", 1, true), out)
    assert.are.same(small:totable(), lacc.load(npy):totable())
    assert.are.same(small:totable(), lacc.read_png(png):totable())
    assert.are.same({}, leftovers(dir))
  end)

  it("on a file system with no room left (a small tmpfs) keep the old file too", function()
    local mnt = tmpdir()
    if H.sh(("mount -t tmpfs -o size=64k tmpfs %s && echo mounted"):format(H.quote(mnt)))
        :find("mounted", 1, true) == nil then
      rmdir(mnt)
      return pending("cannot mount a small file system here (not root?)")
    end
    local ok, err = pcall(function()
      local npy, png = mnt .. "/old.npy", mnt .. "/old.png"
      small:save(npy)
      small:write_png(png)
      local old_npy, old_png = slurp(npy), slurp(png)
      H.sh(("dd if=/dev/zero of=%s/fill bs=4k 2>/dev/null"):format(H.quote(mnt)))
      local grey, rgb = assert(load("local lacc = ...\n" .. NOISE .. "return grey, rgb"))(lacc)
      local enospc = "No space left on device (at "
      local e1 = select(2, pcall(grey.save, grey, npy))
      local e2 = select(2, pcall(rgb.write_png, rgb, png))
      assert.are.equal(old_npy, slurp(npy))
      assert.are.equal(old_png, slurp(png))
      assert.truthy(e1:find("save: cannot write " .. npy .. ": " .. enospc, 1, true), e1)
      assert.truthy(e2:find("write_png: cannot write " .. png .. ": " .. enospc, 1, true), e2)
      assert.are.same({ "fill", "old.npy", "old.png" }, (function()
        local t = {}
        for n in H.sh("ls -A " .. H.quote(mnt)):gmatch("[^\n]+") do t[#t + 1] = n end
        return t
      end)())
    end)
    -- not rm -rf: were the umount to fail, that would empty the file system mounted there
    H.sh("umount " .. H.quote(mnt))
    os.execute("rmdir " .. H.quote(mnt))
    assert(ok, err)
  end)

  it("on a device (a node of /dev/full's, made here) write it in place, never rename over it", function()
    -- a private node: a lacc that renamed over the device would replace this one, not the
    -- system's /dev/full
    local dev = dir .. "/full"
    if not H.sh(("mknod %s c 1 7 && echo made"):format(H.quote(dev))):find("made", 1, true) then
      return pending("cannot make a device node here (not root?)")
    end
    for _, c in ipairs { { "save", function() small:save(dev) end },
                         { "write_png", function() small:write_png(dev) end } } do
      local ok, err = pcall(c[2])
      assert.is_false(ok)
      assert.truthy(err:find(c[1] .. ": cannot write " .. dev .. ": No space left on device (at ",
        1, true), err)
    end
    assert.truthy(H.sh("ls -l " .. H.quote(dev)):find("^c"))   -- still the character device
    os.remove(dev)
    assert.are.same({}, leftovers(dir))
  end)
end)

describe("file modes", function()
  local dir = tmpdir()
  teardown(function() rmdir(dir) end)

  -- Under umask u: a new .npy and .png, and over each existing file of modes, both again.
  local function run_under(u, modes)
    local body = { NOISE }
    for _, ext in ipairs { "npy", "png" } do
      local write = ext == "npy" and "grey:save(%q)" or "grey:write_png(%q)"
      body[#body + 1] = write:format(("%s/new-%s.%s"):format(dir, u, ext))
      for _, m in ipairs(modes) do
        local p = ("%s/old-%s-%s.%s"):format(dir, u, m, ext)
        lacc.fromtable({ 1 }, "u8"):save(p)   -- the file there before, whatever its format
        assert(os.execute("chmod " .. m .. " " .. H.quote(p)))
        body[#body + 1] = write:format(p)
      end
    end
    body[#body + 1] = 'print("done")'
    local out = child("umask " .. u, table.concat(body, "\n"))
    assert.truthy(out:find("done"), out)
  end

  it("a new file gets what the umask leaves of 0666", function()
    run_under("022", {})
    run_under("077", {})
    for _, ext in ipairs { "npy", "png" } do
      assert.are.equal("644", mode(("%s/new-022.%s"):format(dir, ext)), ext)
      assert.are.equal("600", mode(("%s/new-077.%s"):format(dir, ext)), ext)
    end
  end)

  it("a file replaced keeps its mode, whatever the umask", function()
    run_under("022", { "600", "640", "604" })
    run_under("077", { "644", "600" })
    for _, ext in ipairs { "npy", "png" } do
      for _, c in ipairs { { "022", "600" }, { "022", "640" }, { "022", "604" }, { "077", "644" },
                           { "077", "600" } } do
        local p = ("%s/old-%s-%s.%s"):format(dir, c[1], c[2], ext)
        assert.are.equal(c[2], mode(p), p)
      end
    end
    -- and holds the new contents
    assert.are.same({ 120, 360 }, lacc.load(dir .. "/old-022-600.npy"):shape())
    assert.are.same({ 120, 360 }, lacc.read_png(dir .. "/old-077-644.png"):shape())
    assert.are.same({}, leftovers(dir))
  end)
end)

describe("file names", function()
  it("as long as NAME_MAX allows can be saved and written (the temporary is short)", function()
    local dir = tmpdir()
    local a = lacc.fromtable({ { 5, 6, 7 } }, "u8")
    for _, ext in ipairs { ".npy", ".png" } do
      local p = dir .. "/" .. ("n"):rep(250 - #ext) .. ext
      if ext == ".npy" then
        a:save(p)
        assert.are.same(a:totable(), lacc.load(p):totable())
      else
        a:write_png(p)
        assert.are.same(a:totable(), lacc.read_png(p):totable())
      end
    end
    assert.are.same({}, leftovers(dir))
    rmdir(dir)
  end)
end)

describe("file errors", function()
  local dir = tmpdir()
  teardown(function() rmdir(dir) end)
  local a = lacc.fromtable({ { 1, 2 } }, "u8")

  local function fails(want, f, ...)
    local ok, err = pcall(f, ...)
    assert.is_false(ok)
    assert.are.equal(want .. " (at ", err:sub(1, #want + 5), err)
    assert.truthy(err:find("files_spec.lua:", 1, true), err)
  end

  it("name the function, the file and the system's reason", function()
    local missing = dir .. "/no/such/dir/x"
    local enoent = reason_open(missing)
    local eisdir = reason_open(dir, "w")
    fails("save: cannot write " .. missing .. ".npy: " .. enoent, a.save, a, missing .. ".npy")
    fails("write_png: cannot write " .. missing .. ".png: " .. enoent, a.write_png, a, missing .. ".png")
    fails("write_png: cannot write " .. missing .. ".png: " .. enoent, lacc.write_png, missing .. ".png", a)
    fails("load: cannot open " .. missing .. ".npy: " .. enoent, lacc.load, missing .. ".npy")
    fails("read_png: cannot open " .. missing .. ".png: " .. enoent, lacc.read_png, missing .. ".png")
    fails("save: cannot write " .. dir .. ": " .. eisdir, a.save, a, dir)
    fails("write_png: cannot write " .. dir .. ": " .. eisdir, a.write_png, a, dir)
    -- a directory opens for reading; the read fails
    fails("load: cannot read " .. dir .. ": " .. eisdir, lacc.load, dir)
    fails("read_png: cannot read " .. dir .. ": " .. eisdir, lacc.read_png, dir)
    assert.are.same({}, leftovers(dir))
  end)
end)

describe("shapes past 2^40 elements", function()
  it("are frombytes's error, the same on both VMs, computed without overflow", function()
    local too = "frombytes: array too large (more than 2^40 elements) (at "
    for _, shape in ipairs { { 2 ^ 32, 2 ^ 32 }, { 2 ^ 20, 2 ^ 21 }, { 2 ^ 64 }, { 2 ^ 62, 2 ^ 62, 0 },
                             { 2 ^ 1000 }, { 3, 2 ^ 40 } } do
      local ok, err = pcall(lacc.frombytes, "", "u8", shape)
      assert.is_false(ok)
      assert.are.equal(too, err:sub(1, #too), err)
    end
    -- 2^40 itself is a count of bytes the string lacks
    local ok, err = pcall(lacc.frombytes, "", "f64", { 2 ^ 20, 2 ^ 20 })
    assert.is_false(ok)
    assert.truthy(err:find("frombytes: 1099511627776 elements of f64 take 8796093022208 bytes, " ..
      "the string has 0 (at ", 1, true), err)
    -- an empty extent first: no element, as the core counts them
    assert.are.same({ 0, 2 ^ 50 }, lacc.frombytes("", "u8", { 0, 2 ^ 50 }):shape())
    if JIT then
      local p = require("ffi").new("uint8_t[1]")
      ok, err = pcall(lacc.fromptr, p, "u8", { 2 ^ 32, 2 ^ 32 })
      assert.is_false(ok)
      assert.truthy(err:find("fromptr: array too large (more than 2^40 elements) (at ", 1, true), err)
    end
  end)

  it("in a .npy header are load's error, naming the file", function()
    local dir = tmpdir()
    -- a version 1.0 header for shape, padded to 64 bytes, and 16 bytes of data
    local function npy(name, shape)
      local h = "{'descr': '<f8', 'fortran_order': False, 'shape': " .. shape .. ", }"
      h = h .. (" "):rep(63 - (10 + #h) % 64) .. "\n"
      local p = dir .. "/" .. name
      local f = assert(io.open(p, "wb"))
      f:write("\147NUMPY\1\0", string.char(#h % 256, math.floor(#h / 256)), h, ("\0"):rep(16))
      f:close()
      return p
    end
    for _, c in ipairs {
      { "(4294967296, 4294967296)", "array too large (more than 2^40 elements)" },
      { "(3, 1099511627776)", "array too large (more than 2^40 elements)" },
      { "(99999999999999999999,)", "extent 1 of the shape does not fit in 64 bits" },
      { "(2, 18446744073709551616)", "extent 2 of the shape does not fit in 64 bits" },
      -- within the limit, but 8 TiB the file does not hold: no allocation is tried
      { "(1099511627776,)", "the header says 8796093022208 bytes of data, the file holds fewer" },
    } do
      local p = npy("s.npy", c[1])
      local ok, err = pcall(lacc.load, p)
      assert.is_false(ok)
      local want = "load: " .. p .. ": " .. c[2] .. " (at "
      assert.are.equal(want, err:sub(1, #want), c[1])
    end
    assert.are.same({ 2 }, lacc.load(npy("ok.npy", "(2,)")):shape())
    rmdir(dir)
  end)
end)

describe("error messages", function()
  it("write a number %d cannot take in full, the same on both VMs (not an internal error)", function()
    local util = require "lacc.util"
    local ok, err = pcall(util.fail, "x: %d of %5d, %d%% %s %d %d", 2 ^ 64, 7, -2 ^ 70, "s", 0 / 0, 1.5)
    assert.is_false(ok)
    local want = "x: 18446744073709551616 of     7, -1180591620717411303424% s nan 1.5 (at "
    assert.are.equal(want, err:sub(1, #want), err)
  end)
end)
