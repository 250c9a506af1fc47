-- lacc.array: host arrays.
-- Owns: the Lua face of arrays held by the core: construction from tables, element
-- access with 1-based indices, conversion to tables and text. Elements of tuple type
-- are Lua tables {x, y}. Must not: build programs (acc.lua and the combinators do).
local types = require "lacc.types"
local util = require "lacc.util"
local core, fail = util.core, util.fail
local MAX_RANK, MAX_ELEMS = util.limits.rank, util.limits.elements

local M = {}
local methods = {}
M.methods = methods

local function is_array(x) return core.is_array(x) end
M.is_array = is_array

-- An array used after free() is an error at the user's line.
local function alive(a, what)
  if not core.array_alive(a) then fail("%s: array used after free()", what) end
  return a
end
M.alive = alive

local function shape_of(a) return core.array_shape(a) end

-- The first n of the arguments after n.
local function select_n(n, ...)
  if n == 0 then return end
  if n == 1 then return (...) end
  local t = { ... }
  return (table.unpack or unpack)(t, 1, n)
end

-- Linear 0-based index of 1-based indices (what: the method, for messages).
local function linear(what, shape, ...)
  local n = select("#", ...)
  if n ~= #shape then
    fail("%s: expected %d indices for an array of rank %d, got %d", what, #shape, #shape, n)
  end
  local lin = 0
  for d = 1, n do
    local i = select(d, ...)
    if not util.is_integer(i) then
      fail("%s: index %d is not an integer (got %s)", what, d, util.show(i))
    end
    if i < 1 or i > shape[d] then
      fail("%s: index %d out of bounds: %s not in 1..%d", what, d, ("%.0f"):format(i), shape[d])
    end
    lin = lin * shape[d] + (i - 1)
  end
  return lin
end

-- Sum values are tables {tag = "Just", 1.5}; structural variants use the position
-- as the tag ({tag = 2, ...}).
local function read(a, t, lin, leaf)
  if t.kind == "scalar" then return core.array_get(a, leaf, lin), leaf + 1 end
  local r = {}
  if t.kind == "sum" then
    local k = core.array_get(a, leaf, lin) + 1
    local con = t.constructors[k]
    if con then
      r.tag = t.name and con.name or k
      local at = leaf + con.offset   -- straight to its payload: O(1) in the constructors
      for i, f in ipairs(con.payload.fields) do r[i], at = read(a, f, lin, at) end
    end
    return r, leaf + t.nleaves
  end
  for i, f in ipairs(t.fields) do r[i], leaf = read(a, f, lin, leaf) end
  return r, leaf
end

local function constructor_of(what, t, tag)
  local c = t.index[tag] or (t.constructors[tag] and tag)
  if c then return c, t.constructors[c] end
  fail("%s: %s has no constructor %s", what, t.sig, tostring(tag))
end

-- A Lua value for a scalar element of type name: an error naming what, else nothing.
local function check_scalar(what, name, v)
  local tv = type(v)
  if name == "bool" then
    if tv ~= "boolean" then fail("%s: expected a boolean for bool, got %s", what, util.describe(v)) end
  elseif name == "f32" or name == "f64" then
    if tv ~= "number" then fail("%s: expected a number for %s, got %s", what, name, util.describe(v)) end
  elseif tv ~= "cdata" and not util.is_integer(v) then
    fail("%s: expected an integer for %s, got %s", what, name, util.show(v))
  end
end

local function write(a, t, lin, leaf, v, what)
  if t.kind == "scalar" then
    check_scalar(what, t.name, v)
    core.array_set(a, leaf, lin, v)
    return leaf + 1
  end
  if t.kind == "sum" then
    if type(v) ~= "table" or v.tag == nil then
      fail("%s: expected a table {tag = constructor, fields...} for %s, got %s", what, t.sig,
        util.describe(v))
    end
    local k, con = constructor_of(what, t, v.tag)
    if #v ~= #con.payload.fields then
      fail("%s: %s: constructor %s takes %d fields, got %d", what, t.sig, con.name,
        #con.payload.fields, #v)
    end
    core.array_set(a, leaf, lin, k - 1)
    local at = leaf + con.offset   -- straight to its payload: O(1) in the constructors
    for i, f in ipairs(con.payload.fields) do at = write(a, f, lin, at, v[i], what) end
    return leaf + t.nleaves
  end
  if type(v) ~= "table" or #v ~= #t.fields then
    fail("%s: expected a table of %d fields for %s, got %s", what, #t.fields, t.sig,
      type(v) == "table" and "a table of " .. #v or util.describe(v))
  end
  for i, f in ipairs(t.fields) do leaf = write(a, f, lin, leaf, v[i], what) end
  return leaf
end

local function elem_type(a) return types.parse(core.array_type(a)) end

-- An array's element type, shape and leaf types, asked of the core once per array (an
-- array's type and shape never change): the general element paths read them each call.
local known = setmetatable({}, { __mode = "k" })
local function leaf_names(t, out)
  if t.kind == "scalar" then out[#out + 1] = t.name
  else for _, f in ipairs(t.fields) do leaf_names(f, out) end end
  return out
end
local function facts(a)
  local k = known[a]
  if k == nil then
    local t = elem_type(a)
    local flat = t.kind == "scalar" or (t.kind == "tuple" and not t.has_sum)
    k = { t = t, shape = shape_of(a), leaves = flat and leaf_names(t, {}) or nil }
    -- a tuple of scalars: its element is the table of its leaves
    k.row = t.kind == "tuple" and #t.fields > 0 and k.leaves ~= nil and #k.leaves == #t.fields
    known[a] = k
  end
  return k
end

-- leaves k .. n - 1 of the element at lin, as values
local function leaves_from(a, lin, k, n)
  if k == n then return end
  return core.array_get(a, k, lin), leaves_from(a, lin, k + 1, n)
end

function methods.shape(a) return shape_of(alive(a, "shape")) end
function methods.type(a) return core.array_type(alive(a, "type")) end
function methods.size(a) return core.array_size(alive(a, "size")) end
function methods.free(a) core.array_free(a) end
function methods.layout(a) return core.array_layout(alive(a, "layout")) end
-- a:write_png(path): a rank-2 array as an image (u8/f32/f64 grey, tuples of 3 or 4 RGB(A))
function methods.write_png(a, path)
  alive(a, "write_png")
  if type(path) ~= "string" then fail("write_png: expected a file name, got %s", type(path)) end
  local ok, err = pcall(core.array_write_png, a, path)
  if not ok then fail("%s", tostring(err)) end   -- the core's message, at the user's place
end

-- The element of an array of tuples of scalars as a new table {x, y, ...}, read at once
-- (the core's fields path), or nil: the general path then serves the call and words any
-- error. Arrays the general path has not seen yet take it once first.
local function row_get(a, ...)
  local k = known[a]
  if k == nil or not k.row then return nil end
  local r = { core.array_fields(a, ...) }
  if r[1] == nil then return nil end
  return r
end
M.row_get = row_get

function methods.get(a, ...)
  local v = core.array_get1(a, ...)   -- a scalar array: straight from its buffer
  if v ~= nil then return v end
  v = row_get(a, ...)
  if v ~= nil then return v end
  alive(a, "get")
  local k = facts(a)
  return (read(a, k.t, linear("get", k.shape, ...), 0))
end

-- x, y = a:fields(i, ...): the element's fields as values, nested tuples' fields in
-- order (no table made: a loop over a tuple array's elements allocates nothing). The
-- core reads them at once where it can; else it gives nil and the indices back, and the
-- path below checks them and words what is wrong.
local function fields_slow(a, ...)
  alive(a, "fields")
  local k = facts(a)
  if not k.leaves then fail("fields: the elements of %s hold variants: read them with get", k.t.sig) end
  return leaves_from(a, linear("fields", k.shape, ...), 0, #k.leaves)
end
local function fields_or_slow(a, first, ...)
  if first ~= nil then return first, ... end
  return fields_slow(a, ...)
end
function methods.fields(a, ...) return fields_or_slow(a, core.array_fields(a, ...)) end

-- a:set_fields(i, ..., x, y): the element's fields from values (as a:fields gives them)
function methods.set_fields(a, ...)
  if core.array_set_fields(a, ...) then return end
  alive(a, "set_fields")
  local k = facts(a)
  if not k.leaves then fail("set_fields: the elements of %s hold variants: write them with set", k.t.sig) end
  local rank, nl, n = #k.shape, #k.leaves, select("#", ...)
  if n ~= rank + nl then
    fail("set_fields: expected %d indices and %d values for an array of rank %d of %s, got %d arguments",
      rank, nl, rank, k.t.sig, n)
  end
  local lin = linear("set_fields", k.shape, select_n(rank, ...))
  for leaf = 1, nl do
    local v = select(rank + leaf, ...)
    check_scalar("set_fields", k.leaves[leaf], v)
    core.array_set(a, leaf - 1, lin, v)
  end
end

function methods.set(a, ...)
  local n = select("#", ...)
  if n >= 2 and core.array_set1(a, ...) then return end
  alive(a, "set")
  if n == 0 then fail("set: expected the indices and a value, got nothing") end
  local k = facts(a)
  write(a, k.t, linear("set", k.shape, select_n(n - 1, ...)), 0, select(n, ...), "set")
end

-- set_int64("number" | "cdata"): how LuaJIT gives i64 and u64 elements (numbers where
-- exact, the default; or always int64_t / uint64_t cdata). Lua 5.4 has integers: no change.
function M.set_int64(mode)
  if mode ~= "number" and mode ~= "cdata" then
    fail("set_int64: expected \"number\" or \"cdata\", got %s", type(mode) == "string" and
         ("%q"):format(mode) or util.show(mode))
  end
  if core.set_int64 then core.set_int64(mode) end
end

-- for i, x in a:values(): every element with its 1-based linear index, row-major (what
-- pairs(a) gives too; ipairs(a) on a rank-1 array).
function methods.values(a)
  local n = core.array_size(alive(a, "values"))
  local t = elem_type(a)
  return function(_, i)
    if i >= n then return nil end
    return i + 1, (read(a, t, i, 0))
  end, a, 0
end

-- Element at a 0-based linear index (for iteration without index arithmetic).
function methods.at_linear(a, lin)
  local n = core.array_size(alive(a, "at_linear"))
  if type(lin) ~= "number" or lin ~= math.floor(lin) or lin < 0 or lin >= n then
    fail("at_linear: expected a 0-based index in 0..%d, got %s", n - 1,
      type(lin) == "number" and tostring(lin) or util.describe(lin))
  end
  return (read(a, elem_type(a), lin, 0))
end

function methods.totable(a)
  alive(a, "totable")
  local shape, t = shape_of(a), elem_type(a)
  if #shape == 0 then return (read(a, t, 0, 0)) end
  local lin, r = 0, #shape
  local function build(d)
    if d == r and t.kind == "scalar" then   -- a row at once, from the buffer
      lin = lin + shape[d]
      return core.array_row(a, lin - shape[d], shape[d])
    end
    local out = {}
    for i = 1, shape[d] do
      if d == r then
        out[i] = read(a, t, lin, 0)
        lin = lin + 1
      else
        out[i] = build(d + 1)
      end
    end
    return out
  end
  return build(1)
end

-- ---- bulk data

-- The element count of shape, by the core's rule (array.c): each product at most 2^40,
-- checked before it is formed, so that no count wraps (LuaJIT) or leaves the integers
-- (Lua 5.4) and both VMs give one message.
local function shape_arg(what, shape)
  if type(shape) ~= "table" then fail("%s: expected a shape table, got %s", what, util.describe(shape)) end
  if #shape > MAX_RANK then fail("%s: rank %d is out of range (0 to %d)", what, #shape, MAX_RANK) end
  local n = 1
  for d = 1, #shape do
    local e = shape[d]
    if not util.is_integer(e) then fail("%s: extent %d is not an integer (got %s)", what, d, util.show(e)) end
    if e < 0 then fail("%s: negative extent %.0f in dimension %d", what, e, d) end
    if e > 0 and n > math.floor(MAX_ELEMS / e) then
      fail("%s: array too large (more than 2^40 elements)", what)
    end
    n = n * e
  end
  return n
end

local function type_arg(what, t)
  local pt, err = types.parse(t)
  if not pt then fail("%s: %s", what, err) end
  return pt
end

-- A new array from a string of packed elements (lacc.h: lacc_array_from_buffer).
function M.frombytes(s, t, shape)
  if type(s) ~= "string" then fail("frombytes: expected a string, got %s", util.describe(s)) end
  local pt = type_arg("frombytes", t)
  local ok, eb = pcall(core.type_bytes, pt.sig)
  if not ok then fail("frombytes: %s", (tostring(eb):gsub("^bytes: ", ""))) end
  if shape == nil then
    if #s % eb ~= 0 then
      fail("frombytes: %d bytes are not a whole number of %s elements (%d bytes each)", #s, pt.sig, eb)
    end
    shape = { math.floor(#s / eb) }
  end
  local n = shape_arg("frombytes", shape)
  if n * eb ~= #s then
    fail("frombytes: %d elements of %s take %d bytes, the string has %d", n, pt.sig, n * eb, #s)
  end
  local a
  ok, a = pcall(core.array_from_bytes, pt.sig, shape, s, #s)
  if not ok then fail("frombytes: %s", (tostring(a):gsub("^from_buffer: ", ""))) end
  return a
end

function methods.tobytes(a)
  alive(a, "tobytes")
  local ok, s = pcall(core.array_to_bytes, a)
  if not ok then fail("tobytes: %s", (tostring(s):gsub("^to_buffer: ", ""))) end
  return s
end

-- A new array read from the file at path by core[reader] (its messages name what).
local function from_file(what, reader, path)
  if type(path) ~= "string" then fail("%s: expected a file name, got %s", what, util.describe(path)) end
  local ok, a = pcall(core[reader], path)
  if not ok then fail("%s", tostring(a)) end
  return a
end

-- NumPy's .npy files (lacc.h: lacc_array_load_npy, lacc_array_save_npy) and PNG images as
-- rank-2 arrays of their samples (lacc_array_read_png).
function M.load(path) return from_file("load", "array_load_npy", path) end
function M.read_png(path) return from_file("read_png", "array_read_png", path) end

function methods.save(a, path)
  alive(a, "save")
  if type(path) ~= "string" then fail("save: expected a file name, got %s", util.describe(path)) end
  local ok, err = pcall(core.array_save_npy, a, path)
  if not ok then fail("%s", tostring(err)) end
end

-- LuaJIT: a copy of the packed elements at an FFI pointer; a pointer to a's elements.
function M.fromptr(p, t, shape)
  if not core.array_ptr then fail("fromptr: needs LuaJIT's FFI (on Lua 5.4 use lacc.frombytes)") end
  if type(p) ~= "cdata" then fail("fromptr: expected an FFI pointer, got %s", util.describe(p)) end
  local ffi = require "ffi"
  -- an integer cdata would be read as an address; a pointer's or an array's ctype ends so
  local ct = tostring(ffi.typeof(p))
  if not ct:find("[%*%]]>$") then fail("fromptr: expected an FFI pointer, got a %s", ct) end
  local pt = type_arg("fromptr", t)
  local n = shape_arg("fromptr", shape)
  local ok, eb = pcall(core.type_bytes, pt.sig)
  if not ok then fail("fromptr: %s", (tostring(eb):gsub("^bytes: ", ""))) end
  -- the first page is never mapped: NULL and small integers cast to pointers end there
  if n * eb > 0 and ffi.cast("uintptr_t", p) < 4096 then
    fail("fromptr: the pointer is NULL or not an address (%s)", tostring(ffi.cast("void *", p)))
  end
  local a
  ok, a = pcall(core.array_from_bytes, pt.sig, shape, p, n * eb)
  if not ok then fail("fromptr: %s", (tostring(a):gsub("^from_buffer: ", ""))) end
  return a
end

function methods.ptr(a)
  alive(a, "ptr")
  if not core.array_ptr then fail("ptr: needs LuaJIT's FFI (on Lua 5.4 use a:tobytes())") end
  local ok, p = pcall(core.array_ptr, a)
  if not ok then fail("ptr: %s", (tostring(p):gsub("^data: ", ""))) end
  return p
end

-- u64 values are bit patterns in Lua 5.4 integers: print them unsigned.
local unsigned_string = not core.binding:find("luajit") and load([[
  return function(v)
    if v >= 0 then return tostring(v) end
    local q = (v >> 1) // 5
    return tostring(q) .. tostring(v - q * 10)
  end]])()

-- A float as the shortest decimal that reads back as the same value of its own type
-- (an f32 as an f32), with ".0" on integral values, "nan", "inf", "-inf": the same text
-- on Lua 5.4 and LuaJIT.
local function show_float(v, t)
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  local s
  for prec = t == "f32" and 6 or 15, t == "f32" and 9 or 17 do
    s = ("%." .. prec .. "g"):format(v)
    local back = tonumber(s)
    if (t == "f32" and util.f32(back) == v) or back == v then break end
  end
  if not s:find("[%.eni]") then s = s .. ".0" end
  if v == 0 and 1 / v < 0 then s = "-0.0" end
  return s
end

-- An element for display, by its parsed type t.
local function show_value(v, t)
  if t.kind == "sum" then
    local k = t.index and t.index[v.tag] or v.tag
    local con = t.constructors[k]
    local parts = { tostring(v.tag) }
    for i, x in ipairs(v) do
      local ft = con and con.payload.fields[i]
      local sx = ft and show_value(x, ft) or tostring(x)
      if type(x) == "table" and x.tag ~= nil and #x > 0 then sx = "(" .. sx .. ")" end
      parts[i + 1] = sx
    end
    return table.concat(parts, " ")
  end
  if t.kind == "tuple" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = show_value(x, t.fields[i]) end
    return "(" .. table.concat(parts, ",") .. ")"
  end
  if type(v) == "cdata" then return (tostring(v):gsub("U?LL$", "")) end
  if t.name == "u64" and unsigned_string then return unsigned_string(v) end
  if t.name == "f32" or t.name == "f64" then return show_float(v, t.name) end
  return tostring(v)
end

-- Like Accelerate's show: shape, type, then the elements (elided past 64 per row
-- and 16 rows).
function M.tostring(a)
  if not core.array_alive(a) then return "Array (freed)" end
  local shape, t = shape_of(a), elem_type(a)
  local head = ("Array (%s) %s"):format(table.concat(shape, ","), t.sig)
  local n = core.array_size(a)
  if #shape == 0 then return head .. " [" .. show_value(read(a, t, 0, 0), t) .. "]" end
  local inner = shape[#shape]
  local rows = inner > 0 and math.floor(n / inner) or 0
  local out = {}
  for r = 0, math.min(rows, 16) - 1 do
    local items = {}
    for j = 0, math.min(inner, 64) - 1 do
      items[#items + 1] = show_value(read(a, t, r * inner + j, 0), t)
    end
    if inner > 64 then items[#items + 1] = "..." end
    out[#out + 1] = table.concat(items, ",")
  end
  if rows > 16 then out[#out + 1] = "..." end
  if #shape == 1 then return head .. " [" .. (out[1] or "") .. "]" end
  return head .. "\n [" .. table.concat(out, ",\n  ") .. "]"
end

-- Nested tables give the shape; the innermost tables are elements when the element
-- type is a tuple.
-- A new array from the core, its errors (too large, out of memory) naming what.
local function new_array(what, sig, shape)
  local ok, a = pcall(core.array_new, sig, shape)
  if not ok then fail("%s: %s", what, tostring(a)) end
  return a
end

function M.fromtable(tbl, t)
  local pt, err = types.parse(t)
  if not pt then fail("fromtable: %s", err) end
  if type(tbl) ~= "table" then
    local a = new_array("fromtable", pt.sig, {})
    write(a, pt, 0, 0, tbl, "fromtable")
    return a
  end
  local function matches(x, et)
    if et.kind == "scalar" then return type(x) ~= "table" end
    if et.kind == "sum" then return type(x) == "table" and x.tag ~= nil end
    if type(x) ~= "table" or #x ~= #et.fields then return false end
    for i, f in ipairs(et.fields) do
      if not matches(x[i], f) then return false end
    end
    return true
  end
  local shape, probe = {}, tbl
  while type(probe) == "table" and not matches(probe, pt) do
    shape[#shape + 1] = #probe
    if #probe == 0 then break end
    probe = probe[1]
  end
  if #shape > MAX_RANK then fail("fromtable: nesting deeper than rank %d", MAX_RANK) end
  local a = new_array("fromtable", pt.sig, shape)
  local lin, r = 0, #shape
  local function fill(x, d)
    if d > r then
      write(a, pt, lin, 0, x, "fromtable")
      lin = lin + 1
      return
    end
    if type(x) ~= "table" or #x ~= shape[d] then
      fail("fromtable: ragged table: dimension %d should have %d elements", d, shape[d])
    end
    -- # may stop at any nil: a key past it is a hole, an error on both VMs
    if core.maxn(x) > shape[d] then
      fail("fromtable: a hole (nil) at position %d of dimension %d", shape[d] + 1, d)
    end
    if d == r and pt.kind == "scalar" then   -- a row at once, into the buffer
      local pos, want = core.array_fill(a, lin, x, shape[d])
      if pos then
        if x[pos] == nil then fail("fromtable: a hole (nil) at position %d of dimension %d", pos, d) end
        fail("fromtable: expected %s for %s, got %s", want, pt.sig,
          want == "an integer" and util.show(x[pos]) or util.describe(x[pos]))
      end
      lin = lin + shape[d]
      return
    end
    for i = 1, shape[d] do fill(x[i], d + 1) end
  end
  fill(tbl, 1)
  return a
end

function M.new(t, shape, fillv)
  local pt, err = types.parse(t)
  if not pt then fail("array: %s", err) end
  if type(shape) ~= "table" then fail("array: expected a shape table, got %s", type(shape)) end
  if #shape > MAX_RANK then fail("array: rank %d is out of range (0 to %d)", #shape, MAX_RANK) end
  for d = 1, #shape do
    local e = shape[d]
    if not util.is_integer(e) then
      fail("array: extent %d is not an integer (got %s)", d, util.show(e))
    end
    if e < 0 then fail("array: negative extent %.0f in dimension %d", e, d) end
  end
  local a = new_array("array", pt.sig, shape)
  if fillv ~= nil then
    for lin = 0, core.array_size(a) - 1 do write(a, pt, lin, 0, fillv, "array") end
  end
  return a
end

return M
