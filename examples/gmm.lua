-- The Gaussian mixture model objective of ADBench (Microsoft's AD benchmark suite): the
-- log-likelihood of n points of dimension d under k Gaussians, each given by its weight
-- (alphas), mean (means) and the Cholesky factor of its inverse covariance (icf: d
-- log-diagonal entries, then the strict lower triangle, column by column), plus a Wishart
-- prior (gamma 1, m 0; the prior's log-gamma constant left out). Its gradient with respect
-- to every parameter by lacc.grad, checked against central finite differences.
-- Run: make demo NAME=gmm [N=points] [D=dimension] [K=components]
local lacc = require "lacc"

local n = tonumber(os.getenv("N") or "") or 200
local d = tonumber(os.getenv("D") or "") or 4
local k = tonumber(os.getenv("K") or "") or 5
local tri = math.floor(d * (d - 1) / 2)

local function uniform(shape, seed) return lacc.run(lacc.random.uniform(shape, seed, "f64", -1, 1)) end
local points = uniform({ n, d }, 1)
local params = { uniform({ k }, 2), uniform({ k, d }, 3), uniform({ k, d + tri }, 4) }

-- The position (1-based, after the d diagonal entries) of L[r][c], c < r, in a row of icf.
local function lower(c, r)
  return d + lacc.idiv((c - 1) * (2 * d - c), 2) + (r - c)
end

local function logsumexp(a, dim)   -- along dim of a rank-2 array, or of all of a rank-1 one
  local m = lacc.maximum(a, dim)
  if dim == nil then return m + lacc.log(lacc.sum(lacc.exp(a - m))) end
  local shifted = lacc.generate(lacc.shape(a), function(i, j) return a:at(i, j) - m:at(i) end)
  return m + lacc.log(lacc.sum(lacc.exp(shifted), dim))
end

local function objective(alphas, means, icf, x)
  -- each component's Q (lower triangular: exp of the log-diagonal, then the rest below
  -- it), transposed, built once; then Q_k (x_i - mu_k) for every point and component as
  -- k matrix products of n x d by d x d (a batched lacc.matmul, as PyTorch's einsum)
  local qt = lacc.compute(lacc.generate({ k, d, d }, function(j, c, r)
    local below = icf:at(j, lacc.cond(lacc.lt(c, r), lower(c, r), 1))
    return lacc.cond(lacc.eq(c, r), lacc.exp(icf:at(j, r)),
                     lacc.cond(lacc.lt(c, r), below, lacc.constant(0, "f64")))
  end))
  local centred = lacc.generate({ k, n, d }, function(j, i, c) return x:at(i, c) - means:at(j, c) end)
  local qx = lacc.matmul(centred, qt)                          -- {k, n, d}
  local sq = lacc.sum(qx * qx, 3)                               -- {k, n}
  local sum_qs = lacc.sum(lacc.generate({ k, d }, function(j, r) return icf:at(j, r) end), 2)
  local main = lacc.generate({ n, k }, function(i, j)
    return alphas:at(j) + sum_qs:at(j) - 0.5 * sq:at(j, i)
  end)
  local constant = -n * d * 0.5 * math.log(2 * math.pi)
  local prior = 0.5 * lacc.sum(lacc.generate({ k, d + tri }, function(j, p)
    local v = icf:at(j, p)
    return lacc.cond(lacc.le(p, d), lacc.exp(v) * lacc.exp(v), v * v)
  end))
  return constant + lacc.sum(logsumexp(main, 2)) - n * logsumexp(alphas) + prior
end

local f = lacc.compile(objective)
local grads = lacc.compile(lacc.grad(objective, { 1, 2, 3 }))
local value = f(params[1], params[2], params[3], points):get()
local g = { grads(params[1], params[2], params[3], points) }
print(("GMM objective, n = %d, d = %d, k = %d: %.10g"):format(n, d, k, value))

-- Central finite differences along every coordinate of every parameter.
local worst = 0
local h = 1e-6
for p = 1, 3 do
  local a = params[p]
  local flat = {}
  for i = 1, a:size() do flat[i] = a:at_linear(i - 1) end
  for i = 1, #flat do
    local function at(v)
      local moved = lacc.run(lacc.reshape(lacc.shape(a), lacc.fromtable((function()
        local t = {}
        for q = 1, #flat do t[q] = flat[q] end
        t[i] = v
        return t
      end)(), "f64")))
      local args = { params[1], params[2], params[3] }
      args[p] = moved
      return f(args[1], args[2], args[3], points):get()
    end
    local fd = (at(flat[i] + h) - at(flat[i] - h)) / (2 * h)
    local an = g[p]:at_linear(i - 1)
    local err = math.abs(fd - an) / math.max(1, math.abs(fd))
    if err > worst then worst = err end
  end
end
print(("gradient (%d values) against central differences: largest error %.2e %s")
  :format(k + k * d + k * (d + tri), worst, worst < 1e-5 and "(agrees)" or "(DISAGREES)"))
