-- explain_golden.lua: what `lacc.explain` prints (plain, with the C source, with the
-- OpenCL C source) for the corpus of spec/golden/explain_corpus.lua and for every program
-- the examples (examples/*.lua) run, and the stored form of those texts in
-- spec/golden/explain/ that spec/golden/explain_golden_spec.lua compares against.
-- Owns: collecting the texts, and encoding them as files (one per program; the fixed
-- prelude of the generated C stored once, the OpenCL C as a checksum). Must not: judge
-- the texts (the spec does), or depend on the checkout it runs from (places are named
-- relative to the repository root, which must be the current directory).
--
-- As a script it writes the stored texts from the build that LUA_PATH, LUA_CPATH and
-- LACC_LIB name, e.g. the build before a reorganisation:
--   B=/work/golden/base LUA_PATH="$B/lua/?.lua;$B/lua/?/init.lua;;" LUA_CPATH="$B/build/?.so;;" \
--     LACC_LIB=$B/build/liblacc.so LACC_CACHE=$PWD/build/kcache lua5.4 tools/explain_golden.lua
-- (a folder as its argument writes there instead of spec/golden/explain; `--full DIR`
-- writes every text in full, the OpenCL C too, for `diff -r` between two builds).
local M = {}

M.dir = "spec/golden/explain"
M.corpus = "spec/golden/explain_corpus.lua"
M.prelude_file = "_prelude_c.txt"

-- The examples at the small sizes spec/surface/examples_spec.lua runs them at (the texts
-- show the inputs' extents). A new example needs its sizes here.
M.examples = {
  blackscholes = { N = "2001" }, blur = { W = "64", OUT = true }, dotp = {},
  histogram = { N = "5003" }, mandelbrot = { W = "60", OUT = true }, nbody = { N = "40", STEPS = "3" },
  nearest = { N = "301" }, saxpy = { N = "1001" },
}

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- A file loaded under a fixed chunk name (its path from the repository root), so that
-- the places in the texts are the same from every checkout and every LUA_PATH.
local function load_named(path)
  local src = assert(read(path), "cannot read " .. path)
  return assert((loadstring or load)(src, "@" .. path))
end

-- Examples whose programs are derivatives (lacc.grad's): their rules are checked against
-- finite differences (spec/kernels/grad_spec.lua), and their generated code is not stored
-- while those rules still change it.
M.derivatives = { gmm = true, logreg = true }

-- The examples on one process: those for MPI ranks (mpi_*.lua, run by mpirun; their
-- programs are distributed) and the derivatives' are not in the corpus.
function M.example_names()
  local names = {}
  local h = io.popen("ls examples")
  for f in h:lines() do
    local n = f:match("^(.-)%.lua$")
    if n and not n:find("^mpi_") and not M.derivatives[n] then names[#names + 1] = n end
  end
  h:close()
  table.sort(names)
  return names
end

-- The three texts of a program, explained through the core (roots: core nodes) under
-- the options in force, as the run or compile that was about to happen sees them.
local function explain_core(core, ...)
  local plain, kernels, intermediates, lets = core.explain(nil, ...)
  core.set_option("source", true)
  local ok, c = pcall(core.explain, nil, ...)
  core.set_option("source_opencl", true)
  local ok2, cl = pcall(core.explain, nil, ...)
  core.set_option("source", false)   -- resets both sources
  if not ok then error(c, 0) end
  if not ok2 then error(cl, 0) end
  return { plain = plain, c = c, cl = cl,
           stats = ("kernels %d, intermediates %d, lets %d"):format(tonumber(kernels),
             tonumber(intermediates), tonumber(lets)) }
end

-- Run f with every run and every compilation of the core explained first; returns the
-- texts of the distinct programs, in the order they were first met.
local function capture(lacc, f)
  local core = require("lacc.util").core
  local run, program_new = core.run, core.program_new
  local got, seen = {}, {}
  local function record(t)
    local key = t.plain .. "\0" .. t.c .. "\0" .. t.cl
    if not seen[key] then
      seen[key] = true
      got[#got + 1] = t
    end
  end
  core.run = function(backend, ...)
    record(explain_core(core, ...))
    return run(backend, ...)
  end
  core.program_new = function(backend, n, ...)
    record(explain_core(core, ...))
    return program_new(backend, n, ...)
  end
  local ok, err = pcall(f)
  core.run, core.program_new = run, program_new
  if not ok then error(err, 0) end
  return got
end

-- Texts of one direct corpus entry: the program and options it returned.
local function explain_public(lacc, p, opts)
  local function with(extra)
    local o = {}
    for k, v in pairs(opts or {}) do o[k] = v end
    for k, v in pairs(extra) do o[k] = v end
    return o
  end
  local plain, st = lacc.explain(p, with {})
  return { plain = plain, c = (lacc.explain(p, with { source = true })),
           cl = (lacc.explain(p, with { source = "opencl" })),
           stats = ("kernels %d, intermediates %d, lets %d"):format(tonumber(st.kernels),
             tonumber(st.intermediates), tonumber(st.lets)) }
end

-- Run one example on the interpreter at its small sizes, its output dropped.
local function run_example(lacc, name)
  local sizes = M.examples[name]
  if not sizes then
    error(("examples/%s.lua has no sizes in tools/explain_golden.lua (M.examples)"):format(name), 0)
  end
  local tmp = os.tmpname()
  local env = { LACC_BACKEND = "interp" }
  for k, v in pairs(sizes) do env[k] = v == true and tmp .. "_" .. k .. ".png" or v end
  -- the example runs with its environment faked and its printing muted
  local getenv, print_ = os.getenv, print
  os.getenv = function(k) if env[k] ~= nil then return env[k] end return getenv(k) end -- luacheck: ignore 122
  print = function() end -- luacheck: ignore 121
  local ok, err = pcall(function()
    return capture(lacc, load_named("examples/" .. name .. ".lua"))
  end)
  os.getenv, print = getenv, print_ -- luacheck: ignore 121 122
  os.execute(("rm -f '%s' '%s'_*"):format(tmp, tmp))
  if not ok then error("examples/" .. name .. ".lua: " .. tostring(err), 0) end
  return err
end

-- Every program's texts: { {name, plain, c, cl, stats}, ... }, corpus first.
function M.collect(lacc)
  lacc.set_layout("compact")
  lacc.config { tier = "opt" }   -- the texts hold no "-- code:" line, which the caches change
  local out = {}
  local function put(name, t)
    t.name = name
    out[#out + 1] = t
  end
  for _, e in ipairs(load_named(M.corpus)()(lacc)) do
    local name, f = e[1], e[2]
    local p, opts
    local got = capture(lacc, function() p, opts = f(lacc) end)
    if p ~= nil then
      assert(#got == 0, name .. ": an entry returning a program must run nothing")
      put(name, explain_public(lacc, p, opts))
    else
      assert(#got > 0, name .. ": a captured entry ran nothing")
      for k, t in ipairs(got) do put(name .. "_" .. k, t) end
    end
  end
  for _, n in ipairs(M.example_names()) do
    for k, t in ipairs(run_example(lacc, n)) do put("examples_" .. n .. "_" .. k, t) end
  end
  for _, t in ipairs(out) do
    for file in t.plain:gmatch("%(at ([^)]-):%d+%)") do
      if file ~= M.corpus and not file:find("^examples/") then
        error(("%s: a place in %s: an entry's program must not be a tail call (write `return (lacc.f(...))`)")
          :format(t.name, file), 0)
      end
    end
  end
  return out
end

-- ---- the stored form

local MARK = "==== "
local function section(title, body) return MARK .. title .. "\n" .. body .. "\n" end

-- Where a generated source's kernels begin: its first function lacc_f<N>.
local function split_source(src)
  local at = src:find("\n[%w_ ]-void lacc_f%d+%(")
  if not at then return nil end
  return src:sub(1, at), src:sub(at + 1)
end

-- The C prelude (the source up to its first kernel, after the plain text) of the first
-- program that has one; a program whose source does not start so is stored in full.
function M.prelude(entries)
  for _, e in ipairs(entries) do
    if e.c:sub(1, #e.plain) == e.plain then
      local pre = split_source(e.c:sub(#e.plain + 1))
      if pre then return pre end
    end
  end
end

-- The OpenCL C is as long as the C and adds little that the C does not show: it is
-- stored as its length and two checksums (31-bit polynomial hashes, exact in doubles on
-- both VMs); `tools/explain_golden.lua --full DIR` of two builds and diff -r show a change.
function M.summary(s)
  local a, b = 0, 0
  for i = 1, #s do
    local c = s:byte(i)
    a = (a * 31 + c) % 2147483647
    b = (b * 131 + c) % 2147483629
  end
  return ("%d bytes, checksum %08x%08x"):format(#s, a, b)
end

local C_TITLE, CL_TITLE = "explain(p, {source = true})", 'explain(p, {source = "opencl"}): '

function M.encode(e, prelude)
  assert(not ("\n" .. e.plain .. "\n" .. e.c):find("\n" .. MARK, 1, true),
         e.name .. ": a line of its text begins with " .. MARK)
  local head = e.plain .. (prelude or "")
  local c
  if prelude and e.c:sub(1, #head) == head then
    c = section(("%s: the text above, then %s, then"):format(C_TITLE, M.prelude_file), e.c:sub(#head + 1))
  else
    c = section(C_TITLE .. " in full", e.c)
  end
  return section("explain(p)", e.plain) .. section("stats: " .. e.stats, "") .. c
         .. section(CL_TITLE .. M.summary(e.cl), "")
end

-- The texts a stored file holds (the inverse of encode).
function M.decode(s, prelude)
  local sections, pos = {}, 1
  while pos <= #s do
    assert(s:sub(pos, pos + #MARK - 1) == MARK, "not a stored explain text")
    local eol = s:find("\n", pos, true)
    local nxt = s:find("\n" .. MARK, eol, true)
    local body = s:sub(eol + 1, (nxt or #s) - 1)
    sections[#sections + 1] = { s:sub(pos + #MARK, eol - 1), body }
    pos = nxt and nxt + 1 or #s + 1
  end
  local e = {}
  for _, sec in ipairs(sections) do
    local t, b = sec[1], sec[2]
    if t == "explain(p)" then e.plain = b
    elseif t:find("^stats: ") then e.stats = t:sub(8)
    elseif t == C_TITLE .. " in full" then e.c = b
    elseif t:sub(1, #C_TITLE + 1) == C_TITLE .. ":" then
      e.c = e.plain .. assert(prelude, "no stored prelude") .. b
    elseif t:sub(1, #CL_TITLE) == CL_TITLE then e.cl_summary = t:sub(#CL_TITLE + 1)
    else error("a stored explain text with an unknown section: " .. t) end
  end
  return e
end

function M.read_prelude(dir) return read(dir .. "/" .. M.prelude_file) end

function M.read(dir, name, prelude)
  local s = read(dir .. "/" .. name .. ".txt")
  return s and M.decode(s, prelude)
end

function M.stored_names(dir)
  local names = {}
  local h = io.popen(("ls '%s'"):format(dir))
  for f in h:lines() do
    local n = f:match("^(.-)%.txt$")
    if n and n:sub(1, 1) ~= "_" then names[#names + 1] = n end
  end
  h:close()
  table.sort(names)
  return names
end

function M.write_all(dir, entries)
  os.execute(("mkdir -p '%s' && rm -f '%s'/*.txt"):format(dir, dir))
  local pre = M.prelude(entries)
  if pre then write(dir .. "/" .. M.prelude_file, pre) end
  for _, e in ipairs(entries) do
    local s = M.encode(e, pre)
    local back = M.decode(s, pre)
    assert(back.plain == e.plain and back.c == e.c and back.stats == e.stats
           and back.cl_summary == M.summary(e.cl), e.name .. ": the stored form does not give back its texts")
    write(dir .. "/" .. e.name .. ".txt", s)
  end
end

-- Every text in full, three files a program, to diff two builds' texts with diff -r.
function M.write_full(dir, entries)
  os.execute(("mkdir -p '%s'"):format(dir))
  for _, e in ipairs(entries) do
    write(("%s/%s.txt"):format(dir, e.name), e.plain .. "-- stats: " .. e.stats .. "\n")
    write(("%s/%s.c.txt"):format(dir, e.name), e.c)
    write(("%s/%s.opencl.txt"):format(dir, e.name), e.cl)
  end
end

if arg and arg[0] and arg[0]:find("explain_golden%.lua$") then
  local full = arg[1] == "--full"
  local dir = arg[full and 2 or 1] or (not full and M.dir)
              or error("usage: explain_golden.lua [--full DIR | DIR]")
  local entries = M.collect(require "lacc")
  if full then M.write_full(dir, entries) else M.write_all(dir, entries) end
  print(("%d programs written to %s (%s)"):format(#entries, dir,
    type(jit) == "table" and jit.version or _VERSION))
end

return M
