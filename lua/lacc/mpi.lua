-- lacc.mpi: arrays distributed over MPI ranks, SPMD (every rank runs the same script,
-- `mpirun -n 4 lua5.4 prog.lua`).
-- Owns: distributed arrays (blocks of consecutive rows of the outermost dimension, one
-- per rank, any row counts), distributed programs (the combinators of lacc applied to
-- them, recorded, then run by `lacc.run` with backend "mpi"), and what each combinator
-- costs in communication: element-wise work stays on each rank, where a combinator needs
-- other ranks' rows the run materialises the rank's part (lacc's cpu backend, fused as
-- usual), exchanges bytes (lacc.mpi_core / lacc.mpi_ffi), and goes on locally. A failure
-- on any rank before an exchange or at the end of a run becomes the same error on every
-- rank (they agree first, on what each is about to do too: ranks out of step all raise).
-- Must not: run a combinator on gathered data behind the user's back (what is not
-- distributed is an error naming it), or reorder a fold's operands (partials are
-- combined in rank order: associativity only, as everywhere in lacc).
local util = require "lacc.util"
local exp = require "lacc.exp"
local array = require "lacc.array"
local collection = require "lacc.collection"
local sorting = require "lacc.sort"
local types = require "lacc.types"
local fail = util.fail
local unpack = table.unpack or unpack
local floor = math.floor
-- table.pack where LuaJIT lacks it
local function pack(...) return { n = select("#", ...), ... } end

local M = {}
local L            -- lacc itself (install)
local plain = {}   -- lacc's functions before this module wrapped them
local B            -- the binding, once init has run

-- ---- MPI itself

local function binding(what)
  if B then return B end
  local name = type(jit) == "table" and "lacc.mpi_ffi" or "lacc.mpi_core"
  local ok, b = pcall(require, name)
  if not ok then
    local why = tostring(b):match("module '[^']*' not found") or tostring(b):match("^[^\n]*")
    fail("mpi.%s: this lacc was built without MPI (%s; build it where mpicc and the MPI " ..
         "headers are installed: tools/deps.sh installs Open MPI)", what, why)
  end
  B = b
  return b
end

local function started(what)
  local b = binding(what)
  if not b.initialized() then fail("mpi.%s: MPI is not running: call lacc.mpi.init() first", what) end
  return b
end

function M.available() return (pcall(binding, "available")) end
function M.init()
  local ok, err = pcall(binding("init").init)
  if not ok then fail("mpi.init: %s", tostring(err)) end
  return B.rank() + 1, B.size()
end
function M.rank() return started("rank").rank() + 1 end
function M.size() return started("size").size() end
local agree_on
function M.barrier()
  started("barrier")
  agree_on("lacc.mpi.barrier")
end
function M.wtime() return started("wtime").wtime() end
function M.stats() return started("stats").stats() end
function M.reset_stats() started("reset_stats").reset_stats() end
function M.abort(status) started("abort").abort(status or 1) end
-- agree(err): collective; nothing when every rank passes nil, else the first rank (1-based)
-- that passed a message, and its message, on every rank
function M.agree(err)
  if err ~= nil and type(err) ~= "string" then fail("mpi.agree: expected nil or a message, got %s", util.describe(err)) end
  started("agree")
  return agree_on("lacc.mpi.agree", err ~= nil, err)
end

local function me() return B.rank() end        -- 0-based
local function nranks() return B.size() end

-- The ranks' agreement (collective) on what each is about to do (`what`: a description
-- that ranks in step give alike, say "sum of f64 {100}") and on whether one failed
-- (`failed`, its message `msg`): nothing, or the first failing rank (1-based) and its
-- message on every rank. Ranks whose descriptions differ, or that do not all arrive
-- within LACC_MPI_TIMEOUT seconds, all raise ("mpi: ranks disagree on the next step:
-- rank 1 runs ...; rank 2 runs ..."). Every exchange follows one, and nothing between
-- the two can fail on one rank alone, so that the ranks meet each collective in step.
function agree_on(what, failed, msg)
  local ok, first, text = pcall(B.agree, failed == true, msg, what)
  if not ok then error("mpi: " .. tostring(first), 0) end
  return first, text
end

-- f(...) on this rank, about to do `what` (agree_on); a failure on any rank becomes the
-- same error on every rank.
local function together(what, f, ...)
  local res = pack(pcall(f, ...))
  local msg = not res[1] and tostring(res[2]) or nil
  local first, text = agree_on(what, not res[1], msg)
  if first then
    if nranks() > 1 then text = ("%s [rank %d of %d]"):format(text, first, nranks()) end
    error(text, 0)
  end
  return unpack(res, 2, res.n)
end

local function key_bytes(kt) return kt == "u64" and 8 or 4 end

-- ---- distributions: rows per rank

local function balanced(n, p)
  local c = {}
  for r = 0, p - 1 do c[r + 1] = floor((r + 1) * n / p) - floor(r * n / p) end
  return c
end
local function rows_before(counts, r)   -- r 0-based
  local s = 0
  for q = 1, r do s = s + counts[q] end
  return s
end
local function total(counts) return rows_before(counts, #counts) end
local function same_counts(a, b)
  for q = 1, #a do if a[q] ~= b[q] then return false end end
  return true
end
local function product(t, from)
  local p = 1
  for d = from or 1, #t do p = p * t[d] end
  return p
end

-- ---- distributed host arrays (a run's result, scatter, load)

local DA = {}       -- metatable
local DN = {}       -- metatable of distributed programs
local function is_da(x) return getmetatable(x) == DA end
local function is_dn(x) return getmetatable(x) == DN end
local function is_dist(x) return is_da(x) or is_dn(x) end
M.is_distributed = is_dist

local damethods, dnmethods = {}, {}

local function new_da(block, counts, t, rank)
  -- (rows: the row counts; a field named counts would hide the method)
  return setmetatable({ block = block, rows = counts, t = t, rank = rank }, DA)
end

-- The global shape: the row counts' total, then the block's other extents.
function damethods.shape(self)
  local sh = self.block:shape()
  sh[1] = total(self.rows)
  return sh
end
function damethods.type(self) return self.t end
function damethods.counts(self) return { unpack(self.rows) } end
function damethods.offset(self) return rows_before(self.rows, me()) end
function damethods.free(self) self.block:free() end

local function packed(a, what)
  local ok, s = pcall(a.tobytes, a)
  if not ok then fail("%s: %s", what, (tostring(s):gsub(" %(at [^)]*%)$", ""))) end
  return s
end

-- the whole array on every rank (collective)
-- (the block packed before the ranks agree: one that cannot pack it fails there, not alone)
local operand_text
function damethods.allgather(self)
  started("allgather")
  local s = together("allgather of " .. operand_text(self), packed, self.block, "allgather")
  local parts = B.allgather(s)
  return plain.frombytes(table.concat(parts), self.t, self:shape())
end

-- the whole array on rank `root` (1-based, default 1), nil on the others (collective)
function damethods.gather(self, root)
  started("gather")
  root = root or 1
  if not util.is_integer(root) or root < 1 or root > nranks() then
    fail("gather: expected a rank from 1 to %d, got %s", nranks(), util.show(root))
  end
  local s = together(("gather to rank %d of %s"):format(root, operand_text(self)), packed, self.block, "gather")
  local parts = {}
  for q = 1, nranks() do parts[q] = q == root and s or "" end
  local got = B.alltoall(parts)
  if me() + 1 ~= root then return nil end
  return plain.frombytes(table.concat(got), self.t, self:shape())
end

-- xs[i] / xs:at(i, ...) of a distributed array inside a function: while lacc.mpi traces
-- a combinator's function (`tracing`: "record" while typing it on stand-ins, else the
-- run's memo and options), a read of this rank's own rows; elsewhere an error.
local tracing
local value_of, stand
local function read(self, ...)
  if tracing == nil then
    fail("index: a distributed array (lacc.mpi) read outside a distributed program's " ..
         "function: run the program, or a:allgather() first")
  end
  if tracing == "record" then return L.index(stand(self), ...) end
  local v = value_of(self, tracing.memo, tracing.opts)
  if not v.counts then return L.index(v.acc, ...) end
  local ix = { ... }
  ix[1] = ix[1] - rows_before(v.counts, me())
  return L.index(v.acc, unpack(ix, 1, select("#", ...)))
end
dnmethods.at = read
local function index_meta(methods)
  return function(self, k)
    local m = methods[k] or dnmethods[k]
    if m then return m end
    if type(k) == "number" or exp.is_exp(k) then return read(self, k) end
  end
end
DA.__index = index_meta(damethods)
DA.__tostring = function(self)
  return ("lacc.mpi.array<%s, rank %d, rows %d of %d on rank %d>"):format(self.t, self.rank,
    self.rows[me() + 1], total(self.rows), me() + 1)
end

-- ---- distributed programs: recorded combinator applications

-- A stand-in of x for typing: a program of x's type and rank with no elements.
function stand(x)
  if is_dn(x) then return x.stand end
  if is_da(x) then
    if not x.standin then
      local z = {}
      for d = 1, x.rank do z[d] = 0 end
      x.standin = L.use(plain.array(x.t, z))
    end
    return x.standin
  end
  return x
end

local next_id = 0
-- A node: op, its arguments (arrays among them as given), the plain combinator's result
-- on stand-ins (its type and rank); nres > 1 for combinators of several results.
local function node(op, args, n, res_index, stand_res)
  next_id = next_id + 1
  local s = stand_res
  return setmetatable({ op = op, args = args, n = n, id = next_id, where = util.where(),
                        stand = s, t = s.t, rank = s.rank, res = res_index }, DN)
end

DN.__index = index_meta({})
DN.__tostring = function(self) return ("lacc.mpi.program<%s, rank %d>"):format(self.t, self.rank) end
DN.__concat = function() fail("append: not yet distributed (lacc.mpi): gather the arrays first") end
DN.__len = function() fail("# of a distributed program: run it first") end

-- The same methods as array programs (acc.lua), calling through lacc.
for _, name in ipairs { "map", "imap", "fold", "fold1", "sum", "product", "maximum", "minimum",
                        "scanl", "scanl1", "scanr", "scanr1", "backpermute", "and_", "or_" } do
  dnmethods[name] = function(self, ...)
    local n = select("#", ...)
    local args = { ... }
    args[n + 1] = self
    return L[name](unpack(args, 1, n + 1))
  end
end
dnmethods.zipWith = function(self, f, ...) return L.zipWith(f, self, ...) end
dnmethods.zip = function(self, ...) return L.zip(self, ...) end
dnmethods.filter = function(self, p, opts) return L.filter(p, self, opts) end
dnmethods.run = function(self, opts) return L.run(self, opts) end
dnmethods.explain = function(self) return L.explain(self) end

-- ---- what a rank is about to do, for the agreement before an exchange (agree_on)

-- An operand (x as given, v its run-time value) as every rank in step knows it before
-- running anything: its element type and global shape (a distributed operand's outer
-- extent from its row counts, the other extents where a host array holds them; "..." for
-- those a program has yet to make), never this rank's own rows. Never an error (a freed
-- array says so): failures are the agreement's to tell.
function operand_text(x, v)
  local ok, text = pcall(function()
    if is_da(x) or array.is_array(x) then
      return ("%s {%s}"):format(x:type(), table.concat(x:shape(), ","))
    end
    local rank = x.rank or 0
    if not (v and v.counts) then return ("%s of rank %d"):format(tostring(x.t), rank) end
    return ("%s {%d%s}"):format(tostring(x.t), total(v.counts), rank > 1 and ",..." or "")
  end)
  if ok then return text end
  local tok, t = pcall(function() return is_da(x) and x.t or x:type() end)
  return ("%s (%s)"):format(tok and tostring(t) or "an array", (tostring(text):gsub(" %(at [^)]*%)$", "")))
end

-- "sum of f64 {100}": a node's combinator and its array operands (extra: what else the
-- ranks must agree on, as " along dimension 2")
local function about(nd, vals, extra)
  local ops = {}
  for i = 1, nd.n do
    if vals[i] then ops[#ops + 1] = operand_text(nd.args[i], vals[i]) end
  end
  return ("%s of %s%s"):format((nd.op:gsub("_dist$", "")), table.concat(ops, ", "), extra or "")
end

-- ---- the combinators on distributed arrays

local H = {}      -- op -> handler(node, values) at run time
local DESC = {}   -- op -> what it costs, for explain

local function traced(how, f, ...)
  local saved = tracing
  tracing = how
  local res = pack(pcall(f, ...))
  tracing = saved
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

local function record(op, n_res, plainf, args, nargs)
  local sargs = {}
  for i = 1, nargs do sargs[i] = stand(args[i]) end
  local res = { traced("record", plainf, unpack(sargs, 1, nargs)) }
  if n_res == 1 then return node(op, args, nargs, nil, res[1]) end
  local nodes = {}
  local shared = { }
  for i = 1, n_res do
    nodes[i] = node(op, args, nargs, i, res[i])
    nodes[i].group = shared
  end
  return unpack(nodes, 1, n_res)
end

local function any_dist(args, n)
  for i = 1, n do if is_dist(args[i]) then return true end end
  return false
end

-- A rank's own count or offset inside a scalar function, as a value the kernel reads at
-- run time whatever it is: lowering writes 0, 1 and -1 into the code (and lifts other
-- constants), so ranks whose offsets are 0, 1 and 5 would each build a kernel of their own
local function run_time(v, like)
  local t = exp.is_exp(like) and like.t or "i64"
  return exp.constant(v + 2, t) - exp.constant(2, t)
end

-- the 1-based indices of a function's arguments, the first shifted by lo rows
local function shifted(f, lo)
  return function(i, ...) return f(i + run_time(lo, i), ...) end
end

local function i64(v)
  if exp.is_exp(v) then return v.t == "i64" and v or L.cast(v, "i64") end
  return exp.constant(v, "i64")
end

-- ---- run-time values: { acc = program or host array, counts = rows per rank | nil }
-- (nil counts: the same on every rank, as a plain program)

local function force(v, opts)
  if not array.is_array(v.acc) then v.acc = plain.run(v.acc, opts.localopts) end
  return v.acc
end

local function rank_of(acc) return array.is_array(acc) and #acc:shape() or acc.rank end

-- rows [a, b) (0-based) of a replicated program or host array, as a program
local function rows_of(acc, a, b)
  local spec = { { a + 1, b } }
  for d = 2, rank_of(acc) do spec[d] = L.all end
  return plain.slice(acc, spec)
end

-- A program of a node built by build() from `inputs` (arrays, programs, strings,
-- numbers): last run's program where the inputs are the same, so that a run of the same
-- distributed program over the same arrays reuses its local programs' compiled kernels
-- (a program built anew is traced, optimised and looked up again: about 0.3 ms).
local function lazy(nd, tag, inputs, build)
  local cache = nd.cache or {}
  nd.cache = cache
  local c = cache[tag]
  if c and #c.inputs == #inputs then
    local same = true
    for i = 1, #inputs do
      if not rawequal(c.inputs[i], inputs[i]) then same = false; break end
    end
    if same then return c.out end
  end
  local out = build()
  cache[tag] = { inputs = inputs, out = out }
  return out
end
local function key_of(counts) return counts and table.concat(counts, ",") .. "@" .. me() or "replicated" end

-- v moved to rows per rank `counts` (same total): each rank sends the rows others own
-- (what: the step, for the agreement)
local function redistribute(v, counts, t, opts, what)
  local block, s = together(what, function()
    local b = force(v, opts)
    return b, packed(b, "redistribute")
  end)
  local old = v.counts
  local rowbytes = old[me() + 1] > 0 and #s / old[me() + 1] or 0
  local lo, hi = rows_before(old, me()), rows_before(old, me() + 1)
  local parts = {}
  for q = 0, nranks() - 1 do
    local a, b = math.max(lo, rows_before(counts, q)), math.min(hi, rows_before(counts, q + 1))
    parts[q + 1] = b > a and s:sub((a - lo) * rowbytes + 1, (b - lo) * rowbytes) or ""
  end
  local got = table.concat(B.alltoall(parts))
  local sh = block:shape()
  sh[1] = counts[me() + 1]
  return { acc = plain.frombytes(got, t, sh), counts = counts }
end

-- Element-wise combinators: aligned blocks, each rank alone.
local function aligned(nd, vals, opts)
  local target
  for i = 1, nd.n do
    local v = vals[i]
    if v and v.counts then
      if not target then target = v.counts
      elseif total(v.counts) ~= total(target) then
        fail("%s: distributed arrays of different outer extents (%d and %d rows): not yet " ..
             "distributed (lacc.mpi); slice them to one extent first", nd.op, total(target), total(v.counts))
      end
    end
  end
  local args = {}
  if not target then   -- every operand the same on every rank (a reduction's result)
    for i = 1, nd.n do args[i] = vals[i] and vals[i].acc or nd.args[i] end
    return args, nil, 0
  end
  local lo, hi = rows_before(target, me()), rows_before(target, me() + 1)
  for i = 1, nd.n do
    local v, a = vals[i], nd.args[i]
    if not v then args[i] = a
    elseif not v.counts then
      args[i] = lazy(nd, "rows" .. i, { v.acc, lo, hi }, function() return rows_of(v.acc, lo, hi) end)
    elseif same_counts(v.counts, target) then args[i] = v.acc
    else args[i] = redistribute(v, target, a.t, opts, about(nd, vals, ", its operands' rows aligned")).acc end
  end
  return args, target, lo
end

local function elementwise(name, index_arg)
  H[name] = function(nd, vals, opts)
    local args, counts, lo = aligned(nd, vals, opts)
    local key = { key_of(counts) }
    for i = 1, nd.n do key[i + 1] = args[i] end
    local out = lazy(nd, "out", key, function()
      if index_arg then args[index_arg] = shifted(args[index_arg], lo) end
      local r = { plain[name](unpack(args, 1, nd.n)) }
      return r[nd.res or 1]
    end)
    return { acc = out, counts = counts }
  end
  DESC[name] = "local (element-wise, no communication)"
end
elementwise("map")
elementwise("imap", 1)
elementwise("zipWith")
for k = 3, 9 do elementwise("zipWith" .. k) end
elementwise("zip")
elementwise("unzip")
elementwise("where")
elementwise("compute")

-- generate / fill over a global shape, balanced rows
local function outer_shape(shape, what)
  if type(shape) == "number" then shape = { shape } end
  if type(shape) ~= "table" or #shape < 1 then
    fail("mpi.%s: expected a shape of Lua integers with an outer extent, got %s", what, util.describe(shape))
  end
  for d = 1, #shape do
    if not util.is_integer(shape[d]) or shape[d] < 0 then
      fail("mpi.%s: extent %d must be a non-negative Lua integer, got %s", what, d, util.show(shape[d]))
    end
  end
  return shape
end

local function local_shape(shape, rows)
  local s = { rows }
  for d = 2, #shape do s[d] = shape[d] end
  return s
end

function M.generate(shape, f)
  shape = outer_shape(shape, "generate")
  local nd = record("generate", 1, function() return plain.generate(local_shape(shape, 0), f) end, {}, 0)
  nd.shape, nd.fn = shape, f
  return nd
end
H.generate = function(nd)
  local counts = balanced(nd.shape[1], nranks())
  local lo = rows_before(counts, me())
  return { acc = lazy(nd, "out", { key_of(counts) }, function()
    return plain.generate(local_shape(nd.shape, counts[me() + 1]), shifted(nd.fn, lo))
  end), counts = counts }
end
DESC.generate = "local (each rank generates its rows)"

-- fill: a generate of the one value (its node says "generate" in explain)
function M.fill(shape, e)
  return M.generate(outer_shape(shape, "fill"), function() return e end)
end

-- ---- folds: local partials, combined in rank order

-- a shape of n rows of extents rest
local function with_rows(n, rest)
  local sh = { n }
  for d = 1, #rest do sh[d + 1] = rest[d] end
  return sh
end

local function stack(parts, t, rest)
  return plain.frombytes(table.concat(parts), t, with_rows(#parts, rest))
end

-- every rank's partial (a host array, or nil where the rank had no rows), in rank order,
-- as one array whose outer dimension runs over the ranks that had one (what: the step)
local function partials(part, v, d, opts, what)
  local s, rest = together(what, function()
    if not part then
      if d ~= 1 then return "\0", {} end
      local sh = force(v, opts):shape()   -- no rows here: an empty block
      table.remove(sh, 1)
      return "\0", sh
    end
    local h = plain.run(part, opts.localopts)
    return "\1" .. packed(h, "fold"), h:shape()
  end)
  local got = B.allgather(s)
  local kept = {}
  for q = 1, #got do
    if got[q]:byte(1) == 1 then kept[#kept + 1] = got[q]:sub(2) end
  end
  return kept, rest
end

local function fold_like(op)
  -- args: the combinator's own; which is the array, the dimension, and how to combine
  return function(nd, vals, opts)
    local spec = nd.fold
    local v = vals[spec.xs]
    local args = {}
    for i = 1, nd.n do args[i] = nd.args[i] end
    if v then args[spec.xs] = v.acc end
    local d = spec.dim
    if not v or not v.counts or (d and d ~= 1) then   -- replicated, or a dimension each rank holds whole
      return { acc = lazy(nd, "out", { v and v.acc or false, key_of(v and v.counts) }, function()
        return plain[op](unpack(args, 1, nd.n))
      end), counts = v and v.counts }
    end
    -- along the distributed dimension (or over everything): partials, then in rank order
    local part
    if v.counts[me() + 1] > 0 then
      part = lazy(nd, "partial", { v.acc }, function() return spec.partial(v.acc) end)
    end
    local what = about(nd, vals, d and (" along dimension " .. d) or "")
    local got, rest = partials(part, v, d, opts, what)
    local st = stack(got, nd.t, rest)
    -- compiled once: each run's partials are a new array
    nd.combine_fn = nd.combine_fn or plain.compile(spec.combine, opts.localopts)
    return { acc = together(what, nd.combine_fn, st) }
  end
end

local function fold_record(op, args, nargs, xs_i, dim, partial, combine)
  local nd = record(op, 1, plain[op], args, nargs)
  nd.fold = { xs = xs_i, dim = dim, partial = partial, combine = combine }
  return nd
end

local function dim_opt(opts) return type(opts) == "table" and opts.dim or nil end

local wrapped = {}   -- name -> function(args, nargs) for distributed arguments

wrapped.fold = function(args, n)
  local f, z, xs, o = args[1], args[2], args[3], args[4]
  local d = dim_opt(o) or xs.rank
  if xs.rank == 1 then d = 1 end
  local nd = fold_record("fold", args, n, 3, d,
    function(block) return plain.fold1(f, block, { dim = 1 }) end,
    function(st) return plain.fold(f, z, st, { dim = 1 }) end)
  return nd
end
wrapped.fold1 = function(args, n)
  local f, xs, o = args[1], args[2], args[3]
  local d = dim_opt(o) or xs.rank
  if xs.rank == 1 then d = 1 end
  return fold_record("fold1", args, n, 2, d,
    function(block) return plain.fold1(f, block, { dim = 1 }) end,
    function(st) return plain.fold1(f, st, { dim = 1 }) end)
end
for _, name in ipairs { "sum", "product", "maximum", "minimum", "and_", "or_" } do
  wrapped[name] = function(args, n)
    local xs, d = args[1], args[2]
    if d ~= nil and not util.is_integer(d) then return nil end   -- the plain error
    if xs.rank == 1 and d == 1 then d = nil end
    if d == nil then
      return fold_record(name, args, n, 1, nil,
        function(block) return plain[name](block) end,
        function(st) return plain[name](st) end)
    end
    return fold_record(name, args, n, 1, d,
      function(block) return plain[name](block, 1) end,
      function(st) return plain[name](st, 1) end)
  end
end
for _, name in ipairs { "fold", "fold1", "sum", "product", "maximum", "minimum", "and_", "or_" } do
  H[name] = fold_like(name)
  DESC[name] = "along the distributed dimension: a partial per rank, all-gathered and " ..
    "combined in rank order (each rank sends its partial to every other); along another " ..
    "dimension: local"
end
-- all / any: a map, then and_ / or_ (the map fuses into the partials)
wrapped.any = function(args)
  local p, xs, d = args[1], args[2], args[3]
  return L.or_(L.map(p, xs), d)
end
wrapped.all = function(args)
  local p, xs, d = args[1], args[2], args[3]
  return L.and_(L.map(p, xs), d)
end

-- ---- scans along the distributed dimension (rank 1): local scan, block totals
-- all-gathered, each rank's carry folded in rank order, then a local fix-up

local function scan_record(op, args, n, f, z, xs, o)
  local d = dim_opt(o) or xs.rank
  if d ~= 1 then
    local nd = record(op, 1, plain[op], args, n)
    nd.scan = { local_only = true, xs = z == nil and 2 or 3 }
    return nd
  end
  local nd = record(op, 1, plain[op], args, n)
  nd.scan = { f = f, z = z, xs = z == nil and 2 or 3, right = op:sub(1, 5) == "scanr", rank = xs.rank }
  return nd
end
wrapped.scanl1 = function(a, n) return scan_record("scanl1", a, n, a[1], nil, a[2], a[3]) end
wrapped.scanr1 = function(a, n) return scan_record("scanr1", a, n, a[1], nil, a[2], a[3]) end
wrapped.scanl = function(a, n) return scan_record("scanl", a, n, a[1], a[2], a[3], a[4]) end
wrapped.scanr = function(a, n) return scan_record("scanr", a, n, a[1], a[2], a[3], a[4]) end

-- Two blocks of rows one after the other (na and nb rows; rest: the other extents):
-- row-major, that is their flattened elements one after the other.
local function append_rows(a, na, b, nb, rest)
  if #rest == 0 then return plain.append(a, b) end
  return plain.reshape(with_rows(na + nb, rest), plain.append(plain.flatten(a), plain.flatten(b)))
end

local function scan_handler(op)
  return function(nd, vals, opts)
    local sc = nd.scan
    local v = vals[sc.xs]
    if sc.local_only or not v.counts or nranks() == 1 then
      local args = { unpack(nd.args, 1, nd.n) }
      args[sc.xs] = v.acc
      local counts = v.counts
      if counts and not sc.local_only and sc.z ~= nil then counts = { counts[1] + 1 } end
      return { acc = lazy(nd, "out", { v.acc, key_of(counts) }, function()
        return plain[op](unpack(args, 1, nd.n))
      end), counts = counts }
    end
    local f, rows, P, r = sc.f, v.counts[me() + 1], nranks(), sc.rank
    local along = r > 1 and { dim = 1 } or nil
    local scan1 = sc.right and plain.scanr1 or plain.scanl1
    local incl = along and scan1(f, v.acc, along) or scan1(f, v.acc)
    -- each rank's block total (a row; nothing where it has no rows), in rank order
    local mine, rest = together(about(nd, vals), function()
      local sh = force(v, opts):shape()
      table.remove(sh, 1)
      if rows == 0 then return "\0", sh end
      local sum_rows = along and plain.fold1(f, v.acc, along) or plain.fold1(f, v.acc)
      return "\1" .. packed(plain.run(sum_rows, opts.localopts), "scan"), sh
    end)
    local got = B.allgather(mine)
    -- the totals of the ranks before (scanl) or after (scanr) this one
    local side = {}
    local from, to = 1, me()
    if sc.right then from, to = me() + 2, P end
    for q = from, to do if got[q]:byte(1) == 1 then side[#side + 1] = got[q]:sub(2) end end
    local st = plain.frombytes(table.concat(side), nd.t, with_rows(#side, rest))
    local carry   -- a program of rank r - 1, or nil
    if sc.z ~= nil then
      local z = type(sc.z) == "number" and exp.constant(sc.z, nd.t) or sc.z
      local zs = plain.fill(with_rows(1, rest), z)
      carry = plain.fold1(f, sc.right and append_rows(st, #side, zs, 1, rest) or append_rows(zs, 1, st, #side, rest), { dim = 1 })
    elseif #side > 0 then
      carry = plain.fold1(f, st, { dim = 1 })
    end
    local out = incl
    if carry then
      local spec = { rows }
      for d = 2, r do spec[d] = L.all end
      local c = plain.replicate(spec, carry)
      out = sc.right and plain.zipWith(f, incl, c) or plain.zipWith(f, c, incl)
    end
    if sc.z == nil then return { acc = out, counts = v.counts } end
    local counts = { unpack(v.counts) }
    counts[P] = counts[P] + 1
    local one = plain.reshape(with_rows(1, rest), carry)
    if sc.right then
      -- element k: x_k combined with everything after it, then z; the last rank adds z
      if me() == P - 1 then out = append_rows(out, rows, one, 1, rest) end
    else
      -- the carry, then all but the last inclusive value; the last rank adds the total
      local ex = rows > 0 and append_rows(one, 1, rows_of(out, 0, rows - 1), rows - 1, rest) or rows_of(one, 0, 0)
      if me() == P - 1 then
        if rows > 0 then ex = append_rows(ex, rows, rows_of(out, rows - 1, rows), 1, rest)
        else ex = one end
      end
      out = ex
    end
    return { acc = out, counts = counts }
  end
end
for _, op in ipairs { "scanl", "scanl1", "scanr", "scanr1" } do
  H[op] = scan_handler(op)
  DESC[op] = "along the distributed dimension: a local scan, the block totals all-gathered, " ..
    "each rank's carry folded in rank order, a local fix-up; along another dimension: local"
end

-- ---- stencils: the window's rows from the neighbours, then the local stencil

wrapped.stencil = function(args, n)
  local f, boundary, window = args[1], args[2], args[4]
  local nd = record("stencil", 1, plain.stencil, args, n)
  local w = window == nil and 3 or (type(window) == "number" and window or window[1])
  nd.halo = floor(w / 2)
  nd.wrap = boundary == "wrap"
  nd.fn, nd.boundary, nd.window = f, boundary, window
  return nd
end

-- the global rows (0-based, in order) a block [lo, hi) of n rows reads with h rows around
local function halo_rows(lo, hi, n, h, wrap)
  local before, after = {}, {}
  if hi <= lo then return before, after end
  for r = lo - h, lo - 1 do
    if wrap and n > 0 then before[#before + 1] = r % n elseif r >= 0 then before[#before + 1] = r end
  end
  for r = hi, hi + h - 1 do
    if wrap and n > 0 then after[#after + 1] = r % n elseif r < n then after[#after + 1] = r end
  end
  return before, after
end

-- the rank (1-based) holding global row r
local function holder(counts, r)
  local acc = 0
  for q = 1, #counts do
    acc = acc + counts[q]
    if r < acc then return q end
  end
end

-- f(...) built directly on a node's first run, compiled (once per key) from its second:
-- a program run once pays no compile, one run again binds new arrays to kernels
local function node_fn(nd, key, opts, build)
  nd.compiled = nd.compiled or {}
  local fn = nd.compiled[key]
  if fn then return fn end
  if not nd.ran_once then
    nd.ran_once = { [key] = true }
    return build
  end
  if not nd.ran_once[key] then
    nd.ran_once[key] = true
    return build
  end
  fn = plain.compile(build, opts.localopts)
  nd.compiled[key] = fn
  return fn
end

local is_scalar = {}
for _, t in ipairs { "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64" } do
  is_scalar[t] = true
end

H.stencil = function(nd, vals, opts)
  local v = vals[3]
  local counts, P = v.counts, nranks()
  if not counts or P == 1 then
    return { acc = lazy(nd, "out", { v.acc }, function()
      return plain.stencil(nd.fn, nd.boundary, v.acc, nd.window)
    end), counts = counts }
  end
  local n, h = total(counts), nd.halo
  local what = about(nd, vals)   -- every agreement below: ranks take different paths
  local mine, lo = counts[me() + 1], rows_before(counts, me())
  local block, t, sh, rowbytes, scalar
  local whole   -- the block's bytes, for element types without scalar storage
  local function row_bytes(r)   -- one of this rank's rows (global r), packed
    if scalar then return util.core.array_read_bytes(block, (r - lo) * rowbytes, rowbytes) end
    whole = whole or packed(block, "stencil")
    return whole:sub((r - lo) * rowbytes + 1, (r - lo + 1) * rowbytes)
  end
  -- what every rank q reads of this rank's rows, in q's order (before the agreement: a
  -- rank that cannot pack its rows says so there, not in the exchange)
  local parts = together(what, function()
    block = force(v, opts)
    t, sh = block:type(), block:shape()
    rowbytes = util.core.type_bytes(t) * product(sh, 2)
    scalar = is_scalar[t]
    local out = {}
    for q = 0, P - 1 do
      local b, a = halo_rows(rows_before(counts, q), rows_before(counts, q + 1), n, h, nd.wrap)
      local buf = {}
      for _, list in ipairs { b, a } do
        for _, r in ipairs(list) do
          if r >= lo and r < lo + mine then buf[#buf + 1] = row_bytes(r) end
        end
      end
      out[q + 1] = table.concat(buf)
    end
    return out
  end)
  local got = B.alltoall(parts)
  -- (every rank agrees below, also one without rows: the ranks meet the same collectives)
  if mine == 0 then
    sh[1] = 0
    return { acc = together(what, function() return plain.array(nd.t, sh) end), counts = counts }
  end
  -- this rank's rows before and after, each from its holder, in order
  local b, a = halo_rows(lo, lo + mine, n, h, nd.wrap)
  local cursor = {}
  for q = 1, P do cursor[q] = 0 end
  local function bytes_from(list)
    local out = {}
    for _, r in ipairs(list) do
      local q = holder(counts, r)
      out[#out + 1] = got[q]:sub(cursor[q] + 1, cursor[q] + rowbytes)
      cursor[q] = cursor[q] + rowbytes
    end
    return table.concat(out)
  end
  local bb, ab = bytes_from(b), bytes_from(a)
  local nb, na = #b, #a
  local function rows_array(bytes, k)
    sh[1] = k
    return plain.frombytes(bytes, t, sh)
  end
  local function stencil_rows(key, ext, from, to)   -- rows [from, to) of ext's stencil
    return node_fn(nd, key, opts, function(e)
      return rows_of(plain.stencil(nd.fn, nd.boundary, e, nd.window), from, to)
    end)(ext)
  end
  if scalar and mine >= 2 * h then
    -- the stencil of the block alone is right but for its first and last h rows where a
    -- neighbour's rows are read: those are computed from the halo and the block's edge
    -- rows, and written over (no copy of the block)
    local res = together(what, function()
      local main = plain.run(lazy(nd, "main", { block }, function()
        return plain.stencil(nd.fn, nd.boundary, block, nd.window)
      end), opts.localopts)
      if nb > 0 then
        local head = util.core.array_read_bytes(block, 0, 2 * h * rowbytes)
        local top = stencil_rows("top" .. nb, rows_array(bb .. head, nb + 2 * h), nb, nb + h)
        util.core.array_write_bytes(main, 0, force({ acc = top }, opts):tobytes())
      end
      if na > 0 then
        local tail = util.core.array_read_bytes(block, (mine - 2 * h) * rowbytes, 2 * h * rowbytes)
        local bottom = stencil_rows("bottom" .. na, rows_array(tail .. ab, 2 * h + na), h, 2 * h)
        util.core.array_write_bytes(main, (mine - h) * rowbytes, force({ acc = bottom }, opts):tobytes())
      end
      return main
    end)
    return { acc = res, counts = counts }
  end
  -- otherwise the block with its halo rows, a copy, then the stencil of that
  local whole_bytes = bb .. (scalar and util.core.array_read_bytes(block, 0, mine * rowbytes) or packed(block, "stencil")) .. ab
  local res = together(what, function()
    return force({ acc = stencil_rows("ext", rows_array(whole_bytes, nb + mine + na), nb, nb + mine) }, opts)
  end)
  return { acc = res, counts = counts }
end
DESC.stencil = "halo exchange: each rank receives the window's rows (half the window, " ..
  "each side) from the ranks that hold them, runs the stencil on its block and recomputes " ..
  "its first and last rows from the halo"

-- ---- gathers and scatters with computed indices: requests to the owners, answers back

-- The rank (0-based) owning 0-based row `row` (an i64 expression) under counts: a binary
-- search of the ranks' first rows (a captured array), the same kernel for any rank count
-- (at most 2^20 ranks).
local SEARCH_LEVELS = 20
local function owner_exp(row, counts)
  local P = #counts
  local starts = {}
  for q = 1, P do starts[q] = rows_before(counts, q - 1) end
  local st = plain.fromtable(starts, "i64")
  local pos = exp.constant(0, "i64")
  for level = SEARCH_LEVELS - 1, 0, -1 do
    local step = 2 ^ level
    local nxt = pos + step
    local at = L.min(nxt, P - 1)
    pos = L.cond(L.land(L.lt(nxt, P), L.le(st[at + 1], row)), nxt, pos)
  end
  return pos
end

-- Send element k of each program in `payload` (rank-1 programs of one length) to rank
-- owner[k] + 1 (owner -1: nowhere), in a stable order (argsort of the owners): the parts
-- for alltoall (per rank: payload 1's elements for it, then payload 2's, ...) and the
-- order, a host array. Local work only: the caller agrees, then exchanges.
local function outgoing(owner, payload, opts)
  local P = nranks()
  local order = plain.argsort(owner)
  local per = plain.permute(function(a, b) return a + b end, plain.fill({ P }, exp.constant(0, "i64")),
    function(k) return L.cond(L.ge(owner[k], 0), owner[k] + 1, L.ignore) end,
    plain.map(function() return exp.constant(1, "i64") end, owner))
  local progs = { per, order }
  for i, p in ipairs(payload) do progs[i + 2] = plain.gather(order, p) end
  local outs = { plain.run(progs, opts.localopts) }
  local sent, owned = {}, 0
  for q = 1, P do
    sent[q] = outs[1]:get(q)
    owned = owned + sent[q]
  end
  local n = outs[2]:size()
  local strings, eb = {}, {}
  for i = 1, #payload do
    strings[i] = packed(outs[i + 2], "exchange")
    eb[i] = n > 0 and #strings[i] / n or 0
  end
  local parts, at = {}, n - owned   -- the elements sent nowhere sort first
  for q = 1, P do
    local buf = {}
    for i = 1, #payload do buf[i] = strings[i]:sub(at * eb[i] + 1, (at + sent[q]) * eb[i]) end
    parts[q] = table.concat(buf)
    at = at + sent[q]
  end
  return parts, outs[2]
end

-- what came from each rank, split into its payloads (element bytes ebytes): per payload
-- one string of everything, in rank order, and the element count from each rank
local function incoming(got, ebytes)
  local per = 0
  for _, b in ipairs(ebytes) do per = per + b end
  local outs, counts = {}, {}
  for i = 1, #ebytes do outs[i] = {} end
  for q = 1, #got do
    local k = per > 0 and #got[q] / per or 0
    counts[q] = k
    local at = 0
    for i, b in ipairs(ebytes) do
      outs[i][q] = got[q]:sub(at + 1, at + k * b)
      at = at + k * b
    end
  end
  for i = 1, #ebytes do outs[i] = table.concat(outs[i]) end
  return outs, counts
end

-- The global 0-based linear index of a list of 1-based indices in shape gshape; -1 where
-- one is outside.
local function linear(ix, gshape)
  local lin, ok = exp.constant(0, "i64"), nil
  for d = 1, #gshape do
    local i = i64(ix[d])
    local inside = L.land(L.ge(i, 1), L.le(i, gshape[d]))
    ok = ok and L.land(ok, inside) or inside
    lin = lin * gshape[d] + (i - 1)
  end
  return L.cond(ok, lin, exp.constant(-1, "i64"))
end

-- the smallest of a rank-1 i64 program, 0 when it is empty (local)
local function least(p, opts)
  return plain.run(plain.minimum(plain.append(p, plain.fill({ 1 }, exp.constant(0, "i64")))), opts.localopts):get()
end

local function owners(lin, rowsize, counts)
  return plain.map(function(j)
    return L.cond(L.ge(j, 0), owner_exp(L.idiv(j, math.max(rowsize, 1)), counts), exp.constant(-1, "i64"))
  end, lin)
end

-- The elements of distributed v at global linear indices lin (a rank-1 i64 program on
-- this rank), as a rank-1 program in lin's order; -1 in lin is an index error. Two
-- all-to-all rounds: the indices to their owners, the elements back. (what: the
-- combinator's name; step: the agreement's description.)
local function fetch(v, lin, what, opts, step)
  local block, parts, order = together(step, function()
    local blk = force(v, opts)
    if least(lin, opts) < 0 then fail("%s: index function result out of bounds", what) end
    local rowsize = product(blk:shape(), 2)
    local pts, ord = outgoing(owners(lin, rowsize, v.counts), { lin }, opts)
    return blk, pts, ord
  end)
  local reqs, counts = incoming(B.alltoall(parts), { 8 })
  local t = block:type()
  local back = together(step, function()
    local lo = rows_before(v.counts, me()) * product(block:shape(), 2)
    local req = plain.frombytes(reqs[1], "i64", { #reqs[1] / 8 })
    local flat = plain.reshape({ block:size() }, block)
    local s = packed(plain.run(plain.map(function(j) return flat[j - lo + 1] end, req), opts.localopts), what)
    local eb, out, at = util.core.type_bytes(t), {}, 0
    for q = 1, #counts do
      out[q] = s:sub(at + 1, at + counts[q] * eb)
      at = at + counts[q] * eb
    end
    return out
  end)
  local vals = plain.frombytes(table.concat(B.alltoall(back)), t, { order:size() })
  return plain.scatter(vals, order, vals)
end

local function gshape_of(v, opts)
  local sh = force(v, opts):shape()
  sh[1] = total(v.counts)
  return sh
end

wrapped.backpermute = function(args, n)
  local shape, f, xs = args[1], args[2], args[3]
  if is_dist(shape) or is_dist(f) or not is_dist(xs) then return nil end
  shape = outer_shape(shape, "backpermute")
  local nd = record("backpermute", 1, plain.backpermute, args, n)
  nd.shape, nd.fn = shape, f
  return nd
end
H.backpermute = function(nd, vals, opts)
  local v = vals[3]
  if not v.counts then   -- the source is the same on every rank: so is the result
    return { acc = lazy(nd, "out", { v.acc }, function() return plain.backpermute(nd.shape, nd.fn, v.acc) end) }
  end
  local counts = balanced(nd.shape[1], nranks())
  if nranks() == 1 then
    return { acc = lazy(nd, "out", { v.acc }, function() return plain.backpermute(nd.shape, nd.fn, v.acc) end),
             counts = counts }
  end
  local lo, rows = rows_before(counts, me()), counts[me() + 1]
  local what = about(nd, vals, " into {" .. table.concat(nd.shape, ",") .. "}")
  local gs = together(what, function() return gshape_of(v, opts) end)
  local ls = local_shape(nd.shape, rows)
  local lin = plain.generate(ls, function(i, ...) return linear({ nd.fn(i + run_time(lo, i), ...) }, gs) end)
  local got = fetch(v, plain.reshape({ product(ls) }, lin), "backpermute", opts, what)
  return { acc = plain.reshape(ls, got), counts = counts }
end
DESC.backpermute = "two all-to-all rounds: each rank sends the indices it reads to their " ..
  "owners (8 bytes each), the owners send the elements back"

-- an index element (an integer, or a tuple of rank integers) as a list of indices
local function index_list(i, rank)
  if rank == 1 then return { i } end
  local list = {}
  for d = 1, rank do list[d] = exp.prj(i, d) end
  return list
end

wrapped.gather = function(args, n)
  local idx, xs = args[1], args[2]
  if not is_dist(xs) then
    if is_dist(idx) then return record("gather_local", 1, plain.gather, args, n) end
    return nil
  end
  return record("gather", 1, plain.gather, args, n)
end
H.gather_local = function(nd, vals, opts)
  local args, counts = aligned(nd, vals, opts)
  return { acc = plain.gather(unpack(args, 1, nd.n)), counts = counts }
end
DESC.gather_local = DESC.map
H.gather = function(nd, vals, opts)
  local vi, v = vals[1], vals[2]
  local idx = vi and vi.acc or nd.args[1]
  if not v.counts then   -- a replicated source: each rank gathers its indices' elements
    return { acc = lazy(nd, "out", { idx, v.acc }, function() return plain.gather(idx, v.acc) end),
             counts = vi and vi.counts }
  end
  if nranks() == 1 then
    return { acc = lazy(nd, "out", { idx, v.acc }, function() return plain.gather(idx, v.acc) end),
             counts = vi and vi.counts }
  end
  local what = about(nd, vals)
  local gs, ishape = together(what, function() return gshape_of(v, opts), force({ acc = idx }, opts):shape() end)
  local lin = plain.map(function(i) return linear(index_list(i, #gs), gs) end, idx)
  local got = fetch(v, plain.flatten(lin), "gather", opts, what)
  return { acc = plain.reshape(ishape, got), counts = vi and vi.counts }
end
DESC.gather = DESC.backpermute

-- permute / scatter into distributed defaults: (target, value) pairs to the target's
-- owner, combined there in rank order, each rank's in its order
local function push_record(op, args, n, defaults_i, xs_i)
  local nd = record(op, 1, plain[op], args, n)
  nd.push = { d = defaults_i, x = xs_i }
  return nd
end
wrapped.permute = function(args, n)
  if is_dist(args[1]) or is_dist(args[3]) then return nil end
  return push_record("permute", args, n, 2, 4)
end
wrapped.scatter = function(args, n) return push_record("scatter", args, n, 3, 1) end

-- 0 in every index: dropped (-2); else the linear index, -1 outside
local function target(list, gs)
  local ign
  for d = 1, #gs do
    local z = L.eq(i64(list[d]), 0)
    ign = ign and L.land(ign, z) or z
  end
  return L.cond(ign, exp.constant(-2, "i64"), linear(list, gs))
end

-- the outer extent of a program (run) or host array
local function total_rows_of(acc, opts)
  return force({ acc = acc }, opts):shape()[1]
end

-- the defaults as a distributed value: replicated ones keep each rank's balanced rows
local function distributed_defaults(dv, opts)
  if dv.counts then return dv end
  local full = force(dv, opts)
  local counts = balanced(full:shape()[1], nranks())
  local lo = rows_before(counts, me())
  return { acc = plain.run(rows_of(full, lo, lo + counts[me() + 1]), opts.localopts), counts = counts }
end

-- Onto few targets (a histogram) each rank first combines its own elements into a
-- partial of every target, (value, touched) pairs, and sends each owner the partial of its
-- rows: messages of the targets' size, not the elements'. Targets times ranks at most:
local DENSE_TARGETS = 2 ^ 22

-- this rank's partial of every target of shape gs: (value, touched) pairs
local function dense_partial(op, nd, xs, idx, xlo, gs)
  local t = nd.t
  local yes = exp.constant(true, "bool")
  local init = plain.fill(gs, exp.tuple(collection.zero_of(t), exp.constant(false, "bool")))
  local marked = plain.map(function(x) return exp.tuple(x, yes) end, xs)
  if op == "scatter" then return plain.scatter(marked, idx, init) end
  local combine, f = nd.args[1], nd.args[3]
  return plain.permute(function(x, o)
    local xv = exp.prj(x, 1)
    return L.cond(exp.prj(o, 2), exp.tuple(combine(xv, exp.prj(o, 1)), yes), exp.tuple(xv, yes))
  end, init, function(i, ...) return f(i + xlo, ...) end, marked)
end

-- the owner's rows: its defaults, then each rank's partial in rank order (compiled once:
-- the partials are new arrays each run)
local function dense_combine(op, nd, dblock, got, pt, what)
  local sh = dblock:shape()
  local parts = {}
  for q = 1, #got do parts[q] = plain.frombytes(got[q], pt, sh) end
  nd.combine_parts = nd.combine_parts or plain.compile(function(d, ...)
    local acc, combine = d, nd.args[1]
    for _, part in ipairs { ... } do
      acc = plain.zipWith(function(o, p)
        local v = exp.prj(p, 1)
        return L.cond(exp.prj(p, 2), op == "scatter" and v or combine(v, o), o)
      end, acc, part)
    end
    return acc
  end)
  return together(what, nd.combine_parts, dblock, unpack(parts, 1, #got))
end

local function push_handler(op)
  return function(nd, vals, opts)
    local dv, xv = vals[nd.push.d], vals[nd.push.x]
    local iv = op == "scatter" and vals[2] or nil
    if not (dv and dv.counts) and not (xv and xv.counts) and not (iv and iv.counts) then
      return { acc = plain[op](unpack(nd.args, 1, nd.n)) }
    end
    if nranks() == 1 then   -- every target is this rank's
      local args = { unpack(nd.args, 1, nd.n) }
      for i = 1, nd.n do if vals[i] then args[i] = vals[i].acc end end
      local key = {}
      for i = 1, nd.n do key[i] = args[i] end
      local out = lazy(nd, "out", key, function() return plain[op](unpack(args, 1, nd.n)) end)
      return { acc = out, counts = dv and dv.counts or { total_rows_of(args[nd.push.d], opts) } }
    end
    -- the sources (and scatter's indices) aligned; replicated ones sent by rank 1 alone
    local src = { xv or { acc = nd.args[nd.push.x] } }
    if op == "scatter" then src[2] = iv or { acc = nd.args[2] } end
    local counts
    for _, sv in ipairs(src) do if sv.counts then counts = counts or sv.counts end end
    local xs, idx, xlo
    local what = about(nd, vals)
    local parts, t, dense = together(what, function()
      local lsrc = {}
      for i, sv in ipairs(src) do
        if counts and not sv.counts then
          local lo = rows_before(counts, me())
          lsrc[i] = rows_of(sv.acc, lo, lo + counts[me() + 1])
        elseif counts and not same_counts(sv.counts, counts) then
          fail("%s: the values and indices are distributed differently: not yet distributed (lacc.mpi)", op)
        elseif not counts and me() > 0 then
          lsrc[i] = rows_of(sv.acc, 0, 0)
        else
          lsrc[i] = sv.acc
        end
      end
      xs, idx = lsrc[1], lsrc[2]
      xlo = counts and rows_before(counts, me()) or 0
      local dd = distributed_defaults(dv or { acc = nd.args[nd.push.d] }, opts)
      dv = dd
      force(dd, opts)   -- here, not after the exchange: a failure is every rank's
      local gs = gshape_of(dd, opts)
      local tgt
      if op == "permute" then
        local f, r = nd.args[3], #gs
        tgt = plain.imap(function(...)
          local ix = { ... }
          local k = #ix - 1
          ix[1] = ix[1] + xlo
          local res = { f(unpack(ix, 1, k)) }
          if #res == 1 and rawequal(res[1], L.ignore) and r > 1 then
            for d = 2, r do res[d] = L.ignore end
          end
          return target(res, gs)
        end, xs)
      else
        tgt = plain.map(function(i) return target(index_list(i, #gs), gs) end, idx)
      end
      local how = opts.exchange
      if how == "partials" or (how == nil and product(gs) * nranks() <= DENSE_TARGETS) then
        local part = lazy(nd, "partial", { xs, idx or false, xlo, table.concat(gs, ",") }, function()
          return dense_partial(op, nd, xs, idx, xlo, gs)
        end)
        local h = plain.run(part, opts.localopts)
        local all = packed(h, op)
        local rowbytes = #all / math.max(gs[1], 1)
        local pts = {}
        for q = 0, nranks() - 1 do
          local a, b = rows_before(dd.counts, q), rows_before(dd.counts, q + 1)
          pts[q + 1] = all:sub(a * rowbytes + 1, b * rowbytes)
        end
        return pts, h:type(), true
      end
      local ftgt, fval = plain.flatten(tgt), plain.flatten(xs)
      local ch = plain.run(plain.minimum(plain.append(ftgt, plain.fill({ 1 }, exp.constant(0, "i64")))), opts.localopts)
      if ch:get() == -1 then fail("%s: index function result out of bounds", op) end
      local rowsize = product(gs, 2)
      local pts = outgoing(owners(ftgt, rowsize, dd.counts), { ftgt, fval }, opts)
      return pts, nd.t, false
    end)
    if dense then
      local got = B.alltoall(parts)
      local dblock = force(dv, opts)
      return { acc = dense_combine(op, nd, dblock, got, t, what), counts = dv.counts }
    end
    local outs = incoming(B.alltoall(parts), { 8, util.core.type_bytes(t) })
    local dblock = force(dv, opts)
    local ls = dblock:shape()
    local lo = rows_before(dv.counts, me()) * product(ls, 2)
    local k = #outs[1] / 8
    local tg = plain.frombytes(outs[1], "i64", { k })
    local vs = plain.frombytes(outs[2], t, { k })
    local function unravel(j)
      local rel, ix = j - lo, {}
      for d = #ls, 2, -1 do
        ix[d] = L.mod(rel, ls[d]) + 1
        rel = L.idiv(rel, ls[d])
      end
      ix[1] = rel + 1
      return unpack(ix, 1, #ls)
    end
    local res
    if op == "permute" then
      res = plain.permute(nd.args[1], dblock, function(q) return unravel(tg[q]) end, vs)
    else
      local where = plain.map(function(j)
        if #ls == 1 then return unravel(j) end
        return exp.tuple(unravel(j))
      end, tg)
      res = plain.scatter(vs, where, dblock)
    end
    return { acc = res, counts = dv.counts }
  end
end
H.permute = push_handler("permute")
H.scatter = push_handler("scatter")
DESC.permute = "one all-to-all round; onto few targets (targets x ranks up to 4M) each " ..
  "rank combines its elements into a partial of every target, (value, touched) pairs, and " ..
  "sends each owner the partial of its rows, which it combines in rank order; onto more, " ..
  "each rank sends (target, value) pairs to the targets' owners, combined there in rank order"
DESC.scatter = DESC.permute

-- filter: each rank keeps its own elements (its rows' in order: the flattened result's
-- block); the counts all-gathered (uneven blocks); per row, each rank's rows' counts
wrapped.filter = function(args, n)
  local vals, counts = record("filter", 2, plain.filter, args, n)
  local o = args[3]
  local per_row = type(o) == "table" and o.per_row == true and args[2].rank >= 2
  vals.per_row, counts.per_row = per_row, per_row
  return vals, counts
end
H.filter = function(nd, vals, opts)
  local v = vals[2]
  if not v.counts then
    local r = { plain.filter(nd.args[1], v.acc, nd.args[3]) }
    return { acc = r[nd.res] }
  end
  local g = opts.memo[nd.group] or {}
  opts.memo[nd.group] = g
  if not g.done then
    local kept, count = together(about(nd, vals), function()
      local pv, pc = plain.filter(nd.args[1], v.acc, nd.args[3])
      return plain.run({ pv, pc }, opts.localopts)
    end)
    g.per_row = nd.per_row and count
    local got = B.allgather(tostring(kept:size()))
    local counts, sum = {}, 0
    for q = 1, #got do
      counts[q] = tonumber(got[q])
      sum = sum + counts[q]
    end
    g.kept, g.counts, g.sum, g.done = kept, counts, sum, true
  end
  if nd.res == 1 then return { acc = g.kept, counts = g.counts } end
  if g.per_row then return { acc = g.per_row, counts = v.counts } end
  return { acc = plain.unit(exp.constant(g.sum, "i64")) }
end
DESC.filter = "a local filter; the counts all-gathered (a few bytes a rank): the kept " ..
  "elements stay where they are, in blocks of uneven length (per row: each rank's rows' counts)"

-- ---- redistribution: reshape, flatten, transpose (every element moves at most once)

-- The bytes of this rank's elements [a, b) (linear, within its block) as a string.
local function element_bytes(block, a, b, eb, scalar, whole)
  if b <= a then return "" end
  if scalar then return util.core.array_read_bytes(block, a * eb, (b - a) * eb) end
  return whole:sub(a * eb + 1, b * eb)
end

-- v's elements, in row-major order, as the rows of shape `shape` balanced over the
-- ranks: each rank sends every other the part of its linear range the other's new rows
-- cover (one all-to-all). (what: the combinator's name; step: the agreement's description.)
local function relinearise(v, shape, what, opts, step)
  local block, whole = together(step, function()
    local blk = force(v, opts)
    local sh = blk:shape()
    local n = total(v.counts) * product(sh, 2)
    if n ~= product(shape) then
      fail("%s: %d elements cannot take a shape of %s", what, n, table.concat(shape, "x"))
    end
    return blk, not is_scalar[blk:type()] and packed(blk, what) or nil
  end)
  local t = block:type()
  local eb, scalar = util.core.type_bytes(t), is_scalar[t]
  local old_row = product(block:shape(), 2)
  local new_row = product(shape, 2)
  local counts = balanced(shape[1], nranks())
  local lo = rows_before(v.counts, me()) * old_row
  local hi = lo + v.counts[me() + 1] * old_row
  local parts = {}
  for q = 0, nranks() - 1 do
    local a = math.max(lo, rows_before(counts, q) * new_row)
    local b = math.min(hi, rows_before(counts, q + 1) * new_row)
    parts[q + 1] = element_bytes(block, a - lo, b - lo, eb, scalar, whole)
  end
  local got = table.concat(B.alltoall(parts))
  return { acc = plain.frombytes(got, t, local_shape(shape, counts[me() + 1])), counts = counts }
end

wrapped.reshape = function(args, n)
  local shape, xs = args[1], args[2]
  if not is_dist(xs) or is_dist(shape) then return nil end
  shape = outer_shape(shape, "reshape")
  local nd = record("reshape", 1, function(sh, x) return plain.reshape(local_shape(sh, 0), x) end, { shape, xs }, n)
  nd.shape = shape
  return nd
end
H.reshape = function(nd, vals, opts)
  local v = vals[2]
  if not v.counts then return { acc = plain.reshape(nd.shape, v.acc) } end
  if nranks() == 1 then
    return { acc = lazy(nd, "out", { v.acc }, function() return plain.reshape(nd.shape, v.acc) end),
             counts = { nd.shape[1] } }
  end
  return relinearise(v, nd.shape, "reshape", opts, about(nd, vals, " to {" .. table.concat(nd.shape, ",") .. "}"))
end
DESC.reshape = "redistribution: one all-to-all, each element sent once to the rank whose " ..
  "rows of the new shape hold it (none when the rows stay where they are)"
wrapped.flatten = function(args, n)
  local xs = args[1]
  local nd = record("flatten", 1, plain.flatten, args, n)
  nd.xs = xs
  return nd
end
H.flatten = function(nd, vals, opts)
  local v = vals[1]
  if not v.counts then return { acc = plain.flatten(v.acc) } end
  local what = about(nd, vals)
  local sh = together(what, function() return gshape_of(v, opts) end)
  if nranks() == 1 or #sh == 1 then
    return { acc = lazy(nd, "out", { v.acc }, function() return plain.flatten(v.acc) end),
             counts = #sh == 1 and v.counts or { product(sh) } }
  end
  return relinearise(v, { product(sh) }, "flatten", opts, what)
end
DESC.flatten = DESC.reshape

-- transpose (rank 2): the columns each rank will hold as rows, cut from every block
wrapped.transpose = function(args, n) return record("transpose", 1, plain.transpose, args, n) end
H.transpose = function(nd, vals, opts)
  local v = vals[1]
  if not v.counts then return { acc = plain.transpose(v.acc) } end
  local what = about(nd, vals)
  local block = together(what, function() return force(v, opts) end)
  local sh = block:shape()
  local rows, cols = total(v.counts), sh[2]
  if nranks() == 1 then
    return { acc = lazy(nd, "out", { v.acc }, function() return plain.transpose(v.acc) end), counts = { cols } }
  end
  local counts = balanced(cols, nranks())
  local mine = v.counts[me() + 1]
  -- to rank q: the transpose of this block's columns [c0, c1), packed
  local parts = together(what, function()
    local out = {}
    for q = 0, nranks() - 1 do
      local c0, c1 = rows_before(counts, q), rows_before(counts, q + 1)
      if c1 > c0 and mine > 0 then
        local piece = plain.transpose(plain.slice(block, { L.all, { c0 + 1, c1 } }))
        out[q + 1] = packed(plain.run(piece, opts.localopts), "transpose")
      else
        out[q + 1] = ""
      end
    end
    return out
  end)
  local got = B.alltoall(parts)
  -- row i of this rank's result: each rank's piece's row i, in rank order
  local t = block:type()
  local eb = util.core.type_bytes(t)
  local my_rows = counts[me() + 1]
  local out = {}
  for i = 0, my_rows - 1 do
    for q = 1, nranks() do
      local w = v.counts[q] * eb
      out[#out + 1] = got[q]:sub(i * w + 1, (i + 1) * w)
    end
  end
  return { acc = plain.frombytes(table.concat(out), t, { my_rows, rows }), counts = counts }
end
DESC.transpose = "redistribution: one all-to-all, each rank sends every other the columns " ..
  "that become its rows"

-- Along the innermost dimension of an array of rank 2 or more each row is one rank's:
-- local. (Of rank 1, along the distributed dimension: not yet distributed.)
local function row_local(name, xs_i, how_many)
  wrapped[name] = function(args, n)
    local xs = args[xs_i]
    if not is_dist(xs) then return nil end
    if xs.rank < 2 then
      fail("%s: along the distributed dimension (an array of rank 1): not yet distributed " ..
           "(lacc.mpi); rows of arrays of rank 2 or more are", name)
    end
    return record(name, how_many or 1, plain[name], args, n)
  end
  H[name] = function(nd, vals, opts)
    local args, counts = aligned(nd, vals, opts)
    local key = { key_of(counts) }
    for i = 1, nd.n do key[i + 1] = args[i] end
    local out = lazy(nd, "out" .. (nd.res or 1), key, function()
      return ({ plain[name](unpack(args, 1, nd.n)) })[nd.res or 1]
    end)
    return { acc = out, counts = counts }
  end
  DESC[name] = "local (each row is one rank's)"
end
-- sort / argsort of a rank-1 distributed array (a sample sort): each rank sorts its
-- block, P - 1 samples of every rank are all-gathered and give P - 1 splitter keys
-- (lacc.sort's radix keys, a u32 or u64 per field of the key, compared field by field,
-- so its order: NaN last, -0 before +0), each rank sends rank q its elements whose key
-- has q splitters below it (a contiguous run of its sorted block: equal keys all go to
-- one rank), and each rank sorts what it got, the senders in rank order (a stable sort:
-- equal keys keep their order).
local function dist_sort_record(name)
  return function(args, n)
    local xs = args[1]
    if not is_dist(xs) then return nil end
    if xs.rank >= 2 then return nil end
    if types.parse(xs.t).kind == "sum" then
      fail("%s: a distributed array of %s: not yet distributed (lacc.mpi; sum types have no packed form)", name, xs.t)
    end
    return record(name .. "_dist", 1, plain[name], args, n)
  end
end

-- whether the keys as (exps, a field each) `a` come before `b`, field by field
local function keys_lt(a, b)
  local r = L.lt(a[#a], b[#b])
  for f = #a - 1, 1, -1 do r = L.lor(L.lt(a[f], b[f]), L.land(L.eq(a[f], b[f]), r)) end
  return r
end

-- the number of entries of the sorted splitters `arrs` (a rank-1 array a key field, n
-- entries) below the key `k` (an exp a field)
local function count_below(k, arrs, n)
  local pos = exp.constant(0, "i64")
  for level = SEARCH_LEVELS - 1, 0, -1 do
    local nxt = pos + 2 ^ level
    local at = L.min(nxt, math.max(n, 1)) - 1
    local here = {}
    for f = 1, #arrs do here[f] = arrs[f][at + 1] end
    pos = L.cond(L.land(L.le(nxt, n), keys_lt(here, k)), nxt, pos)
  end
  return pos
end

-- the bytes of key `at` (0-based) of a host array of keys of type kt
local function key_at(keys, kt, at)
  return util.core.array_read_bytes(keys, at * key_bytes(kt), key_bytes(kt))
end

-- samples as sent (each rank's: its samples' first field, then the next, ...) as one
-- host array a field, every rank's in rank order
local function sample_fields(got, kts)
  local rec = 0
  for f = 1, #kts do rec = rec + key_bytes(kts[f]) end
  local per, m = {}, 0
  for f = 1, #kts do per[f] = {} end
  for q = 1, #got do
    local c, at = #got[q] / rec, 0
    for f = 1, #kts do
      local kb = key_bytes(kts[f])
      per[f][q] = got[q]:sub(at + 1, at + c * kb)
      at = at + c * kb
    end
    m = m + c
  end
  local arrs = {}
  for f = 1, #kts do arrs[f] = plain.frombytes(table.concat(per[f]), kts[f], { m }) end
  return arrs, m
end

local function dist_sort_handler(name)
  return function(nd, vals, opts)
    local v, o = vals[1], nd.args[2]
    if not v.counts or nranks() == 1 then
      return { acc = lazy(nd, "out", { v.acc }, function() return plain[name](v.acc, o) end),
               counts = v.counts and { v.counts[1] } }
    end
    local P = nranks()
    local desc = type(o) == "table" and o.descending == true
    local by = type(o) == "table" and o.by or nil
    local t = nd.args[1].t
    local lo = rows_before(v.counts, me())
    local what = about(nd, vals)
    -- this rank's block in order: the values, their keys' radix keys, their global positions
    local sorted, hks, kts, pos, samples = together(what, function()
      local blk = force(v, opts)
      local order = plain.argsort(blk, o)
      local vs = plain.gather(order, blk)
      local ks, kt = sorting.radix_keys(name, by and plain.map(by, vs) or vs, desc)
      local ps = plain.map(function(i) return i + run_time(lo, i) end, order)
      local run = { plain.run({ vs, ps, unpack(ks) }, opts.localopts) }
      local hv, hp = run[1], run[2]
      local hk = { unpack(run, 3) }
      local m, pick = hp:size(), {}
      for f = 1, #kt do pick[f] = {} end
      for j = 1, P - 1 do
        if m > 0 then
          for f = 1, #kt do pick[f][j] = key_at(hk[f], kt[f], floor(j * m / P)) end
        end
      end
      for f = 1, #kt do pick[f] = table.concat(pick[f]) end
      return hv, hk, kt, hp, table.concat(pick)
    end)
    -- the splitters: P - 1 keys spread over every rank's samples, in order
    local got = B.allgather(samples)
    local parts = together(what, function()
      local arrs, m = sample_fields(got, kts)
      local sam = plain.run(plain.argsort(plain.generate({ m }, function(i) return i end),
        { by = function(i)
          local k = {}
          for f = 1, #arrs do k[f] = arrs[f][i] end
          return unpack(k)
        end }), opts.localopts)
      local sp = {}
      for f = 1, #kts do sp[f] = {} end
      local nsp = 0
      for j = 1, P - 1 do
        if m > 0 then
          local at = sam:get(floor(j * m / P) + 1) - 1
          nsp = nsp + 1
          for f = 1, #kts do sp[f][nsp] = key_at(arrs[f], kts[f], at) end
        end
      end
      local sarr = {}
      for f = 1, #kts do sarr[f] = plain.frombytes(table.concat(sp[f]), kts[f], { nsp }) end
      -- where each of this rank's (sorted) elements goes: a run per rank
      local dest = plain.generate({ pos:size() }, function(i)
        local k = {}
        for f = 1, #hks do k[f] = hks[f][i] end
        return count_below(k, sarr, nsp)
      end)
      local per = plain.permute(function(a, b) return a + b end, plain.fill({ P }, exp.constant(0, "i64")),
        function(i) return dest[i] + 1 end, plain.map(function() return exp.constant(1, "i64") end, dest))
      local split = plain.run(per, opts.localopts)
      -- each rank's run of the sorted block (and of the positions, for argsort)
      local vb, pb = packed(sorted, name), packed(pos, name)
      local veb, pts, at = util.core.type_bytes(t), {}, 0
      for q = 1, P do
        local c = split:get(q)
        pts[q] = vb:sub(at * veb + 1, (at + c) * veb) .. (name == "argsort" and pb:sub(at * 8 + 1, (at + c) * 8) or "")
        at = at + c
      end
      return pts
    end)
    local veb = util.core.type_bytes(t)
    local recv = B.alltoall(parts)
    local per = name == "argsort" and veb + 8 or veb
    local vals_s, pos_s, mine = {}, {}, 0
    for q = 1, P do
      local c = #recv[q] / per
      vals_s[q] = recv[q]:sub(1, c * veb)
      pos_s[q] = recv[q]:sub(c * veb + 1)
      mine = mine + c
    end
    local counts = {}
    for q, c in ipairs(B.allgather(tostring(mine))) do counts[q] = tonumber(c) end
    local res = together(what, function()
      local xs = plain.frombytes(table.concat(vals_s), t, { mine })
      if name == "sort" then return plain.run(plain.sort(xs, o), opts.localopts) end
      local ord = plain.argsort(xs, o)
      local gpos = plain.frombytes(table.concat(pos_s), "i64", { mine })
      return plain.run(plain.gather(ord, gpos), opts.localopts)
    end)
    return { acc = res, counts = counts }
  end
end
H.sort_dist = dist_sort_handler("sort")
H.argsort_dist = dist_sort_handler("argsort")
DESC.sort_dist = "a sample sort: each rank sorts its block, P - 1 samples of each all-gathered, " ..
  "then one all-to-all sends every element to the rank of its key range (argsort: with its " ..
  "position, 8 bytes), where the runs are sorted again"
DESC.argsort_dist = DESC.sort_dist

row_local("sort", 1)
row_local("argsort", 1)
do   -- rank 1: the sample sort; rank 2 or more: row by row
  for _, name in ipairs { "sort", "argsort" } do
    local rows, dist = wrapped[name], dist_sort_record(name)
    wrapped[name] = function(args, n)
      if is_dist(args[1]) and args[1].rank == 1 then return dist(args, n) end
      return rows(args, n)
    end
  end
end
row_local("take", 2)
row_local("drop", 2)
row_local("reverse", 1)
row_local("rotate", 2)
row_local("scanl_", 3, 2)
row_local("scanr_", 3, 2)

-- ---- running

local eval
function value_of(x, memo, opts)
  if is_dn(x) then return eval(x, memo, opts) end
  if is_da(x) then return { acc = x.block, counts = x.rows } end
  if array.is_array(x) or (type(x) == "table" and rawget(x, "node") ~= nil and rawget(x, "rank") ~= nil) then
    return { acc = x }
  end
  return nil
end

eval = function(nd, memo, opts)
  local hit = memo[nd]
  if hit then return hit end
  local vals = {}
  for i = 1, nd.n do vals[i] = value_of(nd.args[i], memo, opts) end
  local v = traced({ memo = memo, opts = opts }, H[nd.op], nd, vals, opts)
  memo[nd] = v
  return v
end

local function describe(nd, seen, out)
  if seen[nd] then return end
  seen[nd] = true
  for i = 1, nd.n do if is_dn(nd.args[i]) then describe(nd.args[i], seen, out) end end
  out[#out + 1] = ("%s (%s, rank %d) at %s: %s"):format(nd.op, nd.t, nd.rank, nd.where,
    DESC[nd.op] or "local")
end

local function explain_dist(p)
  local list = is_dist(p) and { p } or p
  local out, seen = { "-- distributed over MPI ranks (lacc.mpi): each rank runs its rows " ..
                      "on the cpu backend; communication where a step says so" }, {}
  for _, x in ipairs(list) do if is_dn(x) then describe(x, seen, out) end end
  return table.concat(out, "\n")
end

local function local_opts(opts)
  local o = {}
  if type(opts) == "table" then for k, v in pairs(opts) do o[k] = v end end
  o.backend, o.exchange = "cpu", nil
  return o
end

local function run_dist(p, opts)
  started("run")
  local list, single = p, false
  if is_dist(p) then list, single = { p }, true end
  local memo = {}
  local how = type(opts) == "table" and opts.exchange or nil
  if how ~= nil and how ~= "pairs" and how ~= "partials" then
    fail("run: option exchange must be \"pairs\" or \"partials\", got %s", util.show(how))
  end
  local o = { localopts = local_opts(opts), memo = memo, exchange = how }
  local vals, results, ends = {}, {}, {}
  for i, x in ipairs(list) do
    vals[i] = value_of(x, memo, o) or { acc = x }
    local name = is_dn(x) and x.op:gsub("_dist$", "") or is_da(x) and "a distributed array" or "a replicated array"
    ends[i] = name .. " -> " .. operand_text(x, vals[i])
  end
  -- the ranks agree on the results' types and global shapes too
  together("the end of lacc.run (" .. table.concat(ends, ", ") .. ")", function()
    for i, v in ipairs(vals) do
      local a = force(v, o)
      results[i] = v.counts and new_da(a, v.counts, a:type(), #a:shape()) or a
    end
  end)
  if single then return results[1] end
  return unpack(results, 1, #list)
end

local function has_dist(p)
  if is_dist(p) then return true end
  if type(p) == "table" and not getmetatable(p) then
    for _, x in ipairs(p) do if is_dist(x) then return true end end
  end
  return false
end

-- ---- placing data

-- rank root's parts for scatter: a header (type, shape) and the rows of each rank
local function scatter_parts(a, root, P)
  local parts = {}
  if me() + 1 ~= root then
    for q = 1, P do parts[q] = "" end
    return parts
  end
  if not array.is_array(a) then
    error(("mpi.scatter: expected a host array on rank %d, got %s"):format(root, util.describe(a)), 0)
  end
  local sh = a:shape()
  if #sh < 1 then error("mpi.scatter: expected an array of rank 1 or more, got rank 0", 0) end
  local counts = balanced(sh[1], P)
  local s = packed(a, "mpi.scatter")
  local rowbytes = sh[1] > 0 and #s / sh[1] or 0
  local head = a:type() .. "\n" .. table.concat(sh, ",") .. "\n"
  local at = 0
  for q = 1, P do
    parts[q] = head .. s:sub(at * rowbytes + 1, (at + counts[q]) * rowbytes)
    at = at + counts[q]
  end
  return parts
end

-- scatter(a [, root]): rank root's host array (1-based, default 1; the other ranks pass
-- nil) in balanced blocks of rows, one per rank (collective)
function M.scatter(a, root)
  started("scatter")
  root = root or 1
  local P = nranks()
  if not util.is_integer(root) or root < 1 or root > P then
    fail("mpi.scatter: expected a rank from 1 to %d, got %s", P, util.show(root))
  end
  -- the parts made before the agreement: a root that cannot make them (no array, a freed
  -- one, elements of a sum type, which have no packed form) fails there, not alone
  local ok, parts = pcall(scatter_parts, a, root, P)
  local err = not ok and ("mpi.scatter: " .. tostring(parts):gsub("^mpi%.scatter: ", ""):gsub(" %(at [^)]*%)$", "")) or nil
  local first, text = agree_on(("lacc.mpi.scatter from rank %d"):format(root), not ok, err)
  if first then error(text .. " (at " .. util.where() .. ")", 0) end
  local got = B.alltoall(parts)[root]
  local t, shs, data = got:match("^([^\n]*)\n([^\n]*)\n(.*)$")
  local sh = {}
  for e in shs:gmatch("%d+") do sh[#sh + 1] = tonumber(e) end
  local counts = balanced(sh[1], P)
  local lsh = local_shape(sh, counts[me() + 1])
  return new_da(plain.frombytes(data, t, lsh), counts, t, #sh)
end

-- from_blocks(block): this rank's block as its rows of a distributed array (collective:
-- the ranks' row counts are all-gathered; their other extents and types must agree)
function M.from_blocks(block)
  started("from_blocks")
  -- what this rank sends, made before the agreement (a freed block fails there)
  local ok, sh = pcall(function()
    if not array.is_array(block) then
      error(("mpi.from_blocks: expected a host array, got %s"):format(util.describe(block)), 0)
    end
    local shape = block:shape()
    if #shape < 1 then error("mpi.from_blocks: expected an array of rank 1 or more, got rank 0", 0) end
    return shape
  end)
  local err = not ok and ("mpi.from_blocks: " .. tostring(sh):gsub("^mpi%.from_blocks: ", ""):gsub(" %(at [^)]*%)$", "")) or nil
  local first, text = agree_on("lacc.mpi.from_blocks", not ok, err)
  if first then error(text .. " (at " .. util.where() .. ")", 0) end
  local sig = block:type() .. ":" .. table.concat(sh, ",", 2)
  local got = B.allgather(sh[1] .. ";" .. sig)
  local counts, first_sig = {}, got[1]:match("^%d+;(.*)$")
  for q = 1, #got do
    local rows, s = got[q]:match("^(%d+);(.*)$")
    if s ~= first_sig then   -- every rank sees every block: the same error on all
      fail("mpi.from_blocks: rank 1's block is %s, rank %d's %s (types and extents past the first must agree)",
        first_sig, q, s)
    end
    counts[q] = tonumber(rows)
  end
  return new_da(block, counts, block:type(), #sh)
end

-- load(path): a .npy file, each rank reading its own rows (scalar dtypes, C order); other
-- files are read whole by each rank, which keeps its rows
local NPY = { ["b1"] = "bool", ["i1"] = "i8", ["i2"] = "i16", ["i4"] = "i32", ["i8"] = "i64",
              ["u1"] = "u8", ["u2"] = "u16", ["u4"] = "u32", ["u8"] = "u64", ["f4"] = "f32", ["f8"] = "f64" }
local function npy_header(f)
  local magic = f:read(6)
  if magic ~= "\147NUMPY" then return nil end
  local ver = f:read(2)
  if not ver then return nil end
  local nlen = ver:byte(1) == 1 and 2 or 4
  local lb = f:read(nlen)
  if not lb or #lb ~= nlen then return nil end
  local hlen = 0
  for i = nlen, 1, -1 do hlen = hlen * 256 + lb:byte(i) end
  local h = f:read(hlen)
  if not h then return nil end
  local descr = h:match("'descr':%s*'([^']*)'")
  local fortran = h:match("'fortran_order':%s*(%a+)")
  local shs = h:match("'shape':%s*%(([^)]*)%)")
  if not descr or not shs or fortran ~= "False" then return nil end
  local order, code = descr:sub(1, 1), descr:sub(2)
  local little = true   -- LuaJIT has no string.pack; lacc's machines are little-endian
  if string.pack then little = string.pack("=i2", 1):byte(1) == 1 end
  if not NPY[code] or (order == ">" and little) or (order == "<" and not little) then return nil end
  local sh = {}
  for e in shs:gmatch("%d+") do sh[#sh + 1] = tonumber(e) end
  return NPY[code], sh, 6 + 2 + nlen + hlen
end

function M.load(path)
  started("load")
  if type(path) ~= "string" then fail("mpi.load: expected a file name, got %s", util.describe(path)) end
  local P = nranks()
  local f = io.open(path, "rb")
  local t, sh, off
  if f then t, sh, off = npy_header(f) end
  if not (f and t and #sh >= 1) then
    if f then f:close() end
    local a = together("lacc.mpi.load (a file read whole)", function() return plain.load(path) end)
    if #a:shape() < 1 then fail("mpi.load: %s holds an array of rank 0", path) end
    local counts = balanced(a:shape()[1], P)
    local lo = rows_before(counts, me())
    local spec = { { lo + 1, lo + counts[me() + 1] } }
    for d = 2, #a:shape() do spec[d] = L.all end
    return new_da(plain.run(L.slice(a, spec), { backend = "cpu" }), counts, a:type(), #a:shape())
  end
  local counts = balanced(sh[1], P)
  local lo, rows = rows_before(counts, me()), counts[me() + 1]
  local rowbytes = util.core.type_bytes(t) * product(sh, 2)
  f:seek("set", off + lo * rowbytes)
  local data = rows * rowbytes > 0 and f:read(rows * rowbytes) or ""
  f:close()
  local ok = data and #data == rows * rowbytes
  local first, text = agree_on(("lacc.mpi.load (.npy of %s {%s})"):format(t, table.concat(sh, ",")), not ok,
    ("mpi.load: %s is shorter than its header says"):format(path))
  if first then error(text, 0) end
  -- a bool byte other than 0 reads as 1 (as frombytes does; no NUL in the pattern: LuaJIT)
  if t == "bool" then data = data:gsub("[\1-\255]", "\1") end
  return new_da(plain.frombytes(data, t, local_shape(sh, rows)), counts, t, #sh)
end

-- ---- install: lacc's combinators learn distributed arguments

local NOT_YET = { "replicate", "slice", "sort_by_key", "append", "interleave", "concat", "argmax",
  "argmin", "stencil2", "matmul", "foldSeg", "fold1Seg", "scanl1Seg", "scanr1Seg", "scanlSeg",
  "scanrSeg", "scanlSeg_", "scanrSeg_", "acond", "awhile", "write_png",
  "partition", "unit", "the", "compile", "iota", "shape", "size" }

local function not_yet(name)
  return function()
    fail("%s: not yet distributed (lacc.mpi): gather the array first (a:allgather(), or " ..
         "lacc.run it and use :gather()); see the guide's \"Many machines: MPI\"", name)
  end
end

function M.install(lacc)
  L = lacc
  for k, v in pairs(lacc) do plain[k] = v end
  lacc.mpi = M
  -- element-wise: all arrays aligned, no communication
  local function element(name)
    local f = lacc[name]
    lacc[name] = function(...)
      local n = select("#", ...)
      local args = { ... }
      if not any_dist(args, n) then return f(...) end
      return record(name, 1, f, args, n)
    end
  end
  for _, name in ipairs { "map", "imap", "zipWith", "zip", "where", "compute" } do element(name) end
  for k = 3, 9 do element("zipWith" .. k) end
  local unzip = lacc.unzip
  lacc.unzip = function(xs, ...)
    if not is_dist(xs) then return unzip(xs, ...) end
    local k = #{ plain.unzip(stand(xs)) }
    return record("unzip", k, unzip, { xs }, 1)
  end
  for name, w in pairs(wrapped) do
    local f = lacc[name]
    local call = function(...)
      local n = select("#", ...)
      local args = { ... }
      if any_dist(args, n) then
        local r = { w(args, n) }
        if r[1] ~= nil then return unpack(r) end
      end
      return f(...)
    end
    if name == "all" then
      local mt = getmetatable(f)
      local old = mt.__call
      mt.__call = function(self, ...)
        local n = select("#", ...)
        local args = { ... }
        if any_dist(args, n) then return w(args, n) end
        return old(self, ...)
      end
    else
      lacc[name] = call
    end
  end
  for _, name in ipairs(NOT_YET) do
    local f = lacc[name]
    if f then
      local deny = not_yet(name)
      lacc[name] = function(...)
        local n = select("#", ...)
        if any_dist({ ... }, n) then deny() end
        return f(...)
      end
    end
  end
  local run, explain = lacc.run, lacc.explain
  lacc.run = function(p, opts)
    if has_dist(p) then return run_dist(p, opts) end
    if type(opts) == "table" and opts.backend == "mpi" then
      return run(p, local_opts(opts))
    end
    return run(p, opts)
  end
  lacc.explain = function(p, opts)
    if has_dist(p) then return explain_dist(p) end
    return explain(p, opts)
  end
end

return M
