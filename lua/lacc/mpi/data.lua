-- lacc.mpi.data: putting data onto the ranks and off them (lacc.mpi): scatter from one
-- rank, from_blocks (each rank's own rows), load of a .npy file (each rank reads its
-- rows), d:save (each rank writes its rows) and write_png of a distributed array.
-- Owns: the agreement on types and extents before anything is placed or written.
-- Must not: read or write more of a file than a rank's rows where the dtype allows, or
-- leave a file half written where one was (a save goes through a file of its own).
local C = require "lacc.mpi.base"
local unpacked, elem_bytes = C.unpacked, C.elem_bytes
local L, M, agree_on, allgather, alltoall = C.L, C.M, C.agree_on, C.allgather, C.alltoall
local array, balanced, fail, local_shape, me = C.array, C.balanced, C.fail, C.local_shape, C.me
local new_da, nranks, packed, plain, product = C.new_da, C.nranks, C.packed, C.plain, C.product
local rows_before, started, together, util = C.rows_before, C.started, C.together, C.util

-- ---- placing data

-- rank root's parts for scatter: a header (type, shape) and the rows of each rank
local function scatter_parts(a, root, P)
  local parts = {}
  if me() + 1 ~= root then
    for q = 1, P do parts[q] = "" end
    return parts
  end
  if not array.is_array(a) then
    error(("mpi.scatter: expected a host array on rank %d, got %s"):format(root, util.describe(a)), 0)
  end
  local sh = a:shape()
  if #sh < 1 then error("mpi.scatter: expected an array of rank 1 or more, got rank 0", 0) end
  local counts = balanced(sh[1], P)
  local s = packed(a, "mpi.scatter")
  local rowbytes = sh[1] > 0 and #s / sh[1] or 0
  local head = a:type() .. "\n" .. table.concat(sh, ",") .. "\n"
  local at = 0
  for q = 1, P do
    parts[q] = head .. s:sub(at * rowbytes + 1, (at + counts[q]) * rowbytes)
    at = at + counts[q]
  end
  return parts
end

-- scatter(a [, root]): rank root's host array (1-based, default 1; the other ranks pass
-- nil) in balanced blocks of rows, one per rank (collective)
function M.scatter(a, root)
  started("scatter")
  root = root or 1
  local P = nranks()
  if not util.is_integer(root) or root < 1 or root > P then
    fail("mpi.scatter: expected a rank from 1 to %d, got %s", P, util.show(root))
  end
  -- the parts made before the agreement: a root that cannot make them (no array, a freed
  -- one) fails there, not alone
  local ok, parts = pcall(scatter_parts, a, root, P)
  local err = not ok and ("mpi.scatter: " .. tostring(parts):gsub("^mpi%.scatter: ", ""):gsub(" %(at [^)]*%)$", "")) or nil
  local first, text = agree_on(("lacc.mpi.scatter from rank %d"):format(root), not ok, err)
  if first then error(text .. " (at " .. util.where() .. ")", 0) end
  local got = alltoall(parts)[root]
  local t, shs, data = got:match("^([^\n]*)\n([^\n]*)\n(.*)$")
  local sh = {}
  for e in shs:gmatch("%d+") do sh[#sh + 1] = tonumber(e) end
  local counts = balanced(sh[1], P)
  local lsh = local_shape(sh, counts[me() + 1])
  return new_da(unpacked(data, t, lsh), counts, t, #sh)
end

-- from_blocks(block): this rank's block as its rows of a distributed array (collective:
-- the ranks' row counts are all-gathered; their other extents and types must agree)
function M.from_blocks(block)
  started("from_blocks")
  -- what this rank sends, made before the agreement (a freed block fails there)
  local ok, sh = pcall(function()
    if not array.is_array(block) then
      error(("mpi.from_blocks: expected a host array, got %s"):format(util.describe(block)), 0)
    end
    local shape = block:shape()
    if #shape < 1 then error("mpi.from_blocks: expected an array of rank 1 or more, got rank 0", 0) end
    return shape
  end)
  local err = not ok and ("mpi.from_blocks: " .. tostring(sh):gsub("^mpi%.from_blocks: ", ""):gsub(" %(at [^)]*%)$", "")) or nil
  local first, text = agree_on("lacc.mpi.from_blocks", not ok, err)
  if first then error(text .. " (at " .. util.where() .. ")", 0) end
  local sig = block:type() .. ":" .. table.concat(sh, ",", 2)
  local got = allgather(sh[1] .. ";" .. sig)
  local counts, first_sig = {}, got[1]:match("^%d+;(.*)$")
  for q = 1, #got do
    local rows, s = got[q]:match("^(%d+);(.*)$")
    if s ~= first_sig then   -- every rank sees every block: the same error on all
      fail("mpi.from_blocks: rank 1's block is %s, rank %d's %s (types and extents past the first must agree)",
        first_sig, q, s)
    end
    counts[q] = tonumber(rows)
  end
  return new_da(block, counts, block:type(), #sh)
end

-- load(path): a .npy file, each rank reading its own rows (scalar dtypes, C order); other
-- files are read whole by each rank, which keeps its rows
local NPY = { ["b1"] = "bool", ["i1"] = "i8", ["i2"] = "i16", ["i4"] = "i32", ["i8"] = "i64",
              ["u1"] = "u8", ["u2"] = "u16", ["u4"] = "u32", ["u8"] = "u64", ["f4"] = "f32", ["f8"] = "f64" }
local function npy_header(f)
  local magic = f:read(6)
  if magic ~= "\147NUMPY" then return nil end
  local ver = f:read(2)
  if not ver then return nil end
  local nlen = ver:byte(1) == 1 and 2 or 4
  local lb = f:read(nlen)
  if not lb or #lb ~= nlen then return nil end
  local hlen = 0
  for i = nlen, 1, -1 do hlen = hlen * 256 + lb:byte(i) end
  local h = f:read(hlen)
  if not h then return nil end
  local descr = h:match("'descr':%s*'([^']*)'")
  local fortran = h:match("'fortran_order':%s*(%a+)")
  local shs = h:match("'shape':%s*%(([^)]*)%)")
  if not descr or not shs or fortran ~= "False" then return nil end
  local order, code = descr:sub(1, 1), descr:sub(2)
  local little = true   -- LuaJIT has no string.pack; lacc's machines are little-endian
  if string.pack then little = string.pack("=i2", 1):byte(1) == 1 end
  if not NPY[code] or (order == ">" and little) or (order == "<" and not little) then return nil end
  local sh = {}
  for e in shs:gmatch("%d+") do sh[#sh + 1] = tonumber(e) end
  return NPY[code], sh, 6 + 2 + nlen + hlen
end

function M.load(path)
  started("load")
  if type(path) ~= "string" then fail("mpi.load: expected a file name, got %s", util.describe(path)) end
  local P = nranks()
  local f = io.open(path, "rb")
  local t, sh, off
  if f then t, sh, off = npy_header(f) end
  if not (f and t and #sh >= 1) then
    if f then f:close() end
    local a = together("lacc.mpi.load (a file read whole)", function() return plain.load(path) end)
    if #a:shape() < 1 then fail("mpi.load: %s holds an array of rank 0", path) end
    local counts = balanced(a:shape()[1], P)
    local lo = rows_before(counts, me())
    local spec = { { lo + 1, lo + counts[me() + 1] } }
    for d = 2, #a:shape() do spec[d] = L.all end
    return new_da(plain.run(L.slice(a, spec), { backend = "cpu" }), counts, a:type(), #a:shape())
  end
  local counts = balanced(sh[1], P)
  local lo, rows = rows_before(counts, me()), counts[me() + 1]
  local rowbytes = elem_bytes(t) * product(sh, 2)
  f:seek("set", off + lo * rowbytes)
  local data = rows * rowbytes > 0 and f:read(rows * rowbytes) or ""
  f:close()
  local ok = data and #data == rows * rowbytes
  local first, text = agree_on(("lacc.mpi.load (.npy of %s {%s})"):format(t, table.concat(sh, ",")), not ok,
    ("mpi.load: %s is shorter than its header says"):format(path))
  if first then error(text, 0) end
  -- a bool byte other than 0 reads as 1 (as frombytes does; no NUL in the pattern: LuaJIT)
  if t == "bool" then data = data:gsub("[\1-\255]", "\1") end
  return new_da(unpacked(data, t, local_shape(sh, rows)), counts, t, #sh)
end


-- ---- taking data off the ranks

-- the .npy header of a C-order array of scalars of type t and shape sh, as the core
-- writes one (core/base/npy.c: the dict padded with spaces and a newline so that the data
-- starts 64-byte aligned); nil for other element types
local CODE = {}
for code, t in pairs(NPY) do CODE[t] = code end
local function npy_header_of(t, sh)
  local code = CODE[t]
  if not code then return nil end
  local order = elem_bytes(t) == 1 and "|" or "<"
  local dims = table.concat(sh, ", ") .. (#sh == 1 and "," or "")
  local dict = ("{'descr': '%s%s', 'fortran_order': False, 'shape': (%s), }"):format(order, code, dims)
  dict = dict .. (" "):rep((64 - (10 + #dict + 1) % 64) % 64) .. "\n"
  return "\147NUMPY\1\0" .. string.char(#dict % 256, math.floor(#dict / 256)) .. dict
end

-- io.open's reason without the file's name
local function reason(err) return (tostring(err):gsub("^.-: ", "")) end

-- d:save(path) (collective): the whole array as one .npy file, as a:save writes it. Of
-- scalars: rank 1 writes the header into a file of its own beside path, each rank its
-- rows at their place, then rank 1 renames it to path (a failure on any rank leaves the
-- file that was there as it was); of other element types, the array gathered on rank 1,
-- which saves it.
function C.damethods.save(self, path)
  started("save")
  if type(path) ~= "string" then fail("save: expected a file name, got %s", util.describe(path)) end
  local t, sh = self.t, self:shape()
  local what = ("save of %s {%s}"):format(t, table.concat(sh, ","))
  local header = npy_header_of(t, sh)
  if not header then
    local whole = self:gather(1)
    together(what .. " (on rank 1)", function() if whole then whole:save(path) end end)
    return
  end
  local part = path .. ".lacc-save"
  local rowbytes = elem_bytes(t) * product(sh, 2)
  local at, n = #header + rows_before(self.rows, me()) * rowbytes, self.rows[me() + 1] * rowbytes
  local function write_at(mode, offset, bytes)
    local f, err = io.open(part, mode)
    if not f then fail("save: cannot write %s: %s", path, reason(err)) end
    local ok, werr = f:seek("set", offset)
    if ok then ok, werr = f:write(bytes) end
    local closed, cerr = f:close()
    if not ok or not closed then fail("save: cannot write %s: %s", path, reason(werr or cerr)) end
  end
  local ok, err = pcall(together, what, function()
    if me() == 0 then write_at("wb", 0, header) end
  end)
  if ok then
    ok, err = pcall(together, what .. " (the rows)", function()
      if n > 0 then write_at("r+b", at, util.core.array_read_bytes(self.block, 0, n)) end
    end)
  end
  if ok then
    ok, err = pcall(together, what .. " (done)", function()
      if me() == 0 then
        local moved, merr = os.rename(part, path)
        if not moved then fail("save: cannot write %s: %s", path, reason(merr)) end
      end
    end)
  end
  if not ok then
    if me() == 0 then os.remove(part) end
    error(err, 0)
  end
end

-- write_png(path, d) (collective): the array gathered on rank 1, which writes the file
-- (a distributed program run first, as one process runs a program)
function C.write_png(path, d, write)
  started("write_png")
  if type(path) ~= "string" then fail("write_png: expected a file name, got %s", type(path)) end
  if C.is_dn(d) then d = L.run(d) end
  local whole = C.is_da(d) and d:gather(1) or d
  together(("write_png of %s {%s}"):format(d:type(), table.concat(d:shape(), ",")), function()
    if me() == 0 then write(path, whole) end
  end)
end

return true
