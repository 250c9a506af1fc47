-- Data in and out (issue 20): packed bytes (frombytes / tobytes, and on LuaJIT fromptr /
-- ptr), the rank-1 fast paths of fromtable / totable / get / set, NumPy's .npy files
-- (written and checked by NumPy itself) and PNG images (written byte by byte here with
-- zlib from Python, not with libpng).
local H = require "helper"
local R = require "intref"
local lacc = H.lacc
local JIT = type(jit) == "table"
local PY = "env -u LD_PRELOAD /usr/bin/python3"   -- not under make check-asan's sanitizers

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. d))
  return d
end

local function py(script)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(script)
  f:close()
  local p = assert(io.popen(PY .. " " .. path .. " 2>&1"))
  local out = p:read("*a")
  p:close()
  os.remove(path)
  return out
end

local function bytes(...) return string.char(...) end

describe("frombytes and tobytes", function()
  it("read and write the elements as C stores them (hand-written bytes)", function()
    local a = lacc.frombytes(bytes(0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0x80), "f64")
    assert.are.same({ 2 }, a:shape())
    assert.are.equal(1.5, a:get(1))
    assert.are.equal(-math.huge, 1 / a:get(2))   -- -0.0
    local i = lacc.frombytes(bytes(0xFE, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0), "i32", { 2, 1 })
    assert.are.same({ { -2 }, { 1 } }, i:totable())
    assert.are.equal(bytes(0xFE, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0), i:tobytes())
    -- bools: one byte each, anything but 0 reads as true and writes back as 1
    local b = lacc.frombytes(bytes(0, 1, 7), "bool")
    assert.are.same({ false, true, true }, b:totable())
    assert.are.equal(bytes(0, 1, 1), b:tobytes())
  end)

  it("packs a tuple's fields in order without padding", function()
    local T = lacc.tuple("u8", "i16", "f32")
    local a = lacc.fromtable({ { 1, -2, 0.5 }, { 255, 300, -1 } }, T)
    local s = a:tobytes()
    assert.are.equal(14, #s)
    assert.are.equal(bytes(1, 0xFE, 0xFF, 0, 0, 0, 0x3F, 255, 0x2C, 0x01, 0, 0, 0x80, 0xBF), s)
    assert.are.same(a:totable(), lacc.frombytes(s, T, { 2 }):totable())
  end)

  it("round-trips every scalar type, extremes and NaN included", function()
    H.seed(2001)
    for _, t in ipairs { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" } do
      for _, sh in ipairs { {}, { 0 }, { 1 }, { 7 }, { 3, 5 }, { 2, 0, 3 } } do
        local a = H.random_array(t, sh)
        local s = a:tobytes()
        local b = lacc.frombytes(s, t, sh)
        assert.are.same(a:shape(), b:shape())
        assert.are.equal(s, b:tobytes(), t)
      end
    end
    local f = lacc.fromtable({ 0 / 0, -0.0, math.huge, 1e-310 }, "f64")
    assert.are.equal(f:tobytes(), lacc.frombytes(f:tobytes(), "f64"):tobytes())
  end)

  it("takes the results of runs, on every backend", function()
    for _, b in ipairs(H.backends) do
      local r = lacc.run(lacc.generate({ 3 }, function(i) return lacc.cast(i, "f32") * 0.5 end),
                         { backend = b })
      assert.are.equal(lacc.fromtable({ 0.5, 1, 1.5 }, "f32"):tobytes(), r:tobytes())
      local back = lacc.run(lacc.map(function(x) return x + 1 end, lacc.frombytes(r:tobytes(), "f32")),
                            { backend = b })
      assert.are.same({ 1.5, 2, 2.5 }, back:totable())
    end
  end)
end)

if JIT then
  describe("fromptr and ptr (LuaJIT)", function()
    local ffi = require "ffi"
    it("copy from a pointer, and point into an array's storage", function()
      local buf = ffi.new("double[6]", { 1, 2, 3, 4, 5, 6 })
      local a = lacc.fromptr(buf, "f64", { 2, 3 })
      buf[0] = 99   -- a copy: the array keeps 1
      assert.are.same({ { 1, 2, 3 }, { 4, 5, 6 } }, a:totable())
      local p = a:ptr()
      assert.are.equal(6, p[5])
      p[5] = -1
      assert.are.equal(-1, a:get(2, 3))
      local r = lacc.run(lacc.map(function(x) return x * 2 end, a))
      assert.are.same({ { 2, 4, 6 }, { 8, 10, -2 } }, r:totable())
    end)
  end)
end

describe("the rank-1 fast paths", function()
  it("agree with the per-element path on every scalar type", function()
    local vals = {
      i8 = { 127, -128, 300, -1 }, u8 = { 255, 0, 256, 511 }, i16 = { 32767, -32768, 70000, 5 },
      u16 = { 65535, 65536, 1, 0 }, i32 = { 2147483647, -2147483648, 4294967297, -7 },
      u32 = { 4294967295, 4294967296, 3, 0 }, f32 = { 0.1, -0.0, 0 / 0, 1e39 },
      f64 = { 0.1, -0.0, 0 / 0, -math.huge }, bool = { true, false, false, true },
    }
    for t, list in pairs(vals) do
      local fast = lacc.fromtable(list, t)            -- one row at once
      local slow = lacc.array(t, { #list })
      for i, v in ipairs(list) do slow:set(i, v) end   -- set takes the fast path too: compare
      local nested = lacc.fromtable({ list }, t)       -- the general path for rank 2
      local got, want = fast:totable(), {}
      for i, v in ipairs(list) do
        if R.bits[t] then want[i] = R.wrap(t, R.I(v))
        elseif t == "f32" then want[i] = H.f32(v)
        else want[i] = v end
      end
      for i = 1, #list do
        local ok = (R.bits[t] and R.eq(got[i], want[i])) or got[i] == want[i]
                   or (got[i] ~= got[i] and want[i] ~= want[i])
        assert(ok, ("%s element %d: %s, expected %s"):format(t, i, tostring(got[i]), tostring(want[i])))
        assert.are.equal(tostring(got[i]), tostring(fast:get(i)))
        assert.are.equal(tostring(got[i]), tostring(slow:get(i)))
        assert.are.equal(tostring(got[i]), tostring(nested:get(1, i)))
      end
      assert.are.equal(fast:tobytes(), slow:tobytes())
    end
  end)

  it("give the per-element path's errors", function()
    local a = lacc.fromtable({ 1, 2, 3 }, "i32")
    local ok, err = pcall(a.get, a, 4)
    assert.is_false(ok)
    assert.truthy(err:find("out of bounds", 1, true))
    ok, err = pcall(a.set, a, 1, 1.5)
    assert.is_false(ok)
    assert.truthy(err:find("expected an integer for i32, got 1.5", 1, true))
    ok, err = pcall(a.set, a, 1, "x")
    assert.is_false(ok)
    assert.truthy(err:find("expected an integer for i32", 1, true), err)
    a:free()
    ok, err = pcall(a.get, a, 1)
    assert.is_false(ok)
    assert.truthy(err:find("get", 1, true))
  end)

  it("report a hole in a table the same way on both VMs", function()
    local ok, err = pcall(lacc.fromtable, { 1, nil, 3 }, "f64")
    assert.is_false(ok)
    assert.truthy(err:find("fromtable: a hole (nil) at position 2 of dimension 1", 1, true), err)
    local t = { 1, 2 }
    t[5] = 5
    ok, err = pcall(lacc.fromtable, t, "i32")
    assert.is_false(ok)
    assert.truthy(err:find("a hole (nil)", 1, true), err)
  end)
end)

describe("NumPy .npy files", function()
  local dir = tmpdir()
  local dtypes = { "?", "<i1", "<i2", "<i4", "<i8", "<u1", "<u2", "<u4", "<u8", "<f4", "<f8",
                   ">i2", ">i4", ">u8", ">f4", ">f8" }

  it("round-trip NumPy -> lacc -> NumPy bit for bit, every dtype, NaN payloads and -0", function()
    local out = py(([=[
import numpy as np
d = %q
rng = np.random.default_rng(7)
for k, t in enumerate(%s):
    dt = np.dtype(t)
    for shape in [(), (0,), (5,), (3, 4), (2, 1, 3)]:
        n = int(np.prod(shape))
        raw = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8).tobytes()
        a = np.frombuffer(raw, dtype=dt).reshape(shape).copy()
        if dt.kind == 'b': a = (np.frombuffer(raw, dtype=np.uint8)[:n] & 1).astype(bool).reshape(shape)
        if dt.kind == 'f' and n >= 3:
            f = a.reshape(-1)
            f[0] = -0.0
            f[1] = np.nan
            f.view(dt.str.replace('f', 'u'))[2] = 0x7ff4000000000123 if dt.itemsize == 8 else 0x7fa00321
        np.save('%%s/in_%%d_%%d.npy' %% (d, k, len(shape) + n), a)
s = np.array([(1, 2.5, True), (-3, np.nan, False)], dtype=[('a', '<i2'), ('b', '>f8'), ('c', '?')])
np.save(d + '/in_struct.npy', s)
print('ok')
]=]):format(dir, "['" .. table.concat(dtypes, "','") .. "']"))
    assert.truthy(out:find("ok"), out)
    local names = {}
    local p = io.popen("ls " .. dir)
    for name in p:lines() do names[#names + 1] = name end
    p:close()
    assert.is_true(#names > 60)
    for _, name in ipairs(names) do
      local a = lacc.load(dir .. "/" .. name)
      a:save(dir .. "/out" .. name:sub(3))
    end
    out = py(([=[
import numpy as np, os
d = %q
bad = []
for name in sorted(os.listdir(d)):
    if not name.startswith('in_'): continue
    a = np.load(d + '/' + name)
    b = np.load(d + '/out' + name[2:])
    if a.shape != b.shape: bad.append(name + ' shape'); continue
    def native(x): return x.copy() if x.dtype.isnative else x.byteswap().view(x.dtype.newbyteorder('='))
    if a.dtype.names:
        same = all(native(a[f]).tobytes() == b[g].tobytes() for f, g in zip(a.dtype.names, b.dtype.names))
    else:
        same = native(a).tobytes() == b.tobytes()
    if not same: bad.append(name)
print('bad:', bad)
]=]):format(dir))
    assert.truthy(out:find("bad: []", 1, true), out)
  end)

  it("loads what NumPy wrote with the right values", function()
    local out = py(([=[
import numpy as np
np.save(%q + '/v.npy', np.array([[1, -2, 3], [4, 5, -6]], dtype='>i4'))
np.save(%q + '/s.npy', np.array([(1, 2.5)], dtype=[('x', '<u1'), ('y', '<f4')]))
for v in [(2, 0), (3, 0)]:
    with open(%q + '/v%%d.npy' %% v[0], 'wb') as f:
        np.lib.format.write_array(f, np.array([[7, -8]], dtype='<i2'), version=v)
print('ok')
]=]):format(dir, dir, dir))
    assert.truthy(out:find("ok"), out)
    local v = lacc.load(dir .. "/v.npy")
    assert.are.equal("i32", v:type())
    assert.are.same({ { 1, -2, 3 }, { 4, 5, -6 } }, v:totable())
    local s = lacc.load(dir .. "/s.npy")
    assert.are.equal("(u8,f32)", s:type())
    assert.are.same({ { 1, 2.5 } }, s:totable())
    for _, major in ipairs { 2, 3 } do   -- version 2.0 and 3.0 headers (4-byte lengths)
      local a = lacc.load(dir .. "/v" .. major .. ".npy")
      assert.are.equal("i16", a:type())
      assert.are.same({ { 7, -8 } }, a:totable())
    end
  end)

  it("reads Python 2's long extents, many fields and long names; refuses versions NumPy refuses", function()
    -- a version 1.0 file of header text h and data bytes, built here byte by byte
    local function npy(path, major, minor, h, data)
      local n = 10 + #h + 1
      h = h .. (" "):rep((64 - n % 64) % 64) .. "\n"
      local f = assert(io.open(path, "wb"))
      f:write("\147NUMPY", string.char(major, minor, #h % 256, math.floor(#h / 256)), h, data)
      f:close()
    end
    -- NumPy's own test file win64python2.npy says (2L,): as Python 2 wrote it
    local function le8(v)
      local t = {}
      for i = 1, 8 do t[i] = string.char(v % 256); v = math.floor(v / 256) end
      return table.concat(t)
    end
    npy(dir .. "/py2.npy", 1, 0, "{'descr': '<i8', 'fortran_order': False, 'shape': (2L,), }", le8(5) .. le8(7))
    local a = lacc.load(dir .. "/py2.npy")
    assert.are.equal("i64", a:type())
    assert.are.same({ 5, 7 }, { tonumber(a[1]), tonumber(a[2]) })
    npy(dir .. "/py2b.npy", 1, 0, "{'descr': '<i8', 'fortran_order': False, 'shape': (1L, 2L), }", le8(1) .. le8(2))
    assert.are.same({ 1, 2 }, lacc.load(dir .. "/py2b.npy"):totable()[1])
    for _, v in ipairs { { 1, 1 }, { 2, 2 }, { 4, 0 } } do   -- NumPy reads 1.0, 2.0 and 3.0 alone
      npy(dir .. "/ver.npy", v[1], v[2], "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", le8(1))
      local ok, err = pcall(lacc.load, dir .. "/ver.npy")
      assert.is_false(ok)
      assert.truthy(err:find((".npy version %d.%d is not one lacc reads (1.0, 2.0 or 3.0)"):format(v[1], v[2]), 1, true), err)
    end
    -- 100 fields (more than 64), the last named with 300 characters, written by NumPy
    local out = py(([=[
import numpy as np
names = ['f%%d' %% i for i in range(99)] + ['n' * 300]
a = np.zeros(3, dtype=[(n, '<i2') for n in names])
for i, n in enumerate(names): a[n] = [i, -i, 2 * i]
np.save(%q + '/many.npy', a)
print('ok')
]=]):format(dir))
    assert.truthy(out:find("ok"), out)
    local m = lacc.load(dir .. "/many.npy")
    local t = m:totable()
    assert.are.equal(3, #t)
    for i = 1, 100 do
      assert.are.same({ i - 1, 1 - i, 2 * (i - 1) }, { t[1][i], t[2][i], t[3][i] })
    end
  end)

  it("says what is wrong with a file it cannot hold, and leaves nothing half-written", function()
    local out = py(([=[
import numpy as np
d = %q
np.save(d + '/f16.npy', np.zeros(3, dtype=np.float16))
np.save(d + '/c64.npy', np.zeros(3, dtype=np.complex64))
np.save(d + '/fort.npy', np.asfortranarray(np.zeros((2, 3))))
np.save(d + '/sub.npy', np.zeros(2, dtype=[('a', '<i4', (2,))]))
raw = open(d + '/f16.npy', 'rb').read()
good = open(d + '/fort.npy', 'rb').read()
np.save(d + '/ok.npy', np.arange(10, dtype='<i8'))
ok = open(d + '/ok.npy', 'rb').read()
open(d + '/trunc.npy', 'wb').write(ok[:-8])
open(d + '/long.npy', 'wb').write(ok + b'12345678')
open(d + '/magic.npy', 'wb').write(b'XNUMPY' + ok[6:])
open(d + '/head.npy', 'wb').write(ok[:20])
print('ok')
]=]):format(dir))
    assert.truthy(out:find("ok"), out)
    local cases = {
      { "f16.npy", "dtype '<f2' is none lacc has" }, { "c64.npy", "dtype '<c8' is none lacc has" },
      { "fort.npy", "Fortran order" }, { "sub.npy", "sub-array" },
      { "trunc.npy", "the header says 80 bytes of data, the file holds fewer" },
      { "long.npy", "the file holds more" }, { "magic.npy", "is not a .npy file" },
      { "head.npy", "ends inside its header" }, { "missing.npy", "cannot open" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(lacc.load, dir .. "/" .. c[1])
      assert.is_false(ok, c[1])
      assert.truthy(err:find(c[2], 1, true), c[1] .. ": " .. err)
      assert.truthy(err:find("data_io_spec.lua", 1, true), err)
    end
    local a = lacc.fromtable({ 1, 2 }, "i32")
    local ok, err = pcall(a.save, a, dir .. "/no/such/dir/x.npy")
    assert.is_false(ok)
    assert.truthy(err:find("save: cannot write", 1, true), err)
    local m = lacc.fromtable({ { tag = "Nothing" } }, lacc.Maybe("i32"))
    ok, err = pcall(m.save, m, dir .. "/m.npy")
    assert.is_false(ok)
    assert.truthy(err:find("sum type", 1, true), err)
    -- no temporary file is left beside the targets
    local p = io.popen("ls " .. dir)
    for name in p:lines() do assert.is_nil(name:find("tmp", 1, true), name) end
    p:close()
  end)
end)

describe("the leaves form (lacc.mpi's bytes, sums included)", function()
  local core = require("lacc.util").core
  local u32 = function(v) return string.char(v % 256, math.floor(v / 256) % 256, 0, 0) end
  local little = JIT and require("ffi").abi("le") or (not JIT and string.unpack("<i4", string.pack("=i4", 1)) == 1)
  it("is a u32 constructor index, then every alternative's leaves (hand-computed)", function()
    if not little then return end   -- the bytes below are little-endian
    local M = lacc.Maybe("i32")
    local a = lacc.fromtable({ { tag = "Just", 5 }, { tag = "Nothing" }, { tag = "Just", -2 } }, M)
    local want = u32(1) .. u32(5) .. u32(0) .. u32(0) .. u32(1) .. string.char(0xFE, 0xFF, 0xFF, 0xFF)
    assert.are.equal(M.sig or a:type(), a:type())
    assert.are.equal(8, core.type_leaf_bytes(a:type()))
    assert.are.equal(want, core.array_to_leaves(a))
    assert.are.same(a:totable(), core.array_from_leaves(a:type(), { 3 }, want, #want):totable())
  end)
  it("round-trips nested sums and tuples under every layout, and empty arrays", function()
    local T = lacc.Either(lacc.Maybe("f64"), lacc.tuple("i8", "f32", "bool"))
    local vals = {}
    for i = 1, 23 do
      if i % 3 == 0 then vals[i] = { tag = "Left", { tag = "Nothing" } }
      elseif i % 3 == 1 then vals[i] = { tag = "Left", { tag = "Just", i * 0.25 - 3 } }
      else vals[i] = { tag = "Right", { (i * 37) % 256 - 128, i / 8, i % 2 == 0 } } end
    end
    for _, layout in ipairs { "compact", "rtu", "unboxed", "compact_radix" } do
      lacc.set_layout(layout)
      local a = lacc.fromtable(vals, T)
      local s = core.array_to_leaves(a)
      assert.are.equal(23 * core.type_leaf_bytes(a:type()), #s)
      assert.are.same(a:totable(), core.array_from_leaves(a:type(), { 23 }, s, #s):totable())
      local e = lacc.fromtable({}, T)
      assert.are.equal("", core.array_to_leaves(e))
      assert.are.equal(0, core.array_from_leaves(a:type(), { 0 }, "", 0):size())
    end
    lacc.set_layout("compact")
  end)
  it("is the packed form for types without a sum", function()
    local a = lacc.fromtable({ { 1, 2.5 }, { -3, 0 / 0 } }, lacc.tuple("i16", "f64"))
    assert.are.equal(a:tobytes(), core.array_to_leaves(a))
    assert.are.equal(core.type_bytes(a:type()), core.type_leaf_bytes(a:type()))
  end)
  it("refuses a constructor index past the sum's and a wrong length, naming them", function()
    local t = lacc.fromtable({ { tag = "Nothing" } }, lacc.Maybe("i32")):type()
    local ok, err = pcall(core.array_from_leaves, t, { 2 }, u32(0) .. u32(0) .. u32(2) .. u32(0), 16)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("element 2 of " .. t .. " names no constructor", 1, true), err)
    ok, err = pcall(core.array_from_leaves, t, { 2 }, u32(0), 4)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("2 elements of " .. t .. " take 16 bytes, got 4", 1, true), err)
    -- an inactive alternative's leaves are not read: any bytes there
    local a = core.array_from_leaves(t, { 1 }, u32(0) .. u32(77), 8)
    assert.are.same({ { tag = "Nothing" } }, a:totable())
  end)
end)

describe("read_png", function()
  local dir = tmpdir()
  local out = py(([=[
import zlib, struct
d = %q
def png(name, w, h, ctype, depth, rows, plte=None, trns=None):
    def chunk(t, x): return struct.pack('>I', len(x)) + t + x + struct.pack('>I', zlib.crc32(t + x) & 0xffffffff)
    raw = b''.join(b'\x00' + r for r in rows)
    out = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, depth, ctype, 0, 0, 0))
    if plte: out += chunk(b'PLTE', plte)
    if trns: out += chunk(b'tRNS', trns)
    out += chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')
    open(d + '/' + name, 'wb').write(out)
png('g8.png', 3, 2, 0, 8, [bytes([0, 128, 255]), bytes([1, 2, 3])])
png('g16.png', 2, 1, 0, 16, [struct.pack('>HH', 65535, 258)])
png('ga.png', 2, 1, 4, 8, [bytes([10, 20, 30, 40])])
png('rgb.png', 2, 1, 2, 8, [bytes([1, 2, 3, 4, 5, 6])])
png('rgba.png', 1, 2, 6, 8, [bytes([9, 8, 7, 6]), bytes([5, 4, 3, 2])])
png('rgba16.png', 1, 1, 6, 16, [struct.pack('>HHHH', 1, 2, 3, 65534)])
png('pal.png', 2, 1, 3, 8, [bytes([1, 0])], plte=bytes([255, 0, 0, 0, 255, 0]))
png('palt.png', 2, 1, 3, 8, [bytes([1, 0])], plte=bytes([255, 0, 0, 0, 255, 0]), trns=bytes([128]))
png('g1.png', 8, 1, 0, 1, [bytes([0b10100000])])
open(d + '/trunc.png', 'wb').write(open(d + '/rgb.png', 'rb').read()[:40])
open(d + '/text.png', 'wb').write(b'not a png at all')
print('ok')
]=]):format(dir))

  it("gives the samples as stored, for every colour type and depth", function()
    assert.truthy(out:find("ok"), out)
    local want = {
      ["g8.png"] = { "u8", { { 0, 128, 255 }, { 1, 2, 3 } } },
      ["g16.png"] = { "u16", { { 65535, 258 } } },
      ["ga.png"] = { "(u8,u8)", { { { 10, 20 }, { 30, 40 } } } },
      ["rgb.png"] = { "(u8,u8,u8)", { { { 1, 2, 3 }, { 4, 5, 6 } } } },
      ["rgba.png"] = { "(u8,u8,u8,u8)", { { { 9, 8, 7, 6 } }, { { 5, 4, 3, 2 } } } },
      ["rgba16.png"] = { "(u16,u16,u16,u16)", { { { 1, 2, 3, 65534 } } } },
      ["pal.png"] = { "(u8,u8,u8)", { { { 0, 255, 0 }, { 255, 0, 0 } } } },
      ["palt.png"] = { "(u8,u8,u8,u8)", { { { 0, 255, 0, 255 }, { 255, 0, 0, 128 } } } },
      ["g1.png"] = { "u8", { { 255, 0, 255, 0, 0, 0, 0, 0 } } },   -- scaled to 0..255
    }
    for name, w in pairs(want) do
      local a = lacc.read_png(dir .. "/" .. name)
      assert.are.equal(w[1], a:type(), name)
      assert.are.same(w[2], a:totable(), name)
    end
  end)

  it("reads back what write_png wrote", function()
    local img = lacc.fromtable({ { 0, 64, 255 }, { 7, 8, 9 } }, "u8")
    img:write_png(dir .. "/w.png")
    assert.are.same(img:totable(), lacc.read_png(dir .. "/w.png"):totable())
  end)

  it("says what is wrong with a file", function()
    for name, msg in pairs { ["trunc.png"] = "read_png: ", ["text.png"] = "is not a PNG file",
                             ["missing.png"] = "cannot open" } do
      local ok, err = pcall(lacc.read_png, dir .. "/" .. name)
      assert.is_false(ok)
      assert.truthy(err:find(msg, 1, true), err)
    end
  end)
end)
