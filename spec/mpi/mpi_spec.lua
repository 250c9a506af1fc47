-- lacc.mpi: distributed arrays. spec/mpi/cases.lua runs under `mpirun -n P` for P = 1..4
-- (--oversubscribe: this machine may have fewer cores), each case checked on every rank
-- against the interpreter on the whole arrays; each line it prints is a test here. Every
-- mpirun has a bounded time (timeout), so a hang fails rather than stalls the suite.
-- Where lacc was built without MPI, the specs check that lacc.mpi says so.
local H = require "helper"
local lacc = H.lacc

-- The rank counts of the cases: LACC_MPI_RANKS (a list, "1,2,3,4": make check-mpi runs
-- 1 to 4 and 7 under both VMs), else for make test's time (each mpirun costs seconds a
-- rank) every count from 1 to 4 once between the VMs: 1, 2 and 4 under Lua 5.4, 3 under
-- LuaJIT (the same cases through its FFI binding).
local RANKS = type(jit) == "table" and { 3 } or { 1, 2, 4 }
if (os.getenv("LACC_MPI_RANKS") or "") ~= "" then
  RANKS = {}
  for n in os.getenv("LACC_MPI_RANKS"):gmatch("[^,%s]+") do
    RANKS[#RANKS + 1] = assert(math.tointeger and math.tointeger(tonumber(n)) or tonumber(n),
      "LACC_MPI_RANKS: expected rank counts, as 1,2,3,4")
  end
end
local TIMEOUT = 300

local function mpirun_cmd(n, script)
  -- -k: Open MPI's mpirun may outlive the SIGTERM of a timeout (its ranks gone, never reaped)
  return ("timeout -k 10 %d %s %s %s"):format(TIMEOUT, H.mpirun(n), H.vm, script)
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

  it("declares to LuaJIT's FFI (lua/lacc/mpi_cdef.lua, generated) exactly what mpi/lacc_mpi.h declares",
     function()
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
    local cdef = require "lacc.mpi_cdef"
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

  if type(jit) ~= "table" then
    it("examples/mpi_cg.lua on 1 to 4 ranks: the one-process solve's iterations, residuals within 1e-12",
       function()
      for n = 1, 4 do
        local out = H.sh("(W=10 " .. mpirun_cmd(n, "examples/mpi_cg.lua") .. ") 2>&1; echo status=$?")
        assert.truthy(out:find("status=0", 1, true), out)
        local k, r, k1, r1, diff = out:match("CG on %d ranks?: (%d+) iterations in [%d.]+ s, residual ([%d.e+-]+) " ..
          "%(recurrence [%d.e+-]+%); one process: (%d+) iterations, residual ([%d.e+-]+) %(difference ([%d.e+-]+)%)")
        assert(k, out)
        assert.are.equal(k1, k)
        assert.is_true(tonumber(diff) <= 1e-12 and math.abs(tonumber(r) - tonumber(r1)) <= 1e-12, out)
        assert.is_true(tonumber(r) < 1e-8, out)   -- converged: TOL 1e-8 of |b|
      end
    end)
  end

  it("ranks build a local kernel once between them: their offsets are read at run time, " ..
     "and the builder's file is the others' (fast tier and cc)", function()
    for _, tier in ipairs { "fast", "opt" } do
      local cache = H.sh("mktemp -d"):gsub("%s+$", "")
      local path = os.tmpname()
      local f = assert(io.open(path, "w"))
      -- rows split 3/3/2 (offsets 0, 3 and 6): each rank's own rows of i * 7 + 1
      f:write(([[
        local lacc = require "lacc"
        local rank = lacc.mpi.init()
        lacc.config { tier = %q }
        local r = lacc.mpi.generate({ 8 }, function(i) return i * 7 + 1 end):run():allgather()
        local want = {}
        for i = 1, 8 do want[i] = i * 7 + 1 end
        assert(table.concat(r:totable(), ",") == table.concat(want, ","), "rank " .. rank)
        print("rank " .. rank .. " same")
      ]]):format(tier))
      f:close()
      local out = H.sh(("LACC_VERBOSE=1 LACC_CACHE=%s %s"):format(H.quote(cache), mpirun_cmd(3, path)))
      os.remove(path)
      os.execute("rm -rf " .. H.quote(cache))
      for r = 1, 3 do assert.truthy(out:find("rank " .. r .. " same", 1, true), out) end
      local _, builds = out:gsub("compiled kernels %(", "")
      assert.are.equal(1, builds, tier .. ":\n" .. out)
    end
  end)

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
      -- a fold's tree (its buffer reserved before the agreement: rank 2's error on every
      -- rank), then an all-gather (rank 2's own reason, the others told it could not)
      f:write('local lacc = require "lacc"\nlocal rank = lacc.mpi.init()\n',
        'local ok, err = pcall(lacc.run, lacc.sum(lacc.mpi.fill({ 100 }, lacc.constant(1, "i64"))))\n',
        'print("fold " .. rank .. ": " .. tostring(ok) .. " " .. tostring(err))\n',
        'local xs = lacc.run(lacc.mpi.fill({ 100 }, lacc.constant(1, "i64")))\n',
        'ok, err = pcall(function() return xs:allgather() end)\n',
        'print("rank " .. rank .. ": " .. tostring(ok) .. " " .. tostring(err))\n')
      f:close()
      local out = H.sh("(" .. mpirun_cmd(3, path):gsub(" %-n 3 ", " -x LACC_MPI_TEST_FAIL=2 -n 3 ") .. ") 2>&1; echo status=$?")
      os.remove(path)
      assert.truthy(out:find("status=0", 1, true), out)
      for r = 1, 3 do
        local want = "fold " .. r .. ": false out of memory for an exchange %(LACC_MPI_TEST_FAIL%) %[rank 2 of 3%]"
        assert.truthy(out:find(want), out)
      end
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

  -- Ranks out of step (issue 49): the agreement before each exchange carries what each
  -- rank is about to do, so that misuse is the same error on every rank, never a hang.
  -- Each job is bounded (60 s): on a lacc without the agreement these hung.
  describe("out of step", function()
    local BOUND = 60
    -- 3 ranks run `body` after `lacc`, `rank` and try(name, f): each rank prints
    -- "<name> rank <r>: <f's error, or no error>"; env: mpirun's -x settings
    local function job(body, env)
      local path = os.tmpname()
      local f = assert(io.open(path, "w"))
      f:write('local lacc = require "lacc"\nlocal rank = lacc.mpi.init()\n',
        'local function try(name, f)\n',
        '  local ok, err = pcall(f)\n',
        '  print(("%s rank %d: %s"):format(name, rank, ok and "no error" or tostring(err)))\n',
        '  io.stdout:flush()\nend\n', body, '\n')
      f:close()
      local cmd = mpirun_cmd(3, path):gsub(" %d+ mpirun ", " " .. BOUND .. " mpirun ")
      if env then cmd = cmd:gsub(" %-n 3 ", " " .. env .. " -n 3 ") end
      local t0 = os.time()
      local out = H.sh("(" .. cmd .. ") 2>&1; echo status=$?")
      os.remove(path)
      return out, tonumber(out:match("status=(%d+)")), os.time() - t0
    end
    -- every rank's (ranks: those expected) message of case `name`: one message, holding
    -- want (a string, or a list of them)
    local function same_error(out, name, want, ranks)
      local msgs = {}
      for _, r in ipairs(ranks or { 1, 2, 3 }) do
        local m = out:match("\n" .. name .. " rank " .. r .. ": ([^\n]*)") or
                  out:match("^" .. name .. " rank " .. r .. ": ([^\n]*)")
        assert(m, ("no line of rank %d for %s:\n%s"):format(r, name, out))
        msgs[#msgs + 1] = m
      end
      for i = 2, #msgs do assert.are.equal(msgs[1], msgs[i]) end
      for _, w in ipairs(type(want) == "table" and want or { want }) do
        assert(msgs[1]:find(w, 1, true), ("%s: %q lacks %q"):format(name, msgs[1], w))
      end
    end

    local cases_out, cases_status
    local function misuse()
      if not cases_out then
        cases_out, cases_status = job([[
local xs = lacc.mpi.generate({ 100 }, function(i) return lacc.cast(i, "f64") end)
try("rank0", function()
  lacc.mpi.scatter(rank == 1 and lacc.fromtable(1.5, "f64") or nil)
end)
try("freed", function()
  local a = lacc.fromtable({ 1, 2, 3 }, "i32")
  a:free()
  lacc.mpi.scatter(rank == 1 and a or nil)
end)
try("block", function()
  local d = lacc.run(lacc.map(function(x) return x * 2 end, xs))
  if rank == 3 then d:free() end
  d:allgather()
end)
try("programs", function()
  lacc.run(rank == 2 and lacc.map(function(x) return x + 1 end, xs) or lacc.sum(xs))
end)
try("shapes", function()
  lacc.run(lacc.sum(lacc.mpi.generate({ rank == 2 and 200 or 100 }, function(i) return lacc.cast(i, "f64") end)))
end)
try("collectives", function()
  if rank == 1 then lacc.mpi.barrier() else lacc.mpi.agree(nil) end
end)
try("after", function()
  local s = lacc.run(lacc.sum(xs)):get()
  if s ~= 5050 then error("the sum after: " .. tostring(s)) end
end)]])
      end
      return cases_out, cases_status
    end

    it("mpi.scatter of an array of rank 0 is the same error on every rank", function()
      local out = misuse()
      same_error(out, "rank0", "mpi.scatter: expected an array of rank 1 or more, got rank 0")
    end)
    it("mpi.scatter of a freed array is the same error on every rank", function()
      same_error(misuse(), "freed", "mpi.scatter: shape: array used after free()")
    end)
    it("allgather of a block freed on one rank is the same error on every rank", function()
      same_error(misuse(), "block", { "allgather: tobytes: array used after free()", "[rank 3 of 3]" })
    end)
    it("ranks running different programs all raise, naming each one's step", function()
      same_error(misuse(), "programs", "mpi: ranks disagree on the next step: ranks 1, 3 run sum of f64 {100}; " ..
        "rank 2 runs the end of lacc.run (map -> f64 {100})")
    end)
    it("ranks running one program over different shapes all raise, naming the shapes", function()
      same_error(misuse(), "shapes", "mpi: ranks disagree on the next step: ranks 1, 3 run sum of f64 {100}; " ..
        "rank 2 runs sum of f64 {200}")
    end)
    it("ranks in different collectives (barrier, agree) all raise", function()
      same_error(misuse(), "collectives", "mpi: ranks disagree on the next step: rank 1 runs lacc.mpi.barrier; " ..
        "ranks 2-3 run lacc.mpi.agree")
    end)
    it("after each misuse the ranks are in step again, and the job ends cleanly", function()
      local out, status = misuse()
      same_error(out, "after", "no error")
      assert(status == 0, out)
    end)

    it("a rank whose program ends makes the others' next exchange an error, not a hang", function()
      local out, status, secs = job([[
if rank == 2 then return end
try("gone", function()
  lacc.run(lacc.sum(lacc.mpi.generate({ 100 }, function(i) return lacc.cast(i, "f64") end)))
end)]])
      same_error(out, "gone", "mpi: ranks disagree on the next step: ranks 1, 3 run sum of f64 {100}; " ..
        "rank 2 runs the end of its program (exit, no more collectives)", { 1, 3 })
      assert(status == 0, out)
      assert(secs < BOUND, "took " .. secs .. " s")
    end)

    it("a rank that does not arrive makes the others raise after LACC_MPI_TIMEOUT, and the job end", function()
      local out, status, secs = job([[
if rank == 2 then os.execute("sleep 8 </dev/null >/dev/null 2>&1") return end
try("late", function()
  lacc.run(lacc.sum(lacc.mpi.generate({ 100 }, function(i) return lacc.cast(i, "f64") end)))
end)
try("later", function() lacc.mpi.barrier() end)
-- the first failed rank's exit ends the job: the other's lines come first (on a loaded
-- machine the two reach the agreement, and time out, seconds apart)
os.execute("sleep 4 </dev/null >/dev/null 2>&1")]], "-x LACC_MPI_TIMEOUT=1.5")
      same_error(out, "late", "mpi: no agreement within 1.5 s (LACC_MPI_TIMEOUT) before sum of f64 {100}", { 1, 3 })
      same_error(out, "later", "mpi: an earlier agreement failed: no agreement within 1.5 s", { 1, 3 })
      assert(status ~= 0 and status ~= 124 and status ~= 137, out)
      assert(secs < BOUND, "took " .. secs .. " s")
    end)

    it("LACC_MPI_TIMEOUT must be a number of seconds", function()
      local out = H.child('local ok, err = pcall(require("lacc").mpi.init) print(ok, err)', "",
        "LACC_MPI_TIMEOUT=soon ")
      local want = "false\tmpi.init: LACC_MPI_TIMEOUT must be a number of seconds (0: no bound), got 'soon'"
      assert.truthy(out:find(want, 1, true), out)
    end)
  end)
end)
