-- Heat diffusion over a grid distributed by rows over MPI ranks (lacc.mpi): every rank
-- runs this file (mpirun -n 4 lua5.4 examples/mpi_heat.lua), holds a block of rows, and
-- each step's 5-point stencil exchanges one row with each neighbouring rank. Rank 1
-- writes the final temperatures as mpi_heat.png (or OUT) and prints the total heat, which
-- the insulated (clamped) edges keep constant.
-- Run: make demo NAME=mpi_heat (2 ranks; RANKS=4 for more)
local lacc = require "lacc"

local rank, ranks = lacc.mpi.init()
local n = tonumber(os.getenv("W") or "") or 256
local steps = tonumber(os.getenv("STEPS") or "") or 400
local out = os.getenv("OUT") or "mpi_heat.png"

-- two hot discs on a cold plate
local grid = lacc.mpi.generate({ n, n }, function(i, j)
  local function disc(ci, cj, r)
    local di, dj = lacc.cast(i, "f64") - ci, lacc.cast(j, "f64") - cj
    return lacc.le(di * di + dj * dj, r * r)
  end
  return lacc.cond(lacc.lor(disc(n / 3, n / 3, n / 8), disc(2 * n / 3, 3 * n / 5, n / 10)),
                   lacc.constant(1, "f64"), lacc.constant(0, "f64"))
end)

local function step(u)
  return lacc.stencil(function(_, up, _, left, c, right, _, down, _)
    return c + 0.2 * (up + down + left + right - 4 * c)
  end, "clamp", u)
end

local u = lacc.run(grid)
local heat0 = lacc.run(lacc.sum(u)):get()
local t0 = lacc.mpi.wtime()
for _ = 1, steps do u = lacc.run(step(u)) end
local secs = lacc.mpi.wtime() - t0
local heat = lacc.run(lacc.sum(u)):get()
local hottest = lacc.run(lacc.maximum(u)):get()

local whole = u:gather(1)   -- the whole grid on rank 1, nil elsewhere
if rank == 1 then
  whole:write_png(out)
  print(("%d x %d grid on %d rank%s, %d steps in %.2f s: heat %.6g (start %.6g), hottest %.4f; wrote %s")
    :format(n, n, ranks, ranks > 1 and "s" or "", steps, secs, heat, heat0, hottest, out))
end
