-- lacc.mpi_ffi: LuaJIT's binding of liblacc_mpi.so (mpi/lacc_mpi.h), the same functions
-- as the Lua 5.4 module lacc.mpi_core (bindings/lacc_mpi_core.c): the plain ones from
-- mpi/entries.def (lacc.mpi_entries, generated), the byte collectives, agree and stats
-- here. Must not: hold semantics (lacc.mpi does).
local ffi = require "ffi"

ffi.cdef(require "lacc.mpi_cdef")   -- mpi/lacc_mpi.h, generated (make cdef)

-- liblacc_mpi.so: LACC_MPI_LIB, else beside LACC_LIB's liblacc.so, else on package.cpath
local function find_library()
  local tried = {}
  local env, core = os.getenv("LACC_MPI_LIB"), os.getenv("LACC_LIB")
  if env then tried[#tried + 1] = env end
  if core then tried[#tried + 1] = (core:gsub("liblacc%.so$", "liblacc_mpi.so")) end
  for template in package.cpath:gmatch("[^;]+") do
    tried[#tried + 1] = (template:gsub("%?", "liblacc_mpi"))
  end
  for _, name in ipairs(tried) do
    local ok, lib = pcall(ffi.load, name)
    if ok then return lib end
  end
  error("liblacc_mpi.so not found (set LACC_MPI_LIB to its path)", 0)
end

local C = find_library()
local M = { lib = C }

local function raise() error(ffi.string(C.lacc_mpi_error()), 0) end

for name, f in pairs(require("lacc.mpi_entries")(C, { raise = raise })) do M[name] = f end

-- a buffer of parts (lens[0..size-1]) as a table of strings, the buffer freed
local function parts(out, lens, size)
  local r, off, p = {}, 0, ffi.cast("const char *", out)
  for q = 0, size - 1 do
    local n = tonumber(lens[q])
    r[q + 1] = ffi.string(p + off, n)
    off = off + n
  end
  C.lacc_mpi_free(out)
  return r
end

function M.allgather(s)
  local size = M.size()
  local lens, out = ffi.new("int64_t[?]", size), ffi.new("void *[1]")
  if C.lacc_mpi_allgather(s, #s, lens, out) ~= 0 then raise() end
  return parts(out[0], lens, size)
end

function M.alltoall(t)
  local size = M.size()
  local lens, rlens, out = ffi.new("int64_t[?]", size), ffi.new("int64_t[?]", size), ffi.new("void *[1]")
  for q = 1, size do
    if type(t[q]) ~= "string" then error(("alltoall: part %d is not a string"):format(q), 0) end
    lens[q - 1] = #t[q]
  end
  if C.lacc_mpi_alltoall(table.concat(t, "", 1, size), lens, rlens, out) ~= 0 then raise() end
  return parts(out[0], rlens, size)
end

function M.agree(failed, msg, what)
  local first, out = ffi.new("int[1]"), ffi.new("char *[1]")
  if C.lacc_mpi_agree(failed and 1 or 0, msg or "", what or "", first, out) ~= 0 then raise() end
  if first[0] < 0 then return end
  local text = ffi.string(out[0])
  C.lacc_mpi_free(out[0])
  return first[0] + 1, text
end

-- s to rank `to` (0-based; nil: none), then one message from rank `from` (nil: none)
function M.exchange(to, s, from)
  s = s or ""
  local out, len = ffi.new("void *[1]"), ffi.new("int64_t[1]")
  if C.lacc_mpi_exchange(to or -1, s, #s, from or -1, out, len) ~= 0 then raise() end
  if out[0] == nil then return nil end
  return ffi.string(out[0], len[0])   -- the library's receive buffer: not freed
end
function M.reserve(n)
  if C.lacc_mpi_reserve(n) ~= 0 then raise() end
end

function M.stats()
  local s = ffi.new("lacc_mpi_stats")
  C.lacc_mpi_get_stats(s)
  return { bytes_sent = tonumber(s.bytes_sent), bytes_received = tonumber(s.bytes_received),
           messages_sent = tonumber(s.messages_sent), messages_received = tonumber(s.messages_received),
           collectives = tonumber(s.collectives) }
end
function M.abort(status) C.lacc_mpi_abort(status or 1) end

return M
