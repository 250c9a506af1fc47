-- lacc.run: running and explaining array programs.
-- Owns: run, explain and compile with their options (checked before anything runs), the
-- backend and device chosen, the layout of results (set_layout), progress callbacks,
-- devices, transfers and memory. Must not: hold semantics (the core does).
local types = require "lacc.types"
local util = require "lacc.util"
local exp = require "lacc.exp"
local array = require "lacc.array"
local accs = require "lacc.acc"
local core, where, fail = util.core, util.where, util.fail
local to_acc, wrap, is_acc = accs.to_acc, accs.wrap, accs.is_acc
local unpack = table.unpack or unpack

local M = {}
local F = {}   -- what this module adds to lacc
-- lacc itself (M.install): calls go through it, so they meet collection.lua's wrappers.
local lacc

local function roots_of(p, what)
  if is_acc(p) or array.is_array(p) then return { to_acc(p, what) } end
  if exp.is_exp(p) then return { lacc.unit(p) } end
  if type(p) == "table" and #p > 0 then
    local r = {}
    for i, x in ipairs(p) do r[i] = to_acc(x, what) end
    return r
  end
  fail("%s: expected an array program (or a table of them), got %s", what, type(p))
end

local function nodes(roots)
  local r = {}
  for i, x in ipairs(roots) do r[i] = x.node end
  return unpack(r, 1, #roots)
end

-- The layout of arrays made from now on in this Lua state ("compact" by default).
local current_layout = "compact"
function F.set_layout(strategy)
  types.check_layout("set_layout", strategy)
  core.set_layout(strategy)
  current_layout = strategy
end

local function pack(...) return { n = select("#", ...), ... } end

-- The options of run, compile and explain, checked before anything runs: a misspelt
-- option or a value of the wrong type is an error naming the function.
local known_options = { backend = true, device = true, layout = true, progress = true,
                        progress_after = true, fusion = true, hfuse = true, sharing = true,
                        source = true }
local no_options = setmetatable({}, { __newindex = function() error("no_options is read-only", 2) end })
local function check_opts(opts, what)
  if opts == nil then return no_options end
  if type(opts) ~= "table" then fail("%s: expected a table of options, got %s", what, type(opts)) end
  for k in pairs(opts) do
    if not known_options[k] then
      fail("%s: unknown option '%s' (expected backend, device, layout, progress, progress_after, "
           .. "fusion, hfuse, sharing or source)", what, tostring(k))
    end
  end
  for _, name in ipairs { "fusion", "hfuse", "sharing" } do
    if opts[name] ~= nil and type(opts[name]) ~= "boolean" then
      fail("%s: option %s must be true or false, got %s", what, name, type(opts[name]))
    end
  end
  if opts.source ~= nil and type(opts.source) ~= "boolean" and opts.source ~= "opencl" then
    fail("%s: option source must be true, false or \"opencl\", got %s", what, tostring(opts.source))
  end
  if opts.layout ~= nil then types.check_layout(what, opts.layout) end
  if opts.progress ~= nil and type(opts.progress) ~= "function" then
    fail("%s: progress must be a function, got %s", what, type(opts.progress))
  end
  if opts.progress_after ~= nil and type(opts.progress_after) ~= "number" then
    fail("%s: progress_after must be a number of seconds, got %s", what, type(opts.progress_after))
  end
  return opts
end

-- The backend name the core takes: "cpu", "interp", or "opencl[:device]" (opts.device
-- or $LACC_DEVICE: a 1-based index or part of a device's name).
local function check_backend(opts, what)
  -- nil: the core takes the backend in force (lacc.config, else LACC_BACKEND, else cpu)
  if opts.backend == nil and opts.device == nil then return nil end
  local backend = opts.backend or core.config_get():match("backend=([^\n]*)")
  if backend ~= "cpu" and backend ~= "interp" and backend ~= "opencl" then
    fail("%s: unknown backend '%s' (expected \"cpu\", \"opencl\" or \"interp\")", what,
         tostring(backend))
  end
  if backend == "opencl" and opts.device ~= nil then
    if type(opts.device) ~= "number" and type(opts.device) ~= "string" then
      fail("%s: device must be an index or a name, got %s", what, type(opts.device))
    end
    backend = "opencl:" .. tostring(opts.device)
  end
  return backend
end

-- The progress callback in force and its delay: a run inside a progress callback may
-- set its own, and the outer run's is put back after it.
local progress_now = {}

-- Run f(...) with the options of opts in force: layout of the results, and the
-- fusion / hfuse / sharing switches (ablation) and explain's source listing.
local function with_options(opts, f, ...)
  local switches = {}
  for _, name in ipairs { "fusion", "hfuse", "sharing", "source" } do
    if opts[name] ~= nil then switches[#switches + 1] = name end
  end
  if not opts.layout and #switches == 0 and not opts.progress then return f(...) end
  local saved, saved_progress = current_layout, progress_now
  if opts.progress then
    progress_now = { fn = opts.progress, after = opts.progress_after or 1.0 }
    core.set_progress(progress_now.fn, progress_now.after)
  end
  if opts.layout then core.set_layout(opts.layout) end
  for _, name in ipairs(switches) do
    if name == "source" and opts.source == "opencl" then core.set_option("source_opencl", true)
    else core.set_option(name, opts[name]) end
  end
  local r = pack(pcall(f, ...))
  if opts.progress then
    progress_now = saved_progress
    core.set_progress(progress_now.fn, progress_now.after)
  end
  core.set_layout(saved)
  for _, name in ipairs(switches) do core.set_option(name, name ~= "source") end
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end

-- A program object run again skips the work before its kernels run (sharing recovery,
-- fusion, lowering, the kernels' source made and hashed: milliseconds for a large one):
-- its compiled program is kept with it, weakly, for the settings it was made under (the
-- backend, the layout of results, the switches and lacc.config). The program holds no
-- more than the node does: the arrays it uses.
local memo = setmetatable({}, { __mode = "k" })
-- lacc.config's changes made by this state, counted: the settings a program was made
-- under, without reading them all back on each run (a cost of several us a run)
local config_generation = 0
-- The memo entry m still fits: run the same way, and for a table, of the same programs.
local function memo_fits(m, many, backend, layout, opts)
  if m == nil or m.backend ~= backend or m.layout ~= layout or m.fusion ~= opts.fusion or
     m.hfuse ~= opts.hfuse or m.sharing ~= opts.sharing or m.generation ~= config_generation then
    return false
  end
  if many == nil then return true end
  if #m.nodes ~= #many then return false end
  for i = 1, #many do
    if m.nodes[i] ~= many[i] then return false end
  end
  return true
end

-- key: a program object's node, or a table of programs (then many: their nodes; kept
-- with the table: a table of programs built once and run again reuses what it made, as
-- one program object does). The entry never holds its key (LuaJIT's weak tables are not
-- ephemerons: a value that held its key would keep both for ever).
local function run_memo(key, many, backend, opts)
  local layout = opts.layout or current_layout
  local m = memo[key]
  if not memo_fits(m, many, backend, layout, opts) then
    m = { backend = backend, layout = layout, fusion = opts.fusion, hfuse = opts.hfuse,
          sharing = opts.sharing, generation = config_generation, nodes = many,
          prog = many and core.program_new(backend, 0, unpack(many))
                      or core.program_new(backend, 0, key) }
    memo[key] = m
  end
  return core.program_run(m.prog)
end

-- run(p [, opts]) -> host array(s); p an array program, a table of them, or a scalar.
-- opts: backend, layout (of the results), fusion = false, hfuse = false, sharing = false,
-- progress = function(fraction) (called once the run has taken progress_after seconds,
-- default 1, then every 0.2 s or so, and with 1 at the end; cpu and opencl backends).
function F.run(p, opts)
  if opts ~= nil and (is_acc(opts) or core.is_array(opts) or lacc.is_collection(opts)) then
    fail("run: the second argument is %s, not options: to run several programs pass them in " ..
         "one table, lacc.run({p, q})", util.describe(opts))
  end
  opts = check_opts(opts, "run")
  local backend = check_backend(opts, "run")
  if is_acc(p) then return with_options(opts, run_memo, p.node, nil, backend, opts) end
  local roots = roots_of(p, "run")
  if type(p) == "table" and not is_acc(p) and not array.is_array(p) and not exp.is_exp(p) then
    return with_options(opts, run_memo, p, { nodes(roots) }, backend, opts)
  end
  return with_options(opts, core.run, backend, nodes(roots))
end

-- explain(p [, opts]) -> text, { kernels, intermediates, lets }; opts.source = true
-- appends the generated C, opts.source = "opencl" the OpenCL C; opts.backend = "opencl"
-- (and opts.device) explains the OpenCL backend's kernels and how the device runs them.
function F.explain(p, opts)
  opts = check_opts(opts, "explain")
  local backend = check_backend(opts, "explain")
  local roots = roots_of(p, "explain")
  local text, kernels, intermediates, lets = with_options(opts, core.explain, backend, nodes(roots))
  return text, { kernels = kernels, intermediates = intermediates, lets = lets }
end

-- devices() -> { {index, name, vendor, type = "cpu"|"gpu", compute_units, memory, fp64,
-- version}, ... }: the OpenCL devices (none without OpenCL).
function F.devices()
  local r = {}
  for line in core.devices():gmatch("[^\n]+") do
    local f = {}
    for x in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = x end
    r[#r + 1] = { index = tonumber(f[1]), name = f[2], vendor = f[3], type = f[4],
                  compute_units = tonumber(f[5]), memory = tonumber(f[6]), fp64 = f[7] == "1",
                  version = f[8] }
  end
  return r
end

-- transfers() -> { uploads, downloads, bytes_up, bytes_down }: arrays (and bytes) copied
-- between the host and OpenCL devices by this Lua state so far. Device results are read
-- back only when the host first reads them; arrays used on a device stay there for
-- later runs.
function F.transfers()
  local up, down, bup, bdown = core.transfers()
  return { uploads = up, downloads = down, bytes_up = bup, bytes_down = bdown }
end

-- device_memory() -> { pooled, buffers, limit, made, reused }: the opencl backend's pool
-- of device buffers (process-wide): bytes and buffers it holds for later arrays, its
-- bound (LACC_CL_POOL_MB), and the buffers made for arrays on devices and taken from it.
function F.device_memory()
  local pooled, buffers, limit, made, reused = core.device_memory()
  return { pooled = pooled, buffers = buffers, limit = limit, made = made, reused = reused }
end

-- tiers() -> { interp, fast, opt, fast_builds, builds, failed }: the cpu backend's
-- tiers (process-wide): runs of programs on the interpreter, on the fast tier's kernels
-- and on the optimised ones; fast-tier builds; optimised builds finished in the
-- background, and those that failed.
function F.tiers()
  local interp, fast, opt, fast_builds, builds, failed = core.tiers()
  return { interp = interp, fast = fast, opt = opt, fast_builds = fast_builds,
           builds = builds, failed = failed }
end

-- tuning() -> the thresholds and sizes that steer lacc's choices, in a fixed order:
-- t[k] = { name =, value =, unit =, what = }, and t[name] the same record.
function F.tuning()
  local t, i = {}, 0
  while true do
    local name, value, unit, what = core.tuning(i)
    if name == nil then return t end
    local r = { name = name, value = value, unit = unit, what = what }
    t[#t + 1], t[name] = r, r
    i = i + 1
  end
end

-- memory() -> bytes of host memory held by this Lua state's arrays (results, inputs and
-- the arrays programs keep); it falls when arrays are freed or collected.
function F.memory() return core.bytes() end

-- compile(fn [, opts]) -> a function of host arrays and scalars. fn is traced once per
-- kind of arguments (element types, ranks, layouts) and optimised and compiled once; each
-- call then only binds the arrays and runs the kernels (Accelerate's runN). A Lua number
-- or boolean argument is a scalar parameter: its type is opts.args[i], else fixed by the
-- first call (boolean: bool; an integral number: i64; else f64); fn gets it as an
-- expression, and each call passes its value in a rank-0 array (one kernel for all values).
local function scalar_type(v, declared)
  if declared then return declared end
  if type(v) == "boolean" then return "bool" end
  if type(v) == "cdata" then return "i64" end
  return "f64"
end

-- a Lua number, boolean or 64-bit cdata: a compiled function's scalar argument
local function is_scalar_arg(a)
  local ta = type(a)
  return ta == "number" or ta == "boolean" or (ta == "cdata" and not array.is_array(a))
end

-- scalar argument i (a) in a rank-0 array of type t
local function boxed(i, a, t)
  local ok, box = pcall(array.new, t, {}, a)
  if not ok then
    fail("compiled function: argument %d: %s", i, (tostring(box):gsub("^array: ", ""):gsub(" %(at [^)]*%)$", "")))
  end
  return box
end

-- After a trace: each number argument i the function used as an integer (integral[i])
-- must be one.
local function check_integral(integral, n, ...)
  for i = 1, n do
    local v = select(i, ...)
    if integral[i] and type(v) == "number" and not util.is_integer(v) then
      fail("compiled function: argument %d is %s, and the function uses it as an integer " ..
           "(declare its type: lacc.compile(fn, {args = {[%d] = \"f64\"}}) and cast)", i,
           util.show(v), i)
    end
  end
end

-- what lacc.mpi's compiled functions share with these (lua/lacc/mpi.lua)
M.compile_args = { is_scalar = is_scalar_arg, scalar_type = scalar_type, boxed = boxed,
                   check_integral = check_integral }

local function check_args_opt(args)
  if args == nil then return {} end
  if type(args) ~= "table" then fail("compile: args must be a table of element types by position, got %s", type(args)) end
  for i, t in pairs(args) do
    if type(i) ~= "number" or not types.is_scalar[t] then
      fail("compile: args[%s] must be a scalar type, got %s", tostring(i), tostring(t))
    end
  end
  return args
end

-- An array's element type, rank and layout as a compiled function's key: fixed for the
-- array's life, so found once (three calls into the core and a format each call before).
local kind_cache = setmetatable({}, { __mode = "k" })
local function kind_of(a)
  local k = kind_cache[a]
  if k == nil then
    k = ("%s/%d/%s"):format(core.array_type(a), #core.array_shape(a), core.array_layout(a))
    kind_cache[a] = k
  end
  return k
end

function F.compile(fn, opts)
  if type(fn) ~= "function" then fail("compile: expected a function, got %s", type(fn)) end
  local declared = check_args_opt(type(opts) == "table" and opts.args or nil)
  if type(opts) == "table" and opts.args ~= nil then   -- the other options as run's
    local copy = {}
    for k, v in pairs(opts) do if k ~= "args" then copy[k] = v end end
    opts = copy
  end
  opts = check_opts(opts, "compile")
  local backend = check_backend(opts, "compile")
  -- scalars[i]: the type of argument i, once fixed; integral[i]: an undeclared number
  -- argument met an integer where fn used it, so its values must be integers
  local programs, scalars, integral, any_integral = {}, {}, {}, false
  return function(...)
    local n = select("#", ...)
    local args, key = { ... }, nil
    for i = 1, n do
      local a = args[i]
      local kind
      if is_scalar_arg(a) then
        scalars[i] = scalars[i] or scalar_type(a, declared[i])
        args[i] = boxed(i, a, scalars[i])
        kind = "scalar " .. scalars[i]
      else
        if not array.is_array(a) then
          fail("compiled function: argument %d is %s, expected a host array or a number", i,
               util.describe(a))
        end
        array.alive(a, "compiled function")
        kind = kind_of(a)
      end
      key = i == 1 and kind or key .. " " .. kind
    end
    key = key or ""
    local prog = programs[key]
    if not prog then
      local kinds = {}
      for i = 1, n do
        kinds[i] = core.is_array(select(i, ...)) and kind_of(args[i]) or "scalar " .. scalars[i]
      end
      local params, given = {}, {}
      for i = 1, n do
        local a = args[i]
        params[i] = wrap(core.node_param(i - 1, core.array_type(a), #core.array_shape(a),
                                         core.array_layout(a), where()))
        if kinds[i]:find("^scalar ") then
          given[i] = lacc.the(params[i])
          if not declared[i] and scalars[i] == "f64" then
            given[i] = exp.weak_value(given[i], function() integral[i], any_integral = true, true end)
          end
        else
          given[i] = params[i]
        end
      end
      local res = pack(fn(unpack(given, 1, n)))
      if res.n == 0 then fail("compile: the function returned nothing; return array programs") end
      local roots = roots_of(res.n > 1 and { unpack(res, 1, res.n) } or res[1], "compile")
      prog = with_options(opts, core.program_new, backend, n, nodes(roots))
      programs[key] = prog
    end
    -- after the trace: it may have found that fn uses one as an integer
    if any_integral then check_integral(integral, n, ...) end
    if opts.progress then
      return with_options({ progress = opts.progress, progress_after = opts.progress_after },
                          core.program_run, prog, unpack(args, 1, n))
    end
    return core.program_run(prog, unpack(args, 1, n))
  end
end

-- config{threads = 4, cache = "/path", cache_mb = 256, cc = "clang", cflags = "-O2",
-- verbose = true, backend = "cpu", device = "2"}: settings before the LACC_* environment
-- variables (process-wide); config() the settings in force.
local config_numbers = { threads = true, cache_mb = true, grad_mb = true }
function F.config(t)
  if t == nil then
    local r = {}
    for name, value in core.config_get():gmatch("([%w_]+)=([^\n]*)\n") do
      if config_numbers[name] then r[name] = tonumber(value)
      elseif name == "verbose" or name == "contract" then r[name] = value == "true"
      elseif value ~= "" then r[name] = value end
    end
    return r
  end
  if type(t) ~= "table" then fail("config: expected a table of settings, got %s", util.describe(t)) end
  for name, value in pairs(t) do
    if type(name) ~= "string" then fail("config: expected setting names, got %s", util.describe(name)) end
    local tv, text = type(value), nil
    if tv == "boolean" then text = value and "1" or "0"
    elseif tv == "number" then text = util.is_integer(value) and ("%d"):format(value) or ("%.17g"):format(value)
    elseif tv == "string" then text = value
    else fail("config: %s: expected a number, a string or a boolean, got %s", name, util.describe(value)) end
    local ok, err = pcall(core.config_set, name, text)
    config_generation = config_generation + 1
    if not ok then fail("%s", tostring(err)) end
  end
end

M.install = util.installer(F, function(l) lacc = l end)

return M
