-- lacc.ffi_core: the LuaJIT binding, the same functions as the Lua 5.4 C module
-- `lacc.core` (bindings/lacc_core.c, lacc_arrays.c), written over the FFI against liblacc.so.
-- Owns: handles as cdata with finalizers, Lua values <-> element values, errors (also for
-- a call after the context's finalizer, at lua_close).
-- Must not: hold semantics (liblacc does). Keep it in step with them.
local ffi = require "ffi"

-- One binding per Lua state, even when package.loaded is cleared and this file runs
-- again (busted does that between spec files): ffi.cdef and ffi.metatype cannot be
-- repeated, and arrays must keep meeting the context that made them.
local registry = debug.getregistry()
if registry["lacc.ffi_core"] then return registry["lacc.ffi_core"] end

ffi.cdef(require "lacc.cdef")
ffi.cdef [[
typedef struct { lacc_array *a; const lacc_view *v; } lacc_array_box;
double fma(double, double, double);
]]

local function find_library()
  local tried = {}
  local env = os.getenv("LACC_LIB")
  if env then tried[#tried + 1] = env end
  for template in package.cpath:gmatch("[^;]+") do
    tried[#tried + 1] = template:gsub("%?", "liblacc")
  end
  tried[#tried + 1] = "lacc"
  for _, name in ipairs(tried) do
    local ok, lib = pcall(ffi.load, name)
    if ok then return lib end
  end
  error("lacc: cannot load liblacc.so (set LACC_LIB to its path)", 2)
end

local C = find_library()
local M = { binding = "luajit", lib = C }   -- M.lib keeps the namespace alive

-- lacc.h's limits by name (lacc_core.c gives the same table).
local K = ffi.C
M.limits = {
  rank = K.LACC_MAX_RANK, elements = 2 ^ K.LACC_MAX_ELEMS_LOG2, args = K.LACC_MAX_ARGS,
  zip = K.LACC_MAX_ZIP, fields = K.LACC_MAX_FIELDS, constructors = K.LACC_MAX_CONSTRUCTORS,
  nesting = K.LACC_MAX_NESTING, name = K.LACC_MAX_NAME, depth = K.LACC_MAX_DEPTH,
  stencil_rank = K.LACC_MAX_STENCIL_RANK, window = K.LACC_MAX_WINDOW,
}
local MAX_RANK, MAX_ARGS = M.limits.rank, M.limits.args

-- lua_close calls the finalisers in an order of its own (cdata ones first, in no set
-- order, then userdata ones): a finaliser that runs after the context's may still call
-- lacc. Every call that needs the context goes through live(), an error from then on
-- rather than a use of freed memory; arrays and nodes hold the context themselves.
local closing = false
local ctx = C.lacc_ctx_new()
if ctx == nil then error("lacc: out of memory") end
ctx = ffi.gc(ctx, function(p)
  closing = true
  C.lacc_ctx_release(p)
end)
local function live()
  if closing then error("lacc: the Lua state is closing (lacc called from a finaliser)", 0) end
  return ctx
end

local function raise()
  error(ffi.string(C.lacc_errmsg(live())), 0)
end

-- Arrays: a box struct, so that the metatype (with __len, __index) applies and the
-- finalizer releases the C array; free() empties the box.
local hooks = {}          -- filled in by the surface through array_metatable()
local box_t = ffi.typeof("lacc_array_box")
local function box_gc(b)
  if b.a ~= nil then
    C.lacc_array_release(b.a)
    b.a = nil
    b.v = nil
  end
end
ffi.metatype(box_t, {
  __index = function(self, k) return hooks.__index(self, k) end,
  __newindex = function(self, k, v) return hooks.__newindex(self, k, v) end,
  __len = function(self) return hooks.__len(self) end,
  __tostring = function(self) return hooks.__tostring(self) end,
  __concat = function(a, b) return hooks.__concat(a, b) end,
  __add = function(a, b) return hooks.__add(a, b) end,
  __sub = function(a, b) return hooks.__sub(a, b) end,
  __mul = function(a, b) return hooks.__mul(a, b) end,
  __div = function(a, b) return hooks.__div(a, b) end,
  __mod = function(a, b) return hooks.__mod(a, b) end,
  __pow = function(a, b) return hooks.__pow(a, b) end,
  __unm = function(a) return hooks.__unm(a) end,
  __pairs = function(self) return hooks.__pairs(self) end,
  __ipairs = function(self) return hooks.__ipairs(self) end,
  __gc = box_gc,
})

-- The collector cannot see array memory: when the holding has grown by what it held after
-- the last collection, at most 128 MiB (and is past 64 MiB), run a full collection so
-- dead arrays go (bindings/lacc_core.c nudge_gc says why the bound).
local gc_mark = 0
local function wrap_array(p)
  local now = tonumber(C.lacc_ctx_bytes(live()))
  if now > gc_mark and now > 64 * 2^20 then
    collectgarbage("collect")
    local held = tonumber(C.lacc_ctx_bytes(live()))
    gc_mark = held + math.min(held, 128 * 2^20)
  end
  return box_t(p, C.lacc_array_view(p))
end

local function check_array(b)
  if not M.is_array(b) then error("expected a lacc array, got " .. type(b), 3) end
  if b.a == nil then error("array used after free()", 0) end
  return b.a
end

local node_ptr_t = ffi.typeof("lacc_node *")
local function wrap_node(p)
  if p == nil then raise() end
  return ffi.gc(p, C.lacc_node_release)
end

-- A Lua value described for the core's checks (lacc_value): one record, reused, since no
-- entry point takes two values.
local value_box = ffi.new("lacc_value")
local function value_of(v)
  local tv, r = type(v), value_box
  r.name, r.i, r.f = tv, 0, 0
  if tv == "boolean" then
    r.kind, r.i = C.LACC_VALUE_BOOL, v and 1 or 0
  elseif tv == "number" then   -- LuaJIT's numbers are doubles: the core takes integral ones
    r.kind, r.f = C.LACC_VALUE_FLOAT, v
  elseif ffi.istype("int64_t", v) then
    r.kind, r.i = C.LACC_VALUE_INT, v
  elseif ffi.istype("uint64_t", v) then
    r.kind, r.i = v < 0x8000000000000000ULL and C.LACC_VALUE_INT or C.LACC_VALUE_UINT, ffi.cast("int64_t", v)
  else
    r.kind = C.LACC_VALUE_OTHER
  end
  return r
end

-- the plain entry points, generated from bindings/entries.def (ffi_entries.lua)
for name, f in pairs(require("lacc.ffi_entries")(C, { live = live, check_array = check_array,
  wrap_node = wrap_node, wrap_array = wrap_array, raise = raise, value_of = value_of })) do
  M[name] = f
end

function M.is_array(x) return type(x) == "cdata" and ffi.istype(box_t, x) end
function M.array_alive(x) return M.is_array(x) and x.a ~= nil end
function M.is_node(x) return type(x) == "cdata" and ffi.istype(node_ptr_t, x) end
function M.version() return K.LACC_VERSION_MAJOR, K.LACC_VERSION_MINOR, K.LACC_VERSION_PATCH end
function M.array_metatable() return hooks end
local transfers_box = ffi.new("lacc_transfers[1]")
function M.transfers()
  C.lacc_ctx_transfers(live(), transfers_box)
  local t = transfers_box[0]
  return tonumber(t.uploads), tonumber(t.downloads), tonumber(t.bytes_up), tonumber(t.bytes_down)
end
local devmem_box = ffi.new("lacc_devmem[1]")
function M.device_memory()
  C.lacc_device_memory(devmem_box)
  local m = devmem_box[0]
  return tonumber(m.pooled), tonumber(m.buffers), tonumber(m.limit), tonumber(m.made),
         tonumber(m.reused)
end
local tiers_box = ffi.new("lacc_tiers[1]")
function M.tiers()
  C.lacc_tier_counts(tiers_box)
  local t = tiers_box[0]
  return tonumber(t.interp), tonumber(t.fast), tonumber(t.opt), tonumber(t.fast_builds),
         tonumber(t.builds), tonumber(t.failed)
end

local tuning_box = ffi.new("lacc_tuning_row[1]")
function M.tuning(i)
  if C.lacc_tuning(i, tuning_box) == 0 then return end
  local r = tuning_box[0]
  return ffi.string(r.name), tonumber(r.value), ffi.string(r.unit), ffi.string(r.what)
end

function M.array_new(t, shape)
  local rank = #shape
  if rank > MAX_RANK then
    error(("rank %d is out of range (0 to %d)"):format(rank, MAX_RANK), 2)
  end
  local ext = ffi.new("int64_t[?]", rank + 1)
  for d = 1, rank do
    local e = shape[d]
    if type(e) ~= "number" or e ~= math.floor(e) then
      error(("shape: extent %d is not an integer"):format(d), 2)
    end
    ext[d - 1] = e
  end
  local p = C.lacc_array_new(live(), t, rank, ext)
  if p == nil then raise() end
  return wrap_array(p)
end

-- i64 and u64 elements: Lua numbers where the value is exact in a double, else int64_t /
-- uint64_t cdata; always cdata after set_int64("cdata").
local int64_cdata = false
local function num64(v)
  if int64_cdata then return v end
  if v <= 9007199254740992LL and (ffi.istype("uint64_t", v) or v >= -9007199254740992LL) then
    return tonumber(v)
  end
  return v
end
function M.set_int64(mode) int64_cdata = mode == "cdata" end

-- ---- bulk data: packed bytes, pointers, and rows of Lua numbers

local function extents(shape, what)
  local rank = #shape
  if rank > MAX_RANK then
    error(("%s: rank %d is out of range (0 to %d)"):format(what, rank, MAX_RANK), 3)
  end
  local ext = ffi.new("int64_t[?]", rank + 1)
  for d = 1, rank do
    local e = shape[d]
    if type(e) ~= "number" or e ~= math.floor(e) then
      error(("%s: extent %d is not an integer"):format(what, d), 3)
    end
    ext[d - 1] = e
  end
  return rank, ext
end


-- data: a Lua string or a pointer (cdata) to bytes packed elements (from_leaves: the
-- leaves form, lacc.mpi's, which sums have too)
local function array_from(from, t, shape, data, bytes)
  local rank, ext = extents(shape, "frombytes")
  local p = from(live(), t, rank, ext, ffi.cast("const void *", data), bytes)
  if p == nil then raise() end
  return wrap_array(p)
end
function M.array_from_bytes(t, shape, data, bytes)
  return array_from(C.lacc_array_from_buffer, t, shape, data, bytes)
end
function M.array_from_leaves(t, shape, data, bytes)
  return array_from(C.lacc_array_from_leaves, t, shape, data, bytes)
end
function M.array_to_leaves(b)
  local a = check_array(b)
  local n = M.type_leaf_bytes(ffi.string(C.lacc_array_type(a))) * tonumber(C.lacc_array_size(a))
  local buf = ffi.new("uint8_t[?]", n > 0 and n or 1)
  if C.lacc_array_to_leaves(live(), a, buf, n) ~= 0 then raise() end
  return ffi.string(buf, n)
end

local elem_ptr = {
  bool = "uint8_t *", i8 = "int8_t *", i16 = "int16_t *", i32 = "int32_t *", i64 = "int64_t *",
  u8 = "uint8_t *", u16 = "uint16_t *", u32 = "uint32_t *", u64 = "uint64_t *",
  f32 = "float *", f64 = "double *",
}
for k, v in pairs(elem_ptr) do elem_ptr[k] = ffi.typeof(v) end

-- A typed pointer to a scalar array's elements (nil and the message for other types).
function M.array_ptr(b)
  local a = check_array(b)
  local p = C.lacc_array_data(a)
  if p == nil then raise() end
  return ffi.cast(elem_ptr[ffi.string(C.lacc_array_type(a))], p)
end

-- Bytes [off, off + n) of the storage of an array of a scalar type (lacc_arrays.c's
-- array_read_bytes / array_write_bytes).
function M.array_read_bytes(b, off, n)
  local p = C.lacc_array_bytes(live(), check_array(b), off, n, 0)
  if p == nil then raise() end
  return ffi.string(p, n)
end
function M.array_write_bytes(b, off, s)
  local p = C.lacc_array_bytes(live(), check_array(b), off, #s, 1)
  if p == nil then raise() end
  ffi.copy(p, s, #s)
end

function M.array_to_bytes(b)
  local a = check_array(b)
  local t = ffi.string(C.lacc_array_type(a))
  local n = M.type_bytes(t) * tonumber(C.lacc_array_size(a))
  if elem_ptr[t] then
    local p = C.lacc_array_data(a)
    if p == nil then raise() end
    return ffi.string(p, n)
  end
  local buf = ffi.new("uint8_t[?]", n > 0 and n or 1)
  if C.lacc_array_to_buffer(live(), a, buf, n) ~= 0 then raise() end
  return ffi.string(buf, n)
end

-- Elements lin .. lin + n - 1 of a scalar array from tbl[1..n] (the per-element setters'
-- rules: bool from booleans, floats from numbers, integers from integral numbers or
-- int64 cdata, wrapped to the width). Returns nil, or the 1-based position of a value
-- that does not fit and what was expected.
local is_int64
function M.array_fill(b, lin, tbl, n)
  local a = check_array(b)
  local t = ffi.string(C.lacc_array_type(a))
  local p = ffi.cast(elem_ptr[t], C.lacc_array_data(a))
  if p == nil then raise() end
  if t == "bool" then
    for i = 1, n do
      local v = tbl[i]
      if type(v) ~= "boolean" then return i, "a boolean" end
      p[lin + i - 1] = v and 1 or 0
    end
  elseif t == "f64" or t == "f32" then
    for i = 1, n do
      local v = tbl[i]
      if type(v) ~= "number" then return i, "a number" end
      p[lin + i - 1] = v
    end
  else
    for i = 1, n do
      local v = tbl[i]
      if type(v) == "number" and v == math.floor(v) and v >= -2^63 and v < 2^64 then
        if v >= 2^63 then p[lin + i - 1] = ffi.cast("uint64_t", v)
        else p[lin + i - 1] = ffi.cast("int64_t", v) end
      elseif is_int64(v) then
        p[lin + i - 1] = v
      else
        return i, "an integer"
      end
    end
  end
end

-- A float element as a Lua number, every NaN as the one NaN: LuaJIT takes a double NaN
-- whose top bits are set (a negative NaN with a payload, from a bitcast or a file) for a
-- tagged value (it read as nil, and crashed the process), so floats are read as their
-- bits first. w: the elements as uint32_t words, j: 0-based.
local band = require("bit").band
local NAN = 0 / 0
local function f32_at(p, w, j)
  if band(w[j], 0x7fffffff) > 0x7f800000 then return NAN end
  return tonumber(p[j])
end
local function f64_at(p, w, j)
  local hi = w[2 * j + 1]
  if band(hi, 0x7ff00000) == 0x7ff00000 and (band(hi, 0xfffff) ~= 0 or w[2 * j] ~= 0) then
    return NAN
  end
  return tonumber(p[j])
end
local u32_ptr = ffi.typeof("uint32_t *")

-- Elements lin .. lin + n - 1 of a scalar array into a new table (as array_get gives them).
function M.array_row(b, lin, n)
  local a = check_array(b)
  local t = ffi.string(C.lacc_array_type(a))
  local p = ffi.cast(elem_ptr[t], C.lacc_array_data_read(a))
  if p == nil then raise() end
  local r = {}
  if t == "bool" then
    for i = 1, n do r[i] = p[lin + i - 1] ~= 0 end
  elseif t == "i64" or t == "u64" then
    for i = 1, n do r[i] = num64(p[lin + i - 1]) end
  elseif t == "u32" then   -- + 0.0: LuaJIT 2.1's traces can take tonumber(u32) for an int32
    for i = 1, n do r[i] = p[lin + i - 1] + 0.0 end
  elseif t == "f32" or t == "f64" then
    local at, w = t == "f32" and f32_at or f64_at, ffi.cast(u32_ptr, p)
    for i = 1, n do r[i] = at(p, w, lin + i - 1) end
  else
    for i = 1, n do r[i] = tonumber(p[lin + i - 1]) end
  end
  return r
end

-- The typed pointer to a rank-1 scalar array's elements when 1 <= i <= its size, else nil
-- (the caller's general path words the errors).
-- A scalar array's data as a typed pointer, and its type, or nil.
local function data_ptr(a, write)
  local t = ffi.string(C.lacc_array_type(a))
  local pt = elem_ptr[t]
  if pt == nil then return nil end
  local p = write and C.lacc_array_data(a) or C.lacc_array_data_read(a)
  if p == nil then return nil end
  return ffi.cast(pt, p), t
end

local function rank1_ptr(a, i, write)
  if type(i) ~= "number" or C.lacc_array_rank(a) ~= 1 or i < 1 or i ~= math.floor(i)
      or i > C.lacc_array_size(a) then
    return nil
  end
  return data_ptr(a, write)
end

-- The typed pointer, type and 0-based position of element (i, j) of a rank-2 scalar
-- array, or nil (the general path then checks and says what is wrong).
local function rank2_ptr(a, i, j, write)
  if type(i) ~= "number" or type(j) ~= "number" or C.lacc_array_rank(a) ~= 2 or i < 1 or j < 1
      or i ~= math.floor(i) or j ~= math.floor(j) then
    return nil
  end
  local m = tonumber(C.lacc_array_extent(a, 1))
  if i > tonumber(C.lacc_array_extent(a, 0)) or j > m then return nil end
  local p, t = data_ptr(a, write)
  if p == nil then return nil end
  return p, t, (i - 1) * m + (j - 1)
end

local function elem_read(p, t, k)
  if t == "f32" then return f32_at(p, ffi.cast(u32_ptr, p), k) end
  if t == "f64" then return f64_at(p, ffi.cast(u32_ptr, p), k) end
  local v = p[k]
  if t == "bool" then return v ~= 0 end
  if t == "i64" or t == "u64" then return num64(v) end
  if t == "u32" then return v + 0.0 end   -- as in array_row
  return tonumber(v)
end

-- v into element k: true, or nil where v does not fit (the general path says why).
local function elem_write(p, t, k, v)
  local tv = type(v)
  if t == "bool" then
    if tv ~= "boolean" then return nil end
    p[k] = v and 1 or 0
  elseif t == "f64" or t == "f32" then
    if tv ~= "number" then return nil end
    p[k] = v
  elseif tv == "number" and v == math.floor(v) and v >= -2^63 and v < 2^63 then
    p[k] = ffi.cast("int64_t", v)
  elseif is_int64(v) then
    p[k] = v
  else
    return nil
  end
  return true
end

-- a:get(i) of a rank-1 and a:get(i, j) of a rank-2 scalar array (other ranks, and other
-- index counts, take the general path)
-- The scalar names in lacc_scalar's order, and the position of element (i) or (i, j)
-- read from an array's view record when the view serves it (else nil).
local scalar_names = { [0] = "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
  "f32", "f64" }
local function view_pos(v, n, i, j)
  if n == 1 then
    if v.rank ~= 1 or type(i) ~= "number" or i < 1 or i > v.size or i ~= math.floor(i) then
      return nil
    end
    return i - 1
  end
  if v.rank ~= 2 or type(i) ~= "number" or type(j) ~= "number" or i < 1 or j < 1
      or j > v.cols or i * v.cols > v.size or i ~= math.floor(i) or j ~= math.floor(j) then
    return nil
  end
  return (i - 1) * v.cols + (j - 1)
end

function M.array_get1(b, ...)
  local n = select("#", ...)
  if n > 2 or not M.array_alive(b) then return nil end
  local i, j = ...
  local v = b.v
  if v ~= nil and v.readable ~= 0 then   -- the view: no call into the core
    local k = view_pos(v, n, i, j)
    if k == nil then return nil end
    local t = scalar_names[v.scalar]
    return elem_read(ffi.cast(elem_ptr[t], v.data), t, k)
  end
  local p, t, k
  if n == 1 then
    p, t = rank1_ptr(b.a, i, false)
    if p == nil then return nil end
    k = i - 1
  else
    p, t, k = rank2_ptr(b.a, i, j, false)
    if p == nil then return nil end
  end
  return elem_read(p, t, k)
end

function M.array_set1(b, ...)
  local n = select("#", ...)
  if n < 2 or n > 3 or not M.array_alive(b) then return nil end
  local i, j, v = ...
  local w = b.v
  if w ~= nil and w.writable ~= 0 then   -- the view: no call into the core
    local k = view_pos(w, n - 1, i, j)
    if k == nil then return nil end
    if n == 2 then v = j end
    local t = scalar_names[w.scalar]
    return elem_write(ffi.cast(elem_ptr[t], w.data), t, k, v)
  end
  local p, t, k
  if n == 2 then   -- a:set(i, v)
    p, t = rank1_ptr(b.a, i, true)
    if p == nil then return nil end
    k, v = i - 1, j
  else
    p, t, k = rank2_ptr(b.a, i, j, true)
    if p == nil then return nil end
  end
  return elem_write(p, t, k, v)
end

-- An array's leaves' types, and whether its element has a sum (whose signature names its
-- constructors in <...>), asked once per array: its type never changes.
local leaf_facts = setmetatable({}, { __mode = "k" })
local function leaves_of(b)
  local f = leaf_facts[b]
  if f == nil then
    local a = b.a
    f = { sum = ffi.string(C.lacc_array_type(a)):find("<", 1, true) ~= nil }
    for k = 0, C.lacc_array_nleaves(a) - 1 do f[k + 1] = ffi.string(C.lacc_array_leaf_type(a, k)) end
    leaf_facts[b] = f
  end
  return f
end

-- The first n of the arguments after n.
local function select_first(n, ...)
  if n == 1 then return (...) end
  if n == 2 then
    local x, y = ...
    return x, y
  end
  return unpack({ ... }, 1, n)
end

-- The 0-based position of the element at 1-based indices ... of a, or nil.
local function position(a, ...)
  local n = select("#", ...)
  if C.lacc_array_rank(a) ~= n then return nil end
  local lin = 0
  for d = 1, n do
    local i = select(d, ...)
    local e = tonumber(C.lacc_array_extent(a, d - 1))
    if type(i) ~= "number" or i < 1 or i > e or i ~= math.floor(i) then return nil end
    lin = lin * e + (i - 1)
  end
  return lin
end

local function leaves_at(a, f, lin, k)
  local t = f[k + 1]
  if t == nil then return end
  local p = C.lacc_array_leaf_data(a, k)
  if p == nil then raise() end
  return elem_read(ffi.cast(elem_ptr[t], p), t, lin), leaves_at(a, f, lin, k + 1)
end

-- a:fields(i, ...): the element's leaves, or nil and then the indices (the general path,
-- lua/lacc/array.lua, words the errors)
function M.array_fields(b, ...)
  local f = M.array_alive(b) and leaves_of(b)
  local lin = f and not f.sum and f[1] and position(b.a, ...)
  if not lin then return nil, ... end
  return leaves_at(b.a, f, lin, 0)
end

-- a:set_fields(i, ..., x, ...): true, or nil for the general path; values checked first
function M.array_set_fields(b, ...)
  local f = M.array_alive(b) and leaves_of(b)
  if not f or f.sum or not f[1] then return nil end
  local n, nl = select("#", ...), #f
  local lin = n > nl and position(b.a, select_first(n - nl, ...))
  if not lin then return nil end
  for k = 1, nl do
    local v, t = select(n - nl + k, ...), f[k]
    local tv = type(v)
    if t == "bool" then
      if tv ~= "boolean" then return nil end
    elseif t == "f32" or t == "f64" then
      if tv ~= "number" then return nil end
    elseif not (tv == "number" and v == math.floor(v) and v >= -2^63 and v < 2^63) and not is_int64(v) then
      return nil
    end
  end
  for k = 1, nl do
    local p, v = C.lacc_array_leaf_data(b.a, k - 1), (select(n - nl + k, ...))
    if p == nil or not elem_write(ffi.cast(elem_ptr[f[k]], p), f[k], lin, v) then return nil end
  end
  return true
end

M.maxn = table.maxn


function M.config_get()
  local p = C.lacc_config_get(live())
  if p == nil then raise() end
  local s = ffi.string(p)
  C.lacc_string_free(p)
  return s
end




function M.array_free(b)
  if M.is_array(b) then box_gc(b) end
end


function M.array_shape(b)
  local a = check_array(b)
  local s = {}
  for d = 1, C.lacc_array_rank(a) do s[d] = tonumber(C.lacc_array_extent(a, d - 1)) end
  return s
end

function M.array_leaf_type(b, leaf)
  local t = C.lacc_array_leaf_type(check_array(b), leaf)
  if t == nil then error("no such field", 2) end
  return ffi.string(t)
end

local i64box = ffi.new("int64_t[1]")
local f64box = ffi.new("double[1]")
local f64words = ffi.cast(u32_ptr, f64box)

-- 64-bit integers come back as int64_t / uint64_t cdata (exact); narrower ones as numbers.
function M.array_get(b, leaf, i)
  local a = check_array(b)
  local t = M.array_leaf_type(b, leaf)
  if t == "bool" or t:sub(1, 1) == "f" then
    if C.lacc_array_get_f(live(), a, leaf, i, f64box) ~= 0 then raise() end
    if t == "bool" then return f64box[0] ~= 0 end
    return f64_at(f64box, f64words, 0)
  end
  if C.lacc_array_get_i(live(), a, leaf, i, i64box) ~= 0 then raise() end
  if t == "i64" then return num64(i64box[0]) end
  if t == "u64" then return num64(ffi.cast("uint64_t", i64box[0])) end
  return tonumber(i64box[0])
end

function is_int64(v)
  return type(v) == "cdata" and (ffi.istype("int64_t", v) or ffi.istype("uint64_t", v))
end


-- A scalar operation's arguments: a match takes one alternative per constructor after its
-- value; the core holds each operation to its own limit.
local MAX_OP_ARGS = 1 + M.limits.constructors
local argbuf = ffi.new("lacc_node *[?]", MAX_OP_ARGS)
-- what names the operation and where is the user's place, for the message past max.
local function collect_upto(max, what, where, ...)
  local n = select("#", ...)
  if n > max then
    error(("%s: too many arguments (%d; at most %d)%s"):format(what, n, max,
      where and " (at " .. where .. ")" or ""), 0)
  end
  for i = 1, n do
    local x = select(i, ...)
    if not M.is_node(x) then error("expected a lacc node, got " .. type(x), 3) end
    argbuf[i - 1] = x
  end
  return n
end
local function collect(what, where, ...) return collect_upto(MAX_ARGS, what, where, ...) end

function M.node_op(op, where, ...)
  local n = collect_upto(MAX_OP_ARGS, op, where, ...)
  return wrap_node(C.lacc_exp_op(live(), op, n, argbuf, where or "?"))
end




-- node_rebind(node, na, nn, from arrays (na), to arrays (na), from nodes (nn), to nodes (nn))
local rb_from, rb_to = ffi.new("lacc_array *[?]", MAX_ARGS), ffi.new("lacc_array *[?]", MAX_ARGS)
local rb_fromn, rb_ton = ffi.new("lacc_node *[?]", MAX_ARGS), ffi.new("lacc_node *[?]", MAX_ARGS)
function M.node_rebind(node, na, nn, ...)
  if na > MAX_ARGS or nn > MAX_ARGS then
    error(("rebind: at most %d arrays and %d programs"):format(MAX_ARGS, MAX_ARGS), 0)
  end
  for i = 1, na do
    rb_from[i - 1] = check_array(select(i, ...))
    rb_to[i - 1] = check_array(select(na + i, ...))
  end
  for i = 1, nn do
    rb_fromn[i - 1] = select(2 * na + i, ...)
    rb_ton[i - 1] = select(2 * na + nn + i, ...)
  end
  return wrap_node(C.lacc_acc_rebind(live(), node, na, rb_from, rb_to, nn, rb_fromn, rb_ton))
end

-- fma of three Lua numbers (lacc.fma outside a function): C's, one rounding.
function M.fma(a, b, c) return ffi.C.fma(a, b, c) end

function M.node_con(t, con, where, ...)
  local n = collect("constructor", where, ...)
  return wrap_node(C.lacc_exp_con(live(), t, con, n, argbuf, where or "?"))
end

function M.node_lam(where, body, ...)
  local n = collect("function", where, ...)
  return wrap_node(C.lacc_lam(live(), n, argbuf, body, where or "?"))
end


local tanbuf = ffi.new("lacc_node *[?]", MAX_ARGS)
function M.node_jvp(where, e, n, ...)
  if n > MAX_ARGS then error(("derivative: at most %d variables"):format(MAX_ARGS), 0) end
  for i = 1, n do
    argbuf[i - 1] = select(i, ...)
    tanbuf[i - 1] = select(n + i, ...)   -- nil: NULL, zero
  end
  return wrap_node(C.lacc_exp_jvp(live(), e, n, argbuf, tanbuf, where or "?"))
end

local sitebuf = ffi.new("lacc_node *[?]", MAX_ARGS)
function M.node_sites(e, a)
  local n = C.lacc_exp_sites(e, a, argbuf, sitebuf, MAX_ARGS)
  if n < 0 then error(("derivative: more than %d reads of one array in a function"):format(MAX_ARGS), 0) end
  local r = {}
  for i = 0, n - 1 do
    C.lacc_node_retain(argbuf[i])
    C.lacc_node_retain(sitebuf[i])
    r[2 * i + 1] = wrap_node(argbuf[i])
    r[2 * i + 2] = wrap_node(sitebuf[i])
  end
  return unpack(r, 1, 2 * n)
end

local dimsbuf, constbuf = ffi.new("int[?]", MAX_RANK + 1), ffi.new("int64_t[?]", MAX_RANK + 1)
local condbuf = ffi.new("lacc_node *[?]", MAX_RANK + 1)
function M.node_index_dims(idx, v, rank)
  if rank < 0 or rank > MAX_RANK or
      C.lacc_exp_index_dims(idx, v, rank, dimsbuf, constbuf, condbuf) == 0 then
    return nil
  end
  local r = {}
  for k = 0, rank - 1 do
    local cond = nil
    if condbuf[k] ~= nil then
      C.lacc_node_retain(condbuf[k])
      cond = wrap_node(condbuf[k])
    end
    r[k + 1] = { dimsbuf[k], tonumber(constbuf[k]), cond }
  end
  return r
end

function M.node_acc(op, where, ...)   -- an awhile of many arrays takes more than MAX_ARGS
  local n = collect_upto(MAX_OP_ARGS, op, where, ...)
  return wrap_node(C.lacc_acc_op(live(), op, n, argbuf, where or "?"))
end

function M.node_info(x)
  return ffi.string(C.lacc_node_level(x)), ffi.string(C.lacc_node_type(x)),
    C.lacc_node_rank(x)
end

local outbuf = ffi.new("lacc_array *[?]", MAX_ARGS)
-- Progress: a C callback into Lua, called on this thread while lacc_run runs. Its error
-- cannot unwind through C: the first is kept and raised after the run. The calls that
-- may call back stay interpreted (jit.off below): LuaJIT forbids callbacks from C
-- functions called by compiled code.
local progress_cb, progress_fn, progress_err
function M.set_progress(fn, after)
  if fn == nil then
    C.lacc_set_progress(live(), nil, nil, 0)
    if progress_cb then progress_cb:free() end
    progress_cb, progress_fn = nil, nil
    return
  end
  if type(fn) ~= "function" then error("progress must be a function", 2) end
  progress_fn = fn
  if not progress_cb then
    progress_cb = ffi.cast("lacc_progress_fn", function(_, fraction)
      if progress_err == nil then
        local ok, err = pcall(progress_fn, fraction)
        if not ok then
          progress_err = err
          C.lacc_interrupt(ctx)   -- the run stops at its next chunk
        end
      end
    end)
  end
  C.lacc_set_progress(live(), progress_cb, nil, after or 1.0)
end

local function after_run()
  if progress_err ~= nil then
    local err = progress_err
    progress_err = nil
    error(err, 0)
  end
end

-- The results of a run, out of the shared buffer before any is wrapped: wrapping may
-- collect garbage, and a finaliser may run lacc again and refill the buffer.
local function take_results(rc, n)
  local r = {}
  for i = 1, rc == 0 and n or 0 do r[i] = outbuf[i - 1] end
  for i = 1, #r do r[i] = wrap_array(r[i]) end
  return r
end

function M.run(backend, ...)
  local n = collect("run", nil, ...)
  local rc = C.lacc_run(live(), backend, n, argbuf, outbuf)
  local r = take_results(rc, n)
  after_run()
  if rc ~= 0 then raise() end
  return unpack(r, 1, n)
end
jit.off(M.run)



-- Programs: a table holding the cdata (released by its finalizer) and the result count.
function M.program_new(backend, nparams, ...)
  local n = collect("compile", nil, ...)
  local p = C.lacc_program_new(live(), backend, nparams, n, argbuf)
  if p == nil then raise() end
  return { p = ffi.gc(p, C.lacc_program_release), n = n }
end

local abuf = ffi.new("lacc_array *[?]", MAX_ARGS)
function M.program_run(prog, ...)
  local n = select("#", ...)
  if n > MAX_ARGS then error(("too many arguments (at most %d)"):format(MAX_ARGS), 0) end
  for i = 1, n do abuf[i - 1] = check_array((select(i, ...))) end
  local rc = C.lacc_program_run(live(), prog.p, n, abuf, outbuf)
  local r = take_results(rc, prog.n)
  after_run()
  if rc ~= 0 then raise() end
  return unpack(r, 1, prog.n)
end
jit.off(M.program_run)

local stats = ffi.new("lacc_stats")
function M.explain(backend, ...)
  local n = collect("explain", nil, ...)
  local s = C.lacc_explain_on(live(), backend, n, argbuf, stats)
  if s == nil then raise() end
  local text = ffi.string(s)
  C.lacc_string_free(s)
  return text, stats.kernels, stats.intermediates, stats.lets
end

function M.layout(t, strategy)
  local s = C.lacc_layout(live(), t, strategy)
  if s == nil then raise() end
  local text = ffi.string(s)
  C.lacc_string_free(s)
  return text
end

function M.devices()
  local s = C.lacc_devices(live())
  if s == nil then raise() end
  local text = ffi.string(s)
  C.lacc_string_free(s)
  return text
end



registry["lacc.ffi_core"] = M
return M
