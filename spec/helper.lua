-- Shared by the specs: the library, backends to test, and reference helpers.
local lacc = require "lacc"
local assert = require "luassert"
local H = { lacc = lacc }

-- Every spec runs on each backend available here: OpenCL when a device answers (PoCL
-- gives one on any machine; LACC_TEST_OPENCL=0 leaves it out).
-- LACC_TEST_BACKENDS="interp,cpu" (say) picks some: tools/runtests.sh runs the OpenCL
-- specs in a process of their own, beside the others. busted --run=cpu (.busted's tasks,
-- through spec/profile.lua) picks one.
H.backends = { "interp", "cpu" }
-- The cpu backend's specs run on its optimised kernels unless the environment names a
-- tier (make test and make check run them on the fast tier, and the specs tagged #opt,
-- spec/kernels/opt_pass_spec.lua among them, on the optimised one; tiers_spec sets its own).
if (os.getenv("LACC_TIER") or "") == "" then lacc.config{ tier = "opt" } end
if os.getenv("LACC_TEST_OPENCL") ~= "0" and #lacc.devices() > 0 then
  H.backends[#H.backends + 1] = "opencl"
end
local only = os.getenv("LACC_TEST_BACKENDS")
local profile = package.loaded["lacc.test_profile"]   -- busted --run=cpu (.busted)
if profile then only = profile.backends end
if only and only ~= "" then
  local keep = {}
  for _, b in ipairs(H.backends) do
    if ("," .. only .. ","):find("," .. b .. ",", 1, true) then keep[#keep + 1] = b end
  end
  H.backends = keep
end

-- Type sweeps (a test repeated for each element type) run where LACC_TEST_SWEEP says,
-- decided here and nowhere else:
--   sample (the default; make test): every type on interp and cpu under each VM; on
--     OpenCL each type under one VM, i32, f64 and tuples under Lua 5.4 and the other types
--     under LuaJIT (the OpenCL C of a test differs between types only in a type's name,
--     and not at all between VMs; tools/runtests.sh runs LuaJIT's OpenCL tests with
--     --tags=sweep, every other OpenCL test under Lua 5.4);
--   check (make check): f64 and i32 only, on every backend;
--   full (make test-full, make test-opencl): every type on every backend under each VM.
-- H.sweeper(it) gives sweep(t, b, name, fn): the test `name` (tagged #sweep) of type t
-- (its name, as "u8" or "(f32,i32)") on backend b where this process runs it, else nothing.
H.sweep_mode = os.getenv("LACC_TEST_SWEEP") or ""
if H.sweep_mode == "" then H.sweep_mode = "sample" end
assert(({ sample = true, check = true, full = true })[H.sweep_mode],
  "LACC_TEST_SWEEP must be sample, check or full, got '" .. H.sweep_mode .. "'")
local LUA54_SWEEP = { i32 = true, f64 = true }
function H.sweeps(t, b)
  if H.sweep_mode == "full" then return true end
  if H.sweep_mode == "check" then return t == "f64" or t == "i32" end
  if b ~= "opencl" then return true end
  local lua54_type = LUA54_SWEEP[t] or t:sub(1, 1) == "("
  return lua54_type == (type(jit) ~= "table")
end
function H.sweeper(it)
  return function(t, b, name, fn)
    if H.sweeps(t, b) then return it(name .. " #sweep", fn) end
  end
end

-- The command that starts a child Lua process like this one: this interpreter, with this
-- process's module paths made absolute (plain busted has them from .busted, not from the
-- environment a child would inherit).
local function absolute(paths)
  local cwd = os.getenv("PWD") or "."
  return (paths:gsub("[^;]+", function(e)
    if e:sub(1, 1) == "/" then return e end
    return cwd .. "/" .. e:gsub("^%./", "")
  end))
end
local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
H.vm = ("env LUA_PATH=%s LUA_CPATH=%s LACC_TIER=%s %s"):format(shq(absolute(package.path)),
  shq(absolute(package.cpath)), lacc.config().tier, arg and arg[-1] or (type(jit) == "table" and "luajit" or "lua5.4"))

-- Programs that run together, each its own result: H.batch(run) gives :add(p) -> k and
-- :get(k), run(list) called on the first get for 16 programs at a time (lacc.run's most).
-- Many small programs of one test file in one run are one kernel to compile, not one
-- each: a compile is most of such a test's time.
function H.batch(run)
  local b = { progs = {}, results = {} }
  function b:add(p)
    self.progs[#self.progs + 1] = p
    return #self.progs
  end
  function b:get(k)
    local c = math.floor((k - 1) / 16)
    if not self.results[c] then
      local list = {}
      for i = c * 16 + 1, math.min(#self.progs, c * 16 + 16) do list[#list + 1] = self.progs[i] end
      self.results[c] = { run(list) }
    end
    return self.results[c][(k - 1) % 16 + 1]
  end
  return b
end

-- A shell command's output (stderr too). Tools run without LD_PRELOAD (under make
-- check-asan it holds the sanitizers, whose leak reports from cc or pgrep are none of
-- lacc's business).
function H.sh(cmd)
  local h = io.popen("unset LD_PRELOAD; " .. cmd .. " 2>&1")
  local out = h:read("a") or h:read("*a")
  h:close()
  return out
end

-- The same for a command that starts a Lua process using lacc: under make check-asan it
-- keeps the sanitizers (without leak checks, as H.child's), which lacc's libraries were
-- built with and must come first.
function H.vm_sh(cmd)
  local asan = os.getenv("ASAN_OPTIONS")
  local env = asan and ("ASAN_OPTIONS='%s:detect_leaks=0' "):format(asan) or ""
  local h = io.popen(env .. cmd .. " 2>&1")
  local out = h:read("a") or h:read("*a")
  h:close()
  return out
end
H.quote = shq

-- "mpirun ... -n N": Open MPI's launcher for n ranks. Under make check-asan the ranks
-- (not mpirun, whose LD_PRELOAD H.sh drops) get the sanitizers, without leak checks (Open
-- MPI's own allocations outlive MPI_Finalize). --allow-run-as-root: CI runs as root; it
-- changes nothing for other users. mpi_yield_when_idle: a rank waiting inside MPI yields
-- its core (Open MPI spins otherwise, where it sees no more ranks than cores: two ranks
-- of a suite whose other processes share those cores burned their time spinning).
function H.mpirun(n)
  local pre, asan = os.getenv("LD_PRELOAD"), os.getenv("ASAN_OPTIONS")
  local san = ""
  if pre and pre ~= "" and asan then
    san = (" -x %s -x %s"):format(shq("LD_PRELOAD=" .. pre), shq("ASAN_OPTIONS=" .. asan .. ":detect_leaks=0"))
  end
  return ("mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1%s -n %d"):format(san, n)
end

-- Runs the Lua source in a child process of this VM (a crash or a hang then fails a test
-- instead of ending busted): its output (stdout and stderr) and its exit status (124 past
-- `limit` seconds, default 300; 139 a crash). args: words after the script; vars:
-- VAR=value words before it. Under make check-asan the child keeps the sanitizers, without
-- leak checks (PoCL's threads upset LeakSanitizer's exit-time check in short processes).
function H.child(source, args, vars, limit)
  local asan = os.getenv("ASAN_OPTIONS")
  local env = asan and ("ASAN_OPTIONS='%s:detect_leaks=0' "):format(asan) or ""
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(source)
  f:close()
  local h = io.popen(("%s%s timeout %d %s '%s' %s 2>&1; echo \"exit=$?\""):format(
    env, vars or "", limit or 300, H.vm, path, args or ""))
  local out = h:read("*a")
  h:close()
  os.remove(path)
  local status = tonumber(out:match("exit=(%d+)%s*$"))
  return out:gsub("exit=%d+%s*$", ""), status
end

-- A new empty directory of this test's own (remove it with rm -rf when done).
function H.tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. shq(d)))
  return d
end

-- An executable shell script at path (a stand-in compiler, say).
function H.script(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  H.sh("chmod +x " .. shq(path))
end

-- A sum type several specs use, and an element's area in plain Lua (f32 arithmetic).
H.Shape = lacc.data("Shape", { { "Circle", "f32" }, { "Rect", "f32", "f32" }, { "Empty" } })
function H.area_ref(s)
  if s.tag == "Circle" then return H.f32(H.f32(s[1] * s[1]) * 3) end
  if s.tag == "Rect" then return H.f32(s[1] * s[2]) end
  return 0
end

-- Deterministic pseudo-random numbers, the same on Lua 5.4 and LuaJIT: the product is
-- taken in two parts, each exact in a double (seed * 1103515245 is not: LuaJIT rounded
-- it, so its specs made other random programs than Lua 5.4's, and compiled them anew).
local seed = 12345
function H.seed(s) seed = s end
function H.lcg(s)
  return ((s * 16838) % 32768 * 65536 + s * 20077 + 12345) % 2147483648   -- 1103515245 = 16838 * 65536 + 20077
end
function H.rand()
  seed = H.lcg(seed)
  return seed / 2147483648
end
function H.randint(lo, hi) return lo + math.floor(H.rand() * (hi - lo + 1)) end

-- Element of a host array as a plain Lua number (LuaJIT gives int64 cdata for 64-bit).
function H.num(v)
  if type(v) == "cdata" then return tonumber(v) end
  return v
end

function H.same(a, b, tol)
  a, b = H.num(a), H.num(b)
  if type(a) == "number" and type(b) == "number" then
    if a ~= a then return b ~= b end
    if tol then return math.abs(a - b) <= tol * math.max(1, math.abs(a), math.abs(b)) end
  end
  return a == b
end

-- Round to f32 like the core stores it.
local f32box
if type(jit) == "table" then
  local ffi = require "ffi"
  f32box = ffi.new("float[1]")
  function H.f32(x) f32box[0] = x; return tonumber(f32box[0]) end
else
  function H.f32(x)
    if x ~= x or x == math.huge or x == -math.huge or x == 0 then return x end
    return (string.unpack("f", string.pack("f", x)))
  end
end

-- Compare a host array against a Lua table of expected values (flat, row-major).
function H.check_array(a, expected, tol)
  assert.are.equal(#expected, #a)
  for i = 1, #expected do
    local got = a:at_linear(i - 1)
    if not H.same(got, expected[i], tol) then
      error(("element %d: expected %s, got %s"):format(i, tostring(expected[i]), tostring(got)), 2)
    end
  end
end

-- A host array of type t holding f(1), ..., f(n).
function H.seq(n, t, f)
  local v = {}
  for i = 1, n do v[i] = f(i) end
  return lacc.fromtable(v, t)
end

-- Shapes every combinator is tried on: rank 0, empty, odd sizes, ranks 1 to 3.
H.shapes = { {}, { 0 }, { 1 }, { 7 }, { 13 }, { 3, 5 }, { 0, 4 }, { 4, 0 }, { 2, 3, 3 } }

function H.size(shape)
  local n = 1
  for _, e in ipairs(shape) do n = n * e end
  return n
end

-- Matrix products (contraction_spec, opencl_tiles): small-integer matrices, a host
-- array of one (any extent may be 0), the product in plain Lua.
function H.small_mat(rows, cols, step)   -- small integers: every f32 sum of them is exact
  local t = {}
  for i = 1, rows do
    t[i] = {}
    for j = 1, cols do t[i][j] = (i * step + j * 3 + i * j) % 9 - 4 end
  end
  return t
end

-- a host array of a table of rows (H.small_mat's); fromtable cannot say an extent is 0, fill can
function H.host_mat(T, rows, cols, t)
  if rows == 0 or cols == 0 then return lacc.run(lacc.fill({ rows, cols }, lacc.constant(0, t))) end
  return lacc.fromtable(T, t)
end

function H.product_ref(A, B, n, k, m)
  local C = {}
  for i = 1, n do
    C[i] = {}
    for j = 1, m do
      local s = 0
      for q = 1, k do s = s + A[i][q] * B[q][j] end
      C[i][j] = s
    end
  end
  return C
end

-- Nested Lua tables of shape sh holding flat (row-major); rank 0: the value itself.
function H.nest(flat, sh)
  if #sh == 0 then return flat[1] end
  local pos = 0
  local function build(d)
    local r = {}
    for i = 1, sh[d] do
      if d == #sh then
        pos = pos + 1
        r[i] = flat[pos]
      else
        r[i] = build(d + 1)
      end
    end
    return r
  end
  return build(1)
end

-- A host array of type t and shape sh holding flat (row-major values).
function H.from_flat(t, sh, flat)
  if H.size(sh) == 0 then return lacc.array(t, sh) end
  return lacc.fromtable(H.nest(flat, sh), t)
end

-- 1-based multi-index of a 0-based linear index.
function H.unravel(shape, lin)
  local ix = {}
  for d = #shape, 1, -1 do
    ix[d] = lin % shape[d] + 1
    lin = math.floor(lin / shape[d])
  end
  return ix
end

function H.ravel(shape, ix)
  local lin = 0
  for d = 1, #shape do lin = lin * shape[d] + (ix[d] - 1) end
  return lin
end

-- A random value of a scalar type, exactly representable in it.
function H.value(t)
  if t == "bool" then return H.rand() < 0.5 end
  if t == "f64" then return H.rand() * 200 - 100 end
  if t == "f32" then return H.f32(H.rand() * 200 - 100) end
  if t == "i8" then return H.randint(-128, 127) end
  if t == "u8" then return H.randint(0, 255) end
  if t == "i16" then return H.randint(-32768, 32767) end
  if t == "u16" then return H.randint(0, 65535) end
  return H.randint(-1000000, 1000000) * (t:sub(1, 1) == "u" and 0 or 1) + H.randint(0, 1000000)
end

local function unpack_(ix, v)
  local args = {}
  for i = 1, #ix do args[i] = ix[i] end
  args[#ix + 1] = v
  return (table.unpack or unpack)(args, 1, #ix + 1)
end

-- A host array of random values and the flat Lua table of the same values.
function H.random_array(t, shape)
  local n = H.size(shape)
  local flat = {}
  for i = 1, n do flat[i] = H.value(t) end
  local a = lacc.array(t, shape)
  for i = 1, n do a:set(unpack_(H.unravel(shape, i - 1), flat[i])) end
  return a, flat
end

-- The line of the calling spec file holding a marker comment ("--@name"), for checks
-- that a message gives the user's place.
function H.line_of(marker)
  local file = debug.getinfo(2, "S").source:gsub("^@", "")
  local n = 0
  for l in io.lines(file) do
    n = n + 1
    if l:find("%-%-@" .. marker .. "$") then return n end
  end
  error("no marker " .. marker .. " in " .. file)
end

return H
