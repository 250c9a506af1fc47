-- The MPI path's cost (`make bench-mpi`, bench/mpi/run.sh): run by every rank under
-- `mpirun -n P`, or alone with `cpu` as its first argument (the cpu backend, no MPI).
-- Three programs, each over inputs already in memory (a distributed array, or for `cpu`
-- a host array), a new result each run:
--   dot        the sum of n f64 products (n per rank)
--   blur       a 3x3 box blur, clamped, of a (rows x 1024) f32 image (rows per rank)
--   histogram  n i64 keys into 256 bins by permute(+) (n per rank)
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

-- inputs: generated once, materialised (a distributed array per rank, or a host array)
local gen = mode == "cpu" and lacc.generate or lacc.mpi.generate
local function made(shape, f) return lacc.run(gen(shape, f)) end
local total = function(a)
  if lacc.mpi.is_distributed(a) then a = a:allgather() end
  local s = 0
  for _, v in a:values() do s = s + v end
  return s
end

local n = N_DOT * P
local xs = made({ n }, function(i) return lacc.cast(lacc.band(i, 1023), "f64") / 1024 end)
local ys = made({ n }, function(i) return lacc.cast(lacc.band(i * 7, 511), "f64") / 512 end)
timed("dot", lacc.sum(lacc.zipWith(function(a, b) return a * b end, xs, ys)), function(r) return r:get() end)

local img = made({ ROWS * P, COLS }, function(i, j) return lacc.cast(lacc.band(i * 31 + j * 17, 255), "f32") / 255 end)
local blur = lacc.stencil(function(...)
  local s = 0
  for _, v in ipairs { ... } do s = s + v end
  return s / 9
end, "clamp", img)
timed("blur", blur, function(r)
  local a = lacc.mpi.is_distributed(r) and lacc.run(lacc.sum(r)) or lacc.run(lacc.sum(r))
  return a:get()
end)

local keys = made({ N_HIST * P }, function(i) return lacc.band(i * 2654435761, BINS - 1) end)
local ones = lacc.map(function() return lacc.constant(1, "i32") end, keys)
local hist = lacc.permute(function(a, b) return a + b end, lacc.fill({ BINS }, lacc.constant(0, "i32")),
  function(i) return keys[i] + 1 end, ones)
timed("histogram", hist, total)

-- ten conjugate-gradient turns of the 2-D Poisson problem (examples/mpi_cg.lua's) on a
-- ROWS * P x COLS f64 grid, in one awhile: the 5-point stencil, two distributed dot
-- products and three vector updates a turn
local function laplacian(p)
  return lacc.stencil(function(_, up, _, left, c, right, _, down, _)
    return 4 * c - up - down - left - right
  end, lacc.constant(0, "f64"), p)
end
local function dot(a, b) return lacc.sum(lacc.zipWith(function(u, v) return u * v end, a, b)) end
local b = made({ ROWS * P, COLS }, function(i, j) return lacc.cast(lacc.band(i * 13 + j * 7, 15), "f64") / 16 end)
local zero = lacc.map(function() return lacc.constant(0, "f64") end, b)
local cg = lacc.awhile(function(_, _, _, _, k) return lacc.lt(k, 10) end,
  function(x, r, q, rr, k)
    local aq = laplacian(q)
    local alpha = lacc.zipWith(function(u, v) return u / v end, rr, dot(q, aq))
    local function axpy(sign, u, v)
      return lacc.zipWith(function(e, f) return e + sign * lacc.the(alpha) * f end, u, v)
    end
    local r2 = axpy(-1, r, aq)
    local rr2 = dot(r2, r2)
    local beta = lacc.zipWith(function(u, v) return u / v end, rr2, rr)
    local q2 = lacc.zipWith(function(e, f) return e + lacc.the(beta) * f end, r2, q)
    return axpy(1, x, q), r2, q2, rr2, lacc.map(function(v) return v + 1 end, k)
  end,
  { zero, b, b, dot(b, b), lacc.unit(lacc.constant(0, "i64")) })
timed("cg", cg, function(r) return lacc.run(lacc.sum(r)):get() end)
