-- tools/fuzz_main.lua: run the differential fuzzer (tools/fuzz.lua) from the command line.
--   lua5.4 tools/fuzz_main.lua [seconds] [seed]   run for that long (default 600 s, seed 1);
--                                                 prints every failure, exits 1 on any
--   lua5.4 tools/fuzz_main.lua replay SEED        rebuild one program by its own seed (as
--                                                 printed with a failure) and show both results
-- Needs the same environment as the specs (LUA_PATH, LUA_CPATH or LACC_LIB, LACC_CACHE).
-- FUZZ_TRACE=1 prints each program's seed before it runs (to find one that crashes).
local here = (arg and arg[0] or ""):match("^(.*)[/\\]") or "."
local fuzz = dofile(here .. "/fuzz.lua")

if arg[1] == "replay" then
  local fail = fuzz.replay(assert(tonumber(arg[2]), "replay: expected a seed"))
  os.exit(fail and 1 or 0)
end

local seconds = tonumber(arg[1] or "600")
local seed = tonumber(arg[2] or "1")
local trace = os.getenv("FUZZ_TRACE") == "1"
local t0 = os.time()
io.stdout:setvbuf("line")
-- OpenCL too when a device answers (FUZZ_OPENCL=0: not)
local opencl = os.getenv("FUZZ_OPENCL") ~= "0" and #require("lacc").devices() > 0
local res = fuzz.run {
  seed = seed, seconds = seconds, trace = trace, progress = true, opencl = opencl,
  log = function(msg) io.stdout:write(msg, "\n") end,
}
print(("%d programs in %d s (seed %d, backends interp, cpu%s), %d ended in the same error on every backend, %d failures")
  :format(res.programs, os.time() - t0, seed, opencl and ", opencl" or "", res.errored, #res.failures))
for i, f in ipairs(res.failures) do
  print(("\nfailure %d (program seed %d): %s\n%s"):format(i, f.seed, f.message, f.description))
end
os.exit(#res.failures > 0 and 1 or 0)
