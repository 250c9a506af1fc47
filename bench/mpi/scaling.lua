-- The MPI path's cost (`make bench-mpi`, bench/mpi/run.sh): run by every rank under
-- `mpirun -n P`, or alone with `cpu` as its first argument (the cpu backend, no MPI).
-- With `pair A dir` or `pair B dir` (bench/mpi/run.sh's two lone processes) the cpu
-- backend again, the two stepping together as two ranks do: a barrier of two FIFOs in
-- `dir` before each run and after it, inside the time, as the MPI runs' barriers are.
-- Four programs (spec/mpi/model.lua's), each over inputs already in memory (a
-- distributed array, or for `cpu` a host array), a new result each run:
--   dot        the sum of n f64 products (n per rank)
--   blur       a 3x3 box blur, clamped, of a (rows x 1024) f32 image (rows per rank)
--   histogram  n i64 keys into 256 bins by permute(+) (n per rank)
--   cg         ten conjugate-gradient turns of a (rows x 1024) f64 grid in one awhile
-- Weak scaling: the size grows with the rank count. Prints, on rank 1, one line per
-- program: "<program> <median ms> <checksum>", medians of REPS runs after WARM others
-- (barriers before and after each run, the second inside the time: each run takes the
-- slower rank's time, or the pair's slower one's).
local lacc = require "lacc"
local mode = arg[1] or "mpi"
local scale = tonumber(os.getenv("BENCH_SCALE") or "1") or 1
local REPS = tonumber(os.getenv("BENCH_REPS") or "11") or 11
-- runs before the timed ones, the same number in every process (the ranks' and the
-- pair's barriers count them): the first runs over an input of tens of MB take up to
-- twice the later ones' time on this kind of machine while the shared cache takes the
-- input in, a few passes at a time (the histogram's permute: 5-7 ms for 5-20 runs, then
-- 3.0-3.2), and a median of the first eleven measured that, not the program
local WARM = tonumber(os.getenv("BENCH_WARM") or "10") or 10
local P, rank = 1, 1
local lone = mode == "cpu" or mode == "pair"
if not lone then rank, P = lacc.mpi.init() end

-- the pair's barrier: each writes a byte to the other's FIFO and reads one from its own
-- (A opens its writing end first and B its reading end first, so neither open blocks
-- the other for ever)
local barrier = lone and function() end or lacc.mpi.barrier
if mode == "pair" then
  local me, dir = arg[2], arg[3]
  local inbox, outbox
  if me == "A" then
    outbox = assert(io.open(dir .. "/to_b", "w"))
    inbox = assert(io.open(dir .. "/to_a", "r"))
  else
    inbox = assert(io.open(dir .. "/to_b", "r"))
    outbox = assert(io.open(dir .. "/to_a", "w"))
  end
  outbox:setvbuf("no")
  barrier = function()
    outbox:write("x")
    assert(inbox:read(1) == "x", "bench/mpi: the other process of the pair ended")
  end
end

local N_DOT = math.floor(10000000 * scale)
local ROWS, COLS = math.floor(2048 * scale), 1024
local N_HIST, BINS = math.floor(4000000 * scale), 256

-- the benchmarks' wall clock (bench/benchlib.lua) for every mode alike
local clock = assert(require("benchlib").now, "bench/mpi: no wall clock (make bench builds benchclock)")

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

local function timed(name, program, checksum)
  local times = {}
  local result
  for k = 1 - WARM, REPS do
    -- the last result freed first, in both modes: its memory is recycled for the next
    -- (a new array each run would pay its pages' first touch, costly on some machines)
    if result and result.free then result:free() end
    barrier()
    local t0 = clock()
    result = lacc.run(program)
    barrier()
    if k > 0 then times[#times + 1] = (clock() - t0) * 1000 end
  end
  local c = checksum(result)
  if rank == 1 then print(("%s %.3f %.17g"):format(name, median(times), c)) end
end

-- the programs (spec/mpi/model.lua's, whose formulas give what they send), over inputs
-- generated once and materialised (a distributed array per rank, or a host array)
local model = require "mpi.model"
local sizes = { dot = N_DOT, rows = ROWS, w = COLS, keys = N_HIST, bins = BINS, turns = 10 }
local gen = lone and lacc.generate or lacc.mpi.generate
local function whole(r)
  if lacc.mpi.is_distributed(r) then r = r:allgather() end
  return r
end
local function total(r) return lacc.run(lacc.sum(lacc.flatten(whole(r)))):get() end
for _, name in ipairs(model.order) do
  timed(name, model.programs[name].build(lacc, P, sizes, gen), total)
end
