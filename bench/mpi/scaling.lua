-- The MPI path's cost (`make bench-mpi`, bench/mpi/run.sh): run by every rank under
-- `mpirun -n P`, or alone with `cpu` as its first argument (the cpu backend, no MPI).
-- Four programs (spec/mpi/model.lua's), each over inputs already in memory (a
-- distributed array, or for `cpu` a host array), a new result each run:
--   dot        the sum of n f64 products (n per rank)
--   blur       a 3x3 box blur, clamped, of a (rows x 1024) f32 image (rows per rank)
--   histogram  n i64 keys into 256 bins by permute(+) (n per rank)
--   cg         ten conjugate-gradient turns of a (rows x 1024) f64 grid in one awhile
-- Weak scaling: the size grows with the rank count. Prints, on rank 1, one line per
-- program: "<program> <median ms> <checksum>", medians of REPS runs after one warm-up
-- (barriers around each run, MPI_Wtime).
local lacc = require "lacc"
local mode = arg[1] or "mpi"
local scale = tonumber(os.getenv("BENCH_SCALE") or "1") or 1
local REPS = tonumber(os.getenv("BENCH_REPS") or "5") or 5
local P, rank = 1, 1
if mode ~= "cpu" then rank, P = lacc.mpi.init() end

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
  for k = 0, REPS do
    -- the last result freed first, in both modes: its memory is recycled for the next
    -- (a new array each run would pay its pages' first touch, costly on some machines)
    if result and result.free then result:free() end
    if mode ~= "cpu" then lacc.mpi.barrier() end
    local t0 = clock()
    result = lacc.run(program)
    if mode ~= "cpu" then lacc.mpi.barrier() end
    if k > 0 then times[#times + 1] = (clock() - t0) * 1000 end
  end
  local c = checksum(result)
  if rank == 1 then print(("%s %.3f %.17g"):format(name, median(times), c)) end
end

-- the programs (spec/mpi/model.lua's, whose formulas give what they send), over inputs
-- generated once and materialised (a distributed array per rank, or a host array)
local model = require "mpi.model"
local sizes = { dot = N_DOT, rows = ROWS, w = COLS, keys = N_HIST, bins = BINS, turns = 10 }
local gen = mode == "cpu" and lacc.generate or lacc.mpi.generate
local function whole(r)
  if lacc.mpi.is_distributed(r) then r = r:allgather() end
  return r
end
local function total(r) return lacc.run(lacc.sum(lacc.flatten(whole(r)))):get() end
for _, name in ipairs(model.order) do
  timed(name, model.programs[name].build(lacc, P, sizes, gen), total)
end
