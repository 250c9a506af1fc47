-- lacc.mpi.grads: gradients of functions of distributed arrays (lacc.mpi): a loss that is
-- the sum, over the distributed rows, of work that stays on each rank's rows (element-wise
-- maps and zips, folds along another dimension, a distributed matrix times a replicated
-- one) with replicated values beside them (a model's parameters): data-parallel
-- gradients, `lacc.grad` and `lacc.value_and_grad`.
-- Owns: checking that a function is such a sum (at the call, on what it built); each
-- rank's part of the loss, the same local program the run would make, differentiated by
-- lacc's one-process gradients; a replicated argument's gradient (and the loss) summed
-- over the ranks by a fold's tree, in rank order; a distributed one's left on its rows.
-- Must not: take a gradient through an exchange (a stencil's halo, a gather, a scan, a
-- sort: not yet distributed, an error naming the combinator), or differentiate what does
-- not depend on the arguments (that runs as the rest of the program does, a constant).
local C = require "lacc.mpi.base"
local array, fail, is_dist, plain, record = C.array, C.fail, C.is_dist, C.plain, C.record
local rows_before, same_counts, unpack = C.rows_before, C.same_counts, C.unpack
local util, types = C.util, C.types
local is_dn, me, nranks, value_of = C.is_dn, C.me, C.nranks, C.value_of
local H, DESC, L = C.H, C.DESC, C.L

local M = {}

-- the combinators whose work stays on each rank's rows
local ROWS = { map = true, zipWith = true, zip = true, where = true, matmul_rows = true }
for k = 3, 9 do ROWS["zipWith" .. k] = true end
local FOLDS = { sum = true, product = true, maximum = true, minimum = true }

local function elem_type(x)
  if array.is_array(x) then return x:type() end
  return type(x) == "table" and x.t or nil
end

-- a fresh stand-in of a replicated operand (what a function reads of it is then seen)
local function fresh(x) return C.empty(elem_type(x), C.rank_of(x)) end

-- whether program p (a plain program's node) is built from one of the replicated
-- arguments being differentiated (reps: programs)
local function built_from(p, reps)
  for _, w in ipairs(reps) do
    if util.core.node_depends(p, 0, w.node) ~= 0 then return true end
  end
  return false
end

-- whether x's combinator reads one of the replicated arguments `reps` (programs) other
-- than as an operand: inside its function, or through a program built from it; the
-- local program would read the argument itself there, not its tracer (a gradient lost)
local function reads_replicated(x, reps)
  if #reps == 0 then return false end
  local sargs = {}
  for i = 1, x.n do
    local a = x.args[i]
    if is_dist(a) or array.is_array(a) or C.is_program(a) then sargs[i] = fresh(a) else sargs[i] = a end
  end
  local ok, r = pcall(function()
    if x.op == "matmul_rows" then return plain.matmul(sargs[1], sargs[2]) end
    if FOLDS[x.op] then return plain[x.op](sargs[1], x.fold.dim) end
    return ({ plain[x.op](unpack(sargs, 1, x.n)) })[x.res or 1]
  end)
  if not ok or type(r) ~= "table" or r.node == nil then return true end
  return built_from(r.node, reps)
end

-- which nodes under root depend on the arguments (args: a set), each checked to stay on
-- its rows and to read the replicated arguments differentiated (reps) only as operands;
-- what: the caller, for the errors
local function depending(root, args, reps, what)
  local dep = {}
  local function refuse(why, at)
    fail("%s: %s (at %s): not yet distributed (lacc.mpi) in a gradient of distributed arrays; " ..
         "give the argument to the combinator as an operand", what, why, at)
  end
  local function visit(x)
    if dep[x] ~= nil then return dep[x] end
    if args[x] then dep[x] = true; return true end
    if not is_dn(x) then
      dep[x] = false
      if C.is_program(x) and built_from(x.node, reps) then
        refuse("a replicated program built from a differentiated argument", "the function's call")
      end
      return false
    end
    if reads_replicated(x, reps) then
      refuse(("%s reads a replicated argument inside its function"):format((x.op:gsub("_dist$", ""))), x.where)
    end
    dep[x] = false   -- (no cycles: a node's arguments were made before it)
    local any = false
    for i = 1, x.n do any = visit(x.args[i]) or any end
    for _, r in ipairs(x.reads or {}) do any = visit(r) or any end
    dep[x] = any
    if any then
      local inner_fold = FOLDS[x.op] and x.fold and x.fold.dim ~= nil and x.fold.dim > 1
      if not (ROWS[x.op] or inner_fold) then
        fail("%s: %s (at %s) inside the function: not yet distributed (lacc.mpi); gradients " ..
             "of distributed arrays take a sum over the rows of work that stays on each row " ..
             "(maps, zips, folds along another dimension, a product by a replicated matrix)",
             what, (x.op:gsub("_dist$", "")), x.where)
      end
      if x.reads and #x.reads > 0 then
        fail("%s: a function of %s (at %s) reads other arrays: not yet distributed (lacc.mpi) " ..
             "in a gradient", what, x.op, x.where)
      end
    end
    return any
  end
  visit(root)
  return dep
end

local one_row, stand_of = C.with_outer, C.empty

-- the local program of x on this rank's rows [lo, hi): the arguments' tracers (env.leaf),
-- what does not depend on them as the run makes it (its rows here), the rest as the
-- handlers build it, through lacc's table (L), which the one-process gradient watches
local function local_of(x, env)
  local hit = env.memo[x]
  if hit ~= nil then return hit.v, hit.rows end
  local v, rows
  if env.leaf[x] ~= nil then
    v, rows = env.leaf[x], env.rows_of[x]
  elseif not env.dep[x] then
    local val = value_of(x, env.runmemo, env.opts)
    if val == nil then v, rows = x, false
    else
      if val.counts and not same_counts(val.counts, env.counts) then
        fail("%s: distributed arrays of other row counts: not yet distributed (lacc.mpi) in a gradient", env.what)
      end
      v, rows = val.acc, val.counts ~= nil
    end
  else
    local args, on_rows, any = {}, {}, false
    for i = 1, x.n do
      args[i], on_rows[i] = local_of(x.args[i], env)
      any = any or on_rows[i]
    end
    if x.op == "matmul_rows" then
      v = L.matmul(args[1], args[2])
    elseif FOLDS[x.op] then
      v = L[x.op](args[1], x.fold.dim)
    else
      -- element-wise beside rows: a replicated operand of rank 1 or more cut to them
      for i = 1, x.n do
        if any and not on_rows[i] and (array.is_array(args[i]) or C.is_program(args[i])) and C.rank_of(args[i]) >= 1 then
          args[i] = C.rows_of(args[i], env.lo, env.hi, L)
        end
      end
      v = ({ L[x.op](unpack(args, 1, x.n)) })[x.res or 1]
    end
    rows = any
  end
  env.memo[x] = { v = v, rows = rows }
  return v, rows
end

H.grad_local = function(nd, vals, opts)
  local memo, key = opts.memo, nd.group
  local g = memo[key]
  if g == nil then
    local spec = nd.grad
    local counts
    for i = 1, nd.n do
      local v = vals[i]
      if v and v.counts then
        if counts and not same_counts(counts, v.counts) then
          fail("%s: distributed arguments of other row counts: not yet distributed (lacc.mpi)", spec.what)
        end
        counts = counts or v.counts
      end
    end
    local leaves, rows = {}, {}
    for i = 1, nd.n do
      leaves[i] = vals[i] and vals[i].acc or nd.args[i]
      rows[i] = vals[i] ~= nil and vals[i].counts ~= nil
    end
    local lo, hi = rows_before(counts, me()), rows_before(counts, me() + 1)
    local function loss(...)
      local tracers = { ... }
      local env = { leaf = {}, rows_of = {}, memo = {}, dep = spec.dep, counts = counts, lo = lo, hi = hi,
                    runmemo = memo, opts = opts, what = spec.what }
      for i = 1, nd.n do
        env.leaf[nd.args[i]] = tracers[i]
        env.rows_of[nd.args[i]] = rows[i]
      end
      return L.sum((local_of(spec.root, env)))
    end
    local res = { plain.value_and_grad(loss, spec.ks)(unpack(leaves, 1, nd.n)) }
    local ones = {}
    for q = 1, nranks() do ones[q] = 1 end
    g = { { acc = one_row(res[1]), counts = ones } }
    for j, k in ipairs(spec.ks) do
      if rows[k] then g[1 + j] = { acc = res[1 + j], counts = counts }
      else g[1 + j] = { acc = one_row(res[1 + j]), counts = ones } end
    end
    memo[key] = g
  end
  return g[nd.res]
end
DESC.grad_local = "each rank's part of the loss (its rows) differentiated on its own (no " ..
  "communication); its value and a replicated argument's gradient then summed over the ranks"

-- the gradients of S (a sum over everything, its input checked: dep) with respect to the
-- arguments at ks: S's value summed over the ranks, then each gradient (a distributed
-- argument's on its rows, a replicated one's summed over the ranks)
local function sum_grads(what, S, dep, ks, args, n)
  local spec = { what = what, ks = ks, root = S.args[1], dep = dep }
  local typed = function()
    local r = { stand_of(S.t, 1) }
    for j, k in ipairs(ks) do
      local a = args[k]
      r[1 + j] = stand_of(elem_type(a), C.rank_of(a) + (is_dist(a) and 0 or 1))
    end
    return unpack(r, 1, #ks + 1)
  end
  local nodes = { record("grad_local", #ks + 1, typed, args, n) }
  for _, x in ipairs(nodes) do x.grad = spec end
  local out = { L.sum(nodes[1]) }
  for j, k in ipairs(ks) do
    out[1 + j] = is_dist(args[k]) and nodes[1 + j] or L.sum(nodes[1 + j], 1)
  end
  return out
end

local function is_total(x) return is_dn(x) and x.op == "sum" and x.fold ~= nil and x.fold.dim == nil end
local SCALAR = { map = true, zipWith = true, where = true }
for k = 3, 9 do SCALAR["zipWith" .. k] = true end

-- y as a function of sums over distributed rows (the loss's sums: each checked as
-- depending's), by element-wise work on rank-0 arrays (a mean's division, a sum of two
-- losses): the sums, and which nodes above them depend on the arguments
local function outer_of(y, pos, reps, what)
  local sums, dep = {}, {}
  local function visit(x)
    if dep[x] ~= nil then return dep[x] end
    if pos[x] then
      fail("%s: the function's result reads an argument other than through a sum over rows: " ..
           "not yet distributed (lacc.mpi)", what)
    end
    if not is_dn(x) then
      dep[x] = false
      if C.is_program(x) and built_from(x.node, reps) then
        fail("%s: a replicated program built from a differentiated argument beside the sums: " ..
             "not yet distributed (lacc.mpi)", what)
      end
      return false
    end
    if is_total(x) then
      local d = depending(x.args[1], pos, reps, what)
      dep[x] = d[x.args[1]] == true
      if dep[x] then sums[#sums + 1] = { node = x, dep = d } end
      return dep[x]
    end
    dep[x] = false
    local any = false
    for i = 1, x.n do any = visit(x.args[i]) or any end
    for _, r in ipairs(x.reads or {}) do any = visit(r) or any end
    dep[x] = any
    if any and not (x.rank == 0 and SCALAR[x.op] and #(x.reads or {}) == 0 and not reads_replicated(x, reps)) then
      fail("%s: %s (at %s) between the sums and the result: not yet distributed (lacc.mpi); the " ..
           "result may be element-wise work on sums over the rows (a mean, a sum of two)", what,
           (x.op:gsub("_dist$", "")), x.where)
    end
    return any
  end
  visit(y)
  return sums, dep
end

-- the derivatives of y with respect to its sums (nd.args), at their values: every rank
-- alike, by lacc's one-process gradients of y rebuilt on them
H.grad_outer = function(nd, vals, opts)
  local memo, key = opts.memo, nd.group or nd
  local g = memo[key]
  if g == nil then
    local spec = nd.outer
    local leaves, ks = {}, {}
    for i = 1, nd.n do leaves[i], ks[i] = vals[i].acc, i end
    local function h(...)
      local tracers = { ... }
      local env = { leaf = {}, rows_of = {}, memo = {}, dep = spec.dep, runmemo = memo, opts = opts,
                    what = spec.what }
      for i = 1, nd.n do env.leaf[nd.args[i]] = tracers[i]; env.rows_of[nd.args[i]] = false end
      return (local_of(spec.root, env))
    end
    local res = { plain.value_and_grad(h, ks)(unpack(leaves, 1, nd.n)) }
    g = {}
    for i = 1, nd.n do g[i] = { acc = res[1 + i] } end
    memo[key] = g
  end
  return g[nd.res or 1]
end
DESC.grad_outer = "the result's derivatives with respect to its sums over the rows, at their " ..
  "values (every rank alike, no communication)"

-- grad / value_and_grad of f called with distributed arrays among args: the value, then
-- the gradients
function M.gradient(what, f, ks, args, n)
  args = { unpack(args, 1, n) }
  local pos, reps = {}, {}
  for _, k in ipairs(ks) do
    -- a replicated argument differentiated: a program of its own, whose uses are seen
    if k <= n and array.is_array(args[k]) then args[k] = L.use(args[k]) end
    if k <= n and C.is_program(args[k]) then reps[#reps + 1] = args[k] end
  end
  for i = 1, n do
    if is_dist(args[i]) or array.is_array(args[i]) or C.is_program(args[i]) then pos[args[i]] = true end
  end
  for _, k in ipairs(ks) do
    if k > n then fail("%s: argument %d was not given (%d arguments)", what, k, n) end
    local t = elem_type(args[k])
    if not (t and types.parse(t).kind == "scalar" and types.is_float(t)) then
      fail("%s: argument %d is %s: gradients are taken with respect to arrays of floats (f32, f64)",
           what, k, t and ("an array of " .. t) or util.describe(args[k]))
    end
  end
  local y = f(unpack(args, 1, n))
  if not (is_dn(y) and y.rank == 0 and types.is_float(y.t)) then
    fail("%s: the function must return one rank-0 array of floats (a scalar: lacc.sum(...)), got %s",
         what, util.describe(y))
  end
  if is_total(y) then return sum_grads(what, y, depending(y.args[1], pos, reps, what), ks, args, n) end
  -- y = h(S1, ..., Sm): its gradient the sums' weighted by h's derivatives
  local sums, dep = outer_of(y, pos, reps, what)
  if #sums == 0 then
    fail("%s: the function's result does not depend on its arguments through a sum over rows: " ..
         "not yet distributed (lacc.mpi)", what)
  end
  local S = {}
  for i, s in ipairs(sums) do S[i] = s.node end
  local typed = function()
    local r = {}
    for i = 1, #S do r[i] = stand_of(S[i].t, 0) end
    return unpack(r, 1, #S)
  end
  local hb = { record("grad_outer", #S, typed, S, #S) }
  for _, x in ipairs(hb) do x.outer = { root = y, dep = dep, what = what } end
  local out = { y }
  for i, s in ipairs(sums) do
    local parts = sum_grads(what, s.node, s.dep, ks, args, n)
    for j, k in ipairs(ks) do
      local t, w = elem_type(args[k]), hb[i]
      local term = L.map(function(v) return v * L.cast(L.the(w), t) end, parts[1 + j])
      out[1 + j] = out[1 + j] and L.zipWith(function(a, b) return a + b end, out[1 + j], term) or term
    end
  end
  return out
end

return M
