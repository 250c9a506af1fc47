-- lacc.mpi: distributed arrays. spec/mpi/cases.lua runs under `mpirun -n P` for P = 1..4
-- (--oversubscribe: this machine may have fewer cores), each case checked on every rank
-- against the interpreter on the whole arrays; each line it prints is a test here. Every
-- mpirun has a bounded time (timeout), so a hang fails rather than stalls the suite.
-- Where lacc was built without MPI, the specs check that lacc.mpi says so.
local H = require "helper"
local lacc = H.lacc

-- Lua 5.4 runs every rank count; LuaJIT (the same cases through its FFI binding) 3
-- (make test's time: each mpirun costs seconds)
local RANKS = type(jit) == "table" and { 3 } or { 1, 2, 3, 4 }
local TIMEOUT = 300

local function mpirun_cmd(n, script)
  -- --allow-run-as-root: CI runs as root; it changes nothing for other users
  return ("timeout %d mpirun --allow-run-as-root --oversubscribe -n %d %s %s"):format(TIMEOUT, n, H.vm, script)
end

local have_mpirun = H.sh("command -v mpirun || echo none"):find("none") == nil

describe("lacc.mpi", function()
  if not lacc.mpi.available() then
    it("says lacc was built without MPI", function()
      local ok, err = pcall(lacc.mpi.init)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("mpi.init: this lacc was built without MPI", 1, true), tostring(err))
    end)
    return
  end

  it("is built and mpirun is installed (tools/deps.sh)", function()
    assert.is_true(have_mpirun)
  end)

  it("declares to LuaJIT's FFI (lua/lacc/mpi_ffi.lua) exactly what mpi/lacc_mpi.h declares", function()
    -- every declaration of the header, a line each (its comments dropped), in the cdef
    local function declarations(text)
      text = text:gsub("/%*.-%*/", ""):gsub("#[^\n]*", "")
      local out = {}
      for decl in text:gmatch("[^;{}]+[;{}]") do
        decl = decl:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
        if decl ~= "" and decl ~= "}" then out[#out + 1] = decl end
      end
      table.sort(out)
      return out
    end
    local h = assert(io.open("mpi/lacc_mpi.h")):read("*a")
    local lua = assert(io.open("lua/lacc/mpi_ffi.lua")):read("*a")
    local cdef = lua:match("ffi%.cdef %[%[(.-)%]%]")
    assert.is_truthy(cdef)
    local want = declarations(h)
    assert.is_true(#want >= 15, #want .. " declarations")
    assert.are.same(want, declarations(cdef))
  end)

  it("asks for init before anything else", function()
    local p = lacc.mpi.generate({ 3 }, function(i) return i end)
    local ok, err = pcall(function() return p:run() end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("call lacc.mpi.init() first", 1, true), tostring(err))
  end)

  local names = dofile("spec/mpi/cases.lua").names()
  local results = {}
  local function results_for(n)
    if not results[n] then
      local out = H.sh(mpirun_cmd(n, "spec/mpi/cases.lua"))
      local r = { raw = out }
      for line in out:gmatch("[^\n]+") do
        local name = line:match("^ok (.*)$")
        if name then r[name] = true end
        local bad, why = line:match("^not ok (.-): (.*)$")
        if bad then r[bad] = why end
        if line:match("^done %d+$") then r.done = true end
      end
      results[n] = r
    end
    return results[n]
  end

  for _, n in ipairs(RANKS) do
    describe(("on %d rank%s"):format(n, n > 1 and "s" or ""), function()
      it("runs every case to the end, in bounded time", function()
        local r = results_for(n)
        assert(r.done, "mpirun did not finish:\n" .. r.raw:sub(-3000))
      end)
      for _, name in ipairs(names) do
        it(name, function()
          local r = results_for(n)
          local got = r[name]
          assert(got == true, got and tostring(got) or ("no result:\n" .. r.raw:sub(-2000)))
        end)
      end
    end)
  end

  describe("a rank that dies", function()
    local function job(body)
      local path = os.tmpname()
      local f = assert(io.open(path, "w"))
      f:write('local lacc = require "lacc"\nlocal rank = lacc.mpi.init()\n', body,
        '\nfor _ = 1, 200 do lacc.run(lacc.sum(lacc.mpi.fill({ 100 }, lacc.constant(1, "i64")))) end\n',
        'print("rank " .. rank .. " got past the collectives")\n')
      f:close()
      local t0 = os.time()
      local out = H.sh("(" .. mpirun_cmd(3, path) .. ") 2>&1; echo status=$?")
      os.remove(path)
      return out, os.time() - t0
    end
    it("with an uncaught error ends the job with its status, not a hang", function()
      local out, secs = job('if rank == 2 then error("rank 2 gives up") end')
      local status = tonumber(out:match("status=(%d+)"))
      assert(status ~= 0 and status ~= 124, out)
      assert.truthy(out:find("rank 2 gives up", 1, true), out)
      assert.is_nil(out:find("got past the collectives", 1, true), out)
      assert(secs < 60, "took " .. secs .. " s")
    end)
    it("that cannot take part in an exchange makes it an error on every rank, none left waiting", function()
      -- LACC_MPI_TEST_FAIL=2 (a test hook): rank 2 cannot allocate its exchanges' buffers
      local path = os.tmpname()
      local f = assert(io.open(path, "w"))
      f:write('local lacc = require "lacc"\nlocal rank = lacc.mpi.init()\n',
        'local ok, err = pcall(lacc.run, lacc.sum(lacc.mpi.fill({ 100 }, lacc.constant(1, "i64"))))\n',
        'print("rank " .. rank .. ": " .. tostring(ok) .. " " .. tostring(err))\n')
      f:close()
      local out = H.sh("(" .. mpirun_cmd(3, path):gsub(" %-n 3 ", " -x LACC_MPI_TEST_FAIL=2 -n 3 ") .. ") 2>&1; echo status=$?")
      os.remove(path)
      assert.truthy(out:find("status=0", 1, true), out)
      assert.truthy(out:find("rank 2: false [^\n]*out of memory for an exchange %(LACC_MPI_TEST_FAIL%)"), out)
      for _, r in ipairs { 1, 3 } do
        assert.truthy(out:find("rank " .. r .. ": false [^\n]*another rank could not take part in the exchange"), out)
      end
    end)
    it("killed ends the job with an MPI error, not a hang", function()
      local out, secs = job('if rank == 2 then os.execute("kill -KILL " .. ' ..
        'io.open("/proc/self/stat"):read("*l"):match("^(%d+)")) end')
      local status = tonumber(out:match("status=(%d+)"))
      assert(status ~= 0 and status ~= 124, out)
      assert.is_nil(out:find("got past the collectives", 1, true), out)
      assert(secs < 60, "took " .. secs .. " s")
    end)
  end)
end)
