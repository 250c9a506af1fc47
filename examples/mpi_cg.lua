-- Conjugate gradients over MPI ranks (lacc.mpi): the 2-D Poisson problem -Δu = f on an
-- n x n grid with u = 0 around it, the grid distributed by rows. The matrix is never
-- built: its product with a vector is the 5-point stencil (one halo row exchanged with
-- each neighbouring rank), the dot products are distributed sums (a partial per rank,
-- combined in rank order), and the loop is one lacc.awhile whose condition every rank
-- agrees on once a turn. Rank 1 solves the same system in one process too and prints
-- both: the iterations agree, and the residuals |b - A x| / |b| within 1e-12 (the sums
-- reassociate with the ranks, so the last bits differ).
-- Run: make demo NAME=mpi_cg (2 ranks; RANKS=4 for more; W=... for the grid's side)
local lacc = require "lacc"

local rank, ranks = lacc.mpi.init()
local n = tonumber(os.getenv("W") or "") or 64
local tol = tonumber(os.getenv("TOL") or "") or 1e-8
local most = tonumber(os.getenv("ITERS") or "") or 2000

-- the right-hand side: a unit source in a square and a negative one in a disc
local function source(i, j)
  local x, y = lacc.cast(i, "f64") / (n + 1), lacc.cast(j, "f64") / (n + 1)
  local square = lacc.land(lacc.land(lacc.ge(x, 0.2), lacc.le(x, 0.4)), lacc.land(lacc.ge(y, 0.3), lacc.le(y, 0.6)))
  local dx, dy = x - 0.7, y - 0.7
  local disc = lacc.le(dx * dx + dy * dy, 0.01)
  return lacc.cond(square, lacc.constant(1, "f64"), lacc.cond(disc, lacc.constant(-2, "f64"), lacc.constant(0, "f64")))
end

-- A p: the 5-point Laplacian, zero outside the grid
local function laplacian(p)
  return lacc.stencil(function(_, up, _, left, c, right, _, down, _)
    return 4 * c - up - down - left - right
  end, lacc.constant(0, "f64"), p)
end
local function dot(a, b) return lacc.sum(a * b) end

-- CG from x = 0: the loop's arrays x, r, p, r.r and the turn count (rank 0)
local function solve(b)
  local bb = dot(b, b)
  local zero = lacc.map(function() return lacc.constant(0, "f64") end, b)
  local x, _, _, rr, k = lacc.awhile(
    function(_, _, _, rr, k) return lacc.land(lacc.lt(k, most), lacc.gt(rr, bb * (tol * tol))) end,
    function(x, r, p, rr, k)
      local ap = laplacian(p)
      local alpha = rr / dot(p, ap)
      local r2 = r - alpha * ap
      local rr2 = dot(r2, r2)
      return x + alpha * p, r2, r2 + (rr2 / rr) * p, rr2, k + 1
    end,
    { zero, b, b, bb, lacc.unit(lacc.constant(0, "i64")) })
  -- the true residual, b - A x, apart from the recurrence's
  local res = b - laplacian(x)
  return x, lacc.sqrt(dot(res, res) / bb), lacc.sqrt(rr / bb), k
end

local t0 = lacc.mpi.wtime()
local _, res, est, iters = lacc.run({ solve(lacc.mpi.generate({ n, n }, source)) })
local secs = lacc.mpi.wtime() - t0
if rank == 1 then
  local _, res1, _, iters1 = lacc.run({ solve(lacc.generate({ n, n }, source)) })
  local diff = math.abs(res:get() - res1:get())
  print(("%d x %d Poisson, CG on %d rank%s: %d iterations in %.2f s, residual %.3e (recurrence %.3e); " ..
         "one process: %d iterations, residual %.3e (difference %.1e)")
    :format(n, n, ranks, ranks > 1 and "s" or "", iters:get(), secs, res:get(), est:get(),
            iters1:get(), res1:get(), diff))
  if iters:get() ~= iters1:get() or diff > 1e-12 then
    io.stderr:write("mpi_cg: the distributed solve differs from one process's\n")
    os.exit(1)
  end
end
