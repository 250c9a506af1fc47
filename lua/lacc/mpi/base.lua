-- lacc.mpi.base: what the parts of lacc.mpi share (lacc/mpi.lua is the module).
-- Owns: MPI itself through the binding (lacc.mpi_core on Lua 5.4, lacc.mpi_ffi on LuaJIT),
-- the ranks' agreement before every exchange, the byte collectives, distributions (rows
-- per rank), distributed host arrays and programs (recorded combinators), a node's
-- run-time values and local programs, and running a distributed program: each node by
-- its combinator's handler (H, filled by lacc/mpi/*.lua), with the description explain
-- prints (DESC); when a loop's turn may release an array it made (Release: no program
-- still to run reads it).
-- Must not: know a combinator's communication (its handler's file does).
local util = require "lacc.util"
local exp = require "lacc.exp"
local array = require "lacc.array"
local collection = require "lacc.collection"
local sorting = require "lacc.sort"
local types = require "lacc.types"
local accs = require "lacc.acc"
local fail = util.fail
local unpack = table.unpack or unpack
local floor = math.floor
-- table.pack where LuaJIT lacks it
local function pack(...) return { n = select("#", ...), ... } end

local M = {}
local L            -- lacc itself (install)
local plain = {}   -- lacc's functions before this module wrapped them
local B            -- the binding, once init has run

local C = {}
-- Whether this Lua state has made a distributed array or program: until it has, lacc's
-- combinators wrapped by lacc.mpi (and lacc.mpi.scalars) call lacc's own at once (their
-- checks of arguments for distributed values cost a tenth to a fifth of building a
-- small program); values of distributed programs come only from such arrays.
C.live = false

-- lacc itself, for the handlers: through C.L, which reads the module installed (install)
function C.set_lacc(lacc) L = lacc end
C.L = setmetatable({}, { __index = function(_, k) return L[k] end })

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
-- simulate(P, r): this process plays rank r of P over a transport that sends nothing and
-- counts what would be sent (lacc.mpi.stats); the results are not the program's
function M.simulate(P, r)
  if not (util.is_integer(P) and P >= 1 and util.is_integer(r) and r >= 1 and r <= P) then
    fail("mpi.simulate: expected a rank count P >= 1 and a rank from 1 to P, got %s and %s",
         util.show(P), util.show(r))
  end
  if B and not B.simulated and B.initialized() then
    fail("mpi.simulate: MPI is running in this process (lacc.mpi.init): a simulation replaces it")
  end
  B = require("lacc.mpi.simulated").new(P, r)
  B.simulated = true
  return r, P
end
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
-- the byte collectives (after an agreement: agree_on), for the handlers
local function allgather(s) return B.allgather(s) end
-- s to rank `to` (0-based, nil: none) and a message from rank `from` (nil: none); `like`:
-- what the message resembles, for a simulated transport (lacc.mpi.simulate)
local function exchange(to, s, from, like) return B.exchange(to, s, from, like) end
local function reserve(n) return B.reserve(n) end
-- The room for the largest part another rank sends this one (need[q + 1]: the bytes from
-- rank q), reserved inside the agreement before a point-to-point exchange (swapped)
local function reserve_for(need)
  local room = 1
  for q, k in pairs(need) do if q ~= B.rank() + 1 then room = math.max(room, k) end end
  reserve(room)
end
-- Each rank's part for every rank (parts[q + 1]; this rank's own kept), point to point: a
-- message each way with each rank this one sends to or reads from (need[q + 1] bytes;
-- an empty message where a side has nothing: both sides know the pair), in rank order,
-- deadlock-free as every rank meets its pairs in the one global order. What each rank
-- sent this one ("" where nothing).
local function swapped(parts, need)
  local got, r = {}, B.rank()
  for q = 0, B.size() - 1 do
    local k = need[q + 1] or 0
    if q == r then
      got[q + 1] = parts[q + 1]
    elseif parts[q + 1] ~= "" or k > 0 then
      got[q + 1] = exchange(q, parts[q + 1], q)
    else
      got[q + 1] = ""
    end
  end
  return got
end
-- like: what each rank's part for this one resembles, where the caller knows (for a
-- simulated transport)
local function alltoall(parts, like) return B.alltoall(parts, like) end

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
-- rows before each rank at once: starts[q + 1] for rank q (0-based), starts[P + 1] the
-- total (rows_before is a sum a call: O(P))
local function starts_of(counts)
  local st, acc = {}, 0
  for q = 1, #counts do st[q], acc = acc, acc + counts[q] end
  st[#counts + 1] = acc
  return st
end
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

local DA = { __lacc_what = "a distributed array (lacc.mpi)" }       -- metatable
local DN = { __lacc_what = "a distributed program (lacc.mpi)" }      -- of distributed programs
local function is_da(x) return getmetatable(x) == DA end
local function is_dn(x) return getmetatable(x) == DN end
local function is_dist(x) return is_da(x) or is_dn(x) end
M.is_distributed = is_dist

local damethods, dnmethods = {}, {}

local function new_da(block, counts, t, rank)
  -- (rows: the row counts; a field named counts would hide the method)
  C.live = true
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

-- Arrays cross ranks as bytes: packed (lacc.frombytes' form) for types without a sum,
-- the core's leaves form for those with one (a u32 constructor index, then every
-- alternative's leaves: lacc_array_to_leaves).
local with_sum = setmetatable({}, { __index = function(t, ty)
  local pt = types.parse(ty)
  t[ty] = pt ~= nil and pt.has_sum == true
  return t[ty]
end })

local function packed(a, what)
  local ok, s = pcall(a.type, a)   -- a freed array: tobytes says so
  if ok and with_sum[s] then ok, s = pcall(util.core.array_to_leaves, a)
  else ok, s = pcall(a.tobytes, a) end
  if not ok then fail("%s: %s", what, (tostring(s):gsub(" %(at [^)]*%)$", ""))) end
  return s
end

-- an array of type t (a signature) and shape from bytes that packed made
local function unpacked(s, t, shape)
  if not with_sum[t] then return plain.frombytes(s, t, shape) end
  local ok, a = pcall(util.core.array_from_leaves, t, shape, s, #s)
  if not ok then fail("frombytes: %s", (tostring(a):gsub(" %(at [^)]*%)$", ""))) end
  return a
end

-- bytes of one element as packed sends it
local function elem_bytes(t) return util.core.type_leaf_bytes(t) end

-- the whole array on every rank (collective)
-- (the block packed before the ranks agree: one that cannot pack it fails there, not alone)
local operand_text
function damethods.allgather(self)
  started("allgather")
  local s = together("allgather of " .. operand_text(self), packed, self.block, "allgather")
  local parts = B.allgather(s)
  return unpacked(table.concat(parts), self.t, self:shape())
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
  return unpacked(table.concat(got), self.t, self:shape())
end

-- xs[i] / xs:at(i, ...) of a distributed array inside a function: while lacc.mpi traces
-- a combinator's function (`tracing`: "record" while typing it on stand-ins, else the
-- run's memo and options), a read of this rank's own rows; elsewhere an error.
local tracing
local recording   -- while a node is recorded: the nodes its functions read (xs[i])
local value_of, stand
-- x's value where a function (or a value of lacc.mpi.scalars) reads it: nil while a node
-- is recorded (x noted among the node's reads), else its run-time value (noted among the
-- reads of the program being built: lazy). `what`: the reader, for the errors; `rows`:
-- it reads the rows themselves (not the global shape, nor a rank-0 value), which no
-- function of a program every rank computes alike may.
local function read_value(x, what, rows)
  if tracing == nil then
    fail("%s: a distributed array (lacc.mpi) read outside a distributed program's " ..
         "function: run the program, or a:allgather() first", what)
  end
  if tracing == "record" then
    if recording and is_dn(x) then recording[#recording + 1] = x end
    return nil
  end
  local v = value_of(x, tracing.memo, tracing.opts)
  if rows and v.counts and tracing.replicated then
    fail("%s: a distributed array read inside the function of %s, a program every rank " ..
         "computes alike (of values of distributed programs): its rows are on other ranks too; " ..
         "gather them (backpermute, gather) or run the program first", what, tracing.replicated)
  end
  -- (with its rows: a read's index is shifted by the rows before this rank's, a constant)
  if tracing.reads then tracing.reads[#tracing.reads + 1] = { x, v.acc, v.counts } end
  return v
end
local function read(self, ...)
  local v = read_value(self, "index", true)
  if v == nil then return L.index(stand(self), ...) end
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
    x.standin = x.standin or C.empty(x.t, x.rank)
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
  C.live = true
  return setmetatable({ op = op, args = args, n = n, id = next_id, where = util.where(),
                        stand = s, t = s.t, rank = s.rank, res = res_index }, DN)
end

DN.__index = index_meta({})
DN.__tostring = function(self) return ("lacc.mpi.program<%s, rank %d>"):format(self.t, self.rank) end
DN.__concat = function(a, b) return L.append(a, b) end
DA.__concat = DN.__concat   -- a .. b of run results too, as of host arrays
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

-- f(...) with `tracing` set to how and util.place to place (the place the nodes it
-- builds take: util.where), both restored after
local function traced(how, place, f, ...)
  local saved, saved_place = tracing, util.place
  tracing, util.place = how, place
  local res = pack(pcall(f, ...))
  tracing, util.place = saved, saved_place
  if not res[1] then error(res[2], 0) end
  return unpack(res, 2, res.n)
end

-- lacc.mpi.scalars' values of distributed programs among a node's arguments, as the
-- expressions they are now (scalars.lua sets it; none before)
C.resolved = function(args) return args end
local function record(op, n_res, plainf, args, nargs)
  local sargs = {}
  for i = 1, nargs do sargs[i] = stand(args[i]) end
  local typed = plainf
  plainf = function(...) return typed(unpack(C.resolved({ ... }, nargs), 1, nargs)) end
  local saved, reads = recording, {}
  recording = reads
  local res = pack(pcall(traced, "record", util.place, plainf, unpack(sargs, 1, nargs)))
  recording = saved
  if not res[1] then error(res[2], 0) end
  -- (n_res nil: as many as the combinator gives, and none where it gives a scalar)
  if n_res == nil and exp.is_exp(res[2]) then return nil end
  n_res = n_res or res.n - 1
  if n_res == 1 then
    local nd = node(op, args, nargs, nil, res[2])
    nd.reads = reads
    return nd
  end
  local nodes = {}
  local shared = { }
  for i = 1, n_res do
    nodes[i] = node(op, args, nargs, i, res[i + 1])
    nodes[i].group, nodes[i].reads = shared, reads
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
  local d = exp.deferred(v)
  if d then v = d.__lacc_exp(v) end
  if exp.is_exp(v) then return v.t == "i64" and v or L.cast(v, "i64") end
  return exp.constant(v, "i64")
end

-- ---- run-time values: { acc = program or host array, counts = rows per rank | nil }
-- (nil counts: the same on every rank, as a plain program)

local function force(v, opts)
  if not array.is_array(v.acc) then v.acc = plain.run(v.acc, opts.localopts) end
  return v.acc
end

-- Several values run now, in one local program: what they compute in common (a loop
-- turn's arrays all read its search direction, say) is computed once, and sibling maps
-- over the same rows are written by one loop.
local function force_all(vs, opts)
  local progs, at = {}, {}
  for _, v in ipairs(vs) do
    if not array.is_array(v.acc) and not at[v.acc] then
      progs[#progs + 1] = v.acc
      at[v.acc] = #progs
    end
  end
  if #progs > 1 then
    local out = { plain.run(progs, opts.localopts) }
    for _, v in ipairs(vs) do
      if not array.is_array(v.acc) then v.acc = out[at[v.acc]] end
    end
  end
  for _, v in ipairs(vs) do force(v, opts) end
end

-- the rank of a host array, a program or a distributed array
local function rank_of(x) return array.is_array(x) and #x:shape() or x.rank end
-- a plain array program (lacc.acc's), not distributed
local function is_program(x) return type(x) == "table" and rawget(x, "node") ~= nil and rawget(x, "rank") ~= nil end
-- an array of any kind: distributed, host, or a plain program
local function arrayish(x) return is_dist(x) or array.is_array(x) or is_program(x) end
-- a list of arrays (a plain Lua table), not an array
local function is_list(x) return type(x) == "table" and getmetatable(x) == nil end
-- the same, lists of arrays among args counting too (concat's parts, awhile's arrays)
local function dist_in(args, n)
  if any_dist(args, n) then return true end
  for i = 1, n do
    if is_list(args[i]) and any_dist(args[i], #args[i]) then return true end
  end
  return false
end

-- rows [a, b) (0-based) of a replicated program or host array, as a program (by
-- `via`'s slice: lacc's own where a gradient's tape must see it, else plain)
local function rows_of(acc, a, b, via)
  local spec = { { a + 1, b } }
  for d = 2, rank_of(acc) do spec[d] = L.all end
  return (via or plain).slice(acc, spec)
end
-- p with a new outer dimension of 1 (a rank's one row of the partials)
local function with_outer(p)
  local spec = { 1 }
  for d = 1, p.rank do spec[d + 1] = L.all end
  return plain.replicate(spec, p)
end

-- Host arrays' element types and shapes, as one string each (a freed array's: false),
-- kept while the array lives: a loop turn's arrays are compared as new, then as old
local signatures = setmetatable({}, { __mode = "k" })
local function signature(a)
  local sig = signatures[a]
  if sig == nil then
    local ok, t = pcall(util.core.array_type, a)
    local ok2, sh = pcall(util.core.array_shape, a)
    sig = ok and ok2 and t .. ":" .. table.concat(sh, ",") or false
    signatures[a] = sig
  end
  return sig
end
-- An array a loop made that no program still to run reads: its memory released now
-- (lacc_array_discard), for the turn's later arrays and the next turn's to take while it
-- is still in the caches (the collector would free it turns later: a CG turn's kernels
-- ran 1.3x slower over arrays always new). The array stays, its elements gone, for the
-- programs of last turn that hold it, which the next turn rebinds (by its signature,
-- kept first).
local function discard(a)
  signature(a)
  pcall(util.core.array_discard, a)
end

-- Whether host arrays a and b are alike for a rebinding: one element type and shape.
local function alike(a, b)
  if not (array.is_array(a) and array.is_array(b)) then return false end
  local sa = signature(a)
  return sa and sa == signature(b)
end

-- Whether two programs' static shapes (acc.lua: known while built) are both unknown or equal.
local function same_static(a, b)
  local sa, sb = accs.static_shape(a), accs.static_shape(b)
  if sa == nil or sb == nil then return sa == sb end
  return #sa == #sb and same_counts(sa, sb)
end

-- Last time's program c.out over this time's values, where each input (and each array
-- its functions read: reads_now) is last time's, or a host array of the same element type
-- and shape, or a program of the same type, rank and static shape, one old value for one
-- new: the graph rebound to them all at once (core: lacc_acc_rebind). The programs that
-- stay are kept whole (an array rebound may be read inside one of them too: the first
-- turn's r.r is the b.b its condition also reads), an array that stays is not one
-- rebound, and the core refuses a value rebound that the graph does not read (the build
-- took it some other way). Else nil.
local function rebound(c, inputs, reads_now)
  local old_a, new_a, old_n, new_n, kept = {}, {}, {}, {}, {}
  local function pair(old, new)
    local olds, news
    if rawequal(old, new) then
      if accs.is_acc(old) then olds, news, old, new = old_n, new_n, old.node, new.node
      elseif array.is_array(old) then kept[#kept + 1] = old; return true
      else return true end
    elseif alike(old, new) then
      olds, news = old_a, new_a
    elseif accs.is_acc(old) and accs.is_acc(new) and old.t == new.t and old.rank == new.rank and
           same_static(old, new) then
      olds, news, old, new = old_n, new_n, old.node, new.node
    else
      return false
    end
    for k = 1, #olds do
      if rawequal(olds[k], old) then return rawequal(news[k], new) end
    end
    olds[#olds + 1], news[#news + 1] = old, new
    return true
  end
  for i = 1, #inputs do
    if not pair(c.inputs[i], inputs[i]) then return nil end
  end
  for k, r in ipairs(c.reads) do
    if not pair(r[2], reads_now[k]) then return nil end
  end
  for _, a in ipairs(kept) do
    for k = 1, #old_a do if rawequal(old_a[k], a) then return nil end end
  end
  local na, nn = #old_a, #old_n
  if na == 0 and nn == 0 or not accs.is_acc(c.out) then return nil end
  local args = {}
  for _, list in ipairs { old_a, new_a, old_n, new_n } do
    for _, x in ipairs(list) do args[#args + 1] = x end
  end
  local ok, rebound_node = pcall(util.core.node_rebind, c.out.node, na, nn, unpack(args))
  if not ok then return nil end
  return accs.remember(accs.wrap(rebound_node), accs.static_shape(c.out))
end

-- A program of a node built by build() from `inputs` (arrays, programs, strings,
-- numbers): last run's program where the inputs are the same, so that a run of the same
-- distributed program over the same arrays reuses its local programs' compiled kernels
-- (a program built anew is traced, optimised and looked up again).
-- The distributed arrays a build read inside its functions (xs[i] of a rank-0 result,
-- say) count as inputs too: in an awhile's body the same node is built again each turn,
-- and a read of this turn's value must not find last turn's program.
-- With `rebind` (a build whose graph depends on its host arrays, and on the arrays its
-- functions read, only through their uses, given their element types and shapes: an
-- element-wise map's), last run's program over new arrays of the same types and shapes is
-- rebound to them rather than traced again: an awhile's turns, each over new arrays.
local function lazy(nd, tag, inputs, build, rebind)
  local cache = nd.cache or {}
  nd.cache = cache
  local c = cache[tag]
  if c and #c.inputs == #inputs then
    local same = true
    for i = 1, #inputs do
      if not rawequal(c.inputs[i], inputs[i]) then same = false; break end
    end
    local now, rows, vs = {}, true, {}
    for k, r in ipairs(c.reads) do
      if not same and not rebind then break end
      local v = type(tracing) == "table" and value_of(r[1], tracing.memo, tracing.opts)
      vs[k], now[k] = v, v and v.acc
      same = same and v and rawequal(v.acc, r[2])
      rows = rows and v and (r[3] == nil) == (v.counts == nil) and (r[3] == nil or same_counts(r[3], v.counts))
    end
    if same then return c.out end
    local out = rebind and rows and #now == #c.reads and rebound(c, inputs, now)
    if out then
      local reads = {}
      for k, r in ipairs(c.reads) do reads[k] = { r[1], now[k], vs[k].counts } end
      cache[tag] = { inputs = inputs, out = out, reads = reads }
      return out
    end
  end
  local reads = {}
  local outer = tracing
  if type(outer) == "table" then
    tracing = { memo = outer.memo, opts = outer.opts, reads = reads, replicated = outer.replicated }
  end
  local ok, out = pcall(build)
  tracing = outer
  if not ok then error(out, 0) end
  cache[tag] = { inputs = inputs, out = out, reads = reads }
  return out
end
local function key_of(counts) return counts and table.concat(counts, ",") .. "@" .. me() or "replicated" end

-- v moved to rows per rank `counts` (their total at most v's: rows past it go nowhere):
-- each rank sends the rows others own (what: the step, for the agreement)
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
  return { acc = unpacked(got, t, sh), counts = counts }
end

-- Element-wise combinators: aligned blocks, each rank alone. The result's outer extent is
-- the least of its operands' (as one process intersects them: a distributed operand's
-- total, a host array's extent); its rows those of the first distributed operand of that
-- extent, else balanced; the others' rows moved there (redistribute: the rows past the
-- extent go nowhere), a replicated operand's cut from every rank's copy.
-- The outer extent of a replicated program beside distributed operands: known while it
-- was built, else its shape run now (its elements need not be: inside an agreement, as
-- running may fail), the same on every rank
local function program_extent(acc, what, opts)
  local s = accs.static_shape(acc)
  if s then return s[1] end
  return together(what, function()
    return plain.run(plain.unit(plain.shape(acc)[1]), opts.localopts):get()
  end)
end

local function aligned(nd, vals, opts)
  local m, target, dist = nil, nil, false
  for i = 1, nd.n do dist = dist or (vals[i] ~= nil and vals[i].counts ~= nil) end
  for i = 1, nd.n do
    local v = vals[i]
    local len = v and (v.counts and total(v.counts) or
                       (array.is_array(v.acc) and rank_of(v.acc) >= 1 and v.acc:shape()[1])) or nil
    if dist and v and not len and is_program(v.acc) and v.acc.rank >= 1 then
      len = program_extent(v.acc, about(nd, vals, ", a replicated operand's extent"), opts)
    end
    if len and (m == nil or len < m) then m = len end
  end
  for i = 1, nd.n do
    local v = vals[i]
    if dist and not target and v and v.counts and total(v.counts) == m then target = v.counts end
  end
  if dist and not target then target = balanced(m, nranks()) end
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
      args[i] = lazy(nd, "rows" .. i, { v.acc, lo, hi }, function() return rows_of(v.acc, lo, hi) end, true)
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
    end, true)
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

-- ---- running

local eval
function value_of(x, memo, opts)
  if is_dn(x) then return eval(x, memo, opts) end
  if is_da(x) then return { acc = x.block, counts = x.rows } end
  if array.is_array(x) or is_program(x) then
    return { acc = x }
  end
  return nil
end

-- ops whose handler evaluates its arguments itself (an acond's branch not taken is not run)
local LAZY = {}

-- Each edge of the graph reachable from roots (a list), edge(a, by): node `by` reads a,
-- as an argument or inside its functions (the(alpha)); with inner, the nodes of the loops
-- in it (nd.inner) too.
local function each_edge(roots, inner, edge)
  local seen = {}
  local visit
  local function reads(a, by)
    if is_dn(a) then
      edge(a, by)
      visit(a)
    end
  end
  visit = function(nd)
    if seen[nd] then return end
    seen[nd] = true
    for i = 1, nd.n do reads(nd.args[i], nd) end
    for _, a in ipairs(nd.reads or {}) do reads(a, nd) end
    if inner then
      for _, x in ipairs(nd.inner or {}) do if is_dn(x) then visit(x) end end
    end
  end
  for _, x in ipairs(roots) do if is_dn(x) then visit(x) end end
end

-- How many times each node is read by the others reachable from roots (a list), as an
-- argument or inside their functions (the(alpha)), each root counting once: a node read
-- twice is materialised once (shared), as sharing recovery does in one process, rather
-- than each reader's local program computing it again (a CG turn's stencil ran four
-- times, its residual three). A loop's own graph (nd.inner) is counted apart, by the loop.
local function uses_of(roots)
  local count = {}
  for _, x in ipairs(roots) do if is_dn(x) then count[x] = (count[x] or 0) + 1 end end
  each_edge(roots, false, function(a) count[a] = (count[a] or 0) + 1 end)
  return count
end

-- v (a node's value) run now where the node is read more than once. A failure leaves it
-- a program: its readers then fail as before, each inside its own agreement (no rank
-- raises alone here, outside the collectives' step).
local function shared(nd, v, opts)
  -- (on one rank nothing is exchanged: a loop's turn stays one program, whose sharing
  -- recovery computes such a value once)
  if nranks() == 1 then return end
  if not (opts.uses and (opts.uses[nd] or 0) > 1 and v and v.acc) then return end
  if array.is_array(v.acc) or not is_program(v.acc) then return end
  local ok, a = pcall(plain.run, v.acc, opts.localopts)
  if ok then
    v.acc = a
    if opts.release then opts.release:made(a, nd) end
  end
end

-- ---- a loop's arrays released as it goes (lacc/mpi/control.lua's awhile: opts.release)

-- Who reads each node of a loop's graph (roots: its condition and body): the nodes that
-- take it as an argument or read it inside their functions; a loop inside it, the nodes
-- of its own graph that read it (never evaluated in the outer turn: what they read stays
-- until the turn's end).
local function readers_of(roots)
  local readers = {}
  each_edge(roots, true, function(a, by)
    local list = readers[a] or {}
    readers[a] = list
    list[#list + 1] = by
  end)
  return readers
end

-- A turn's arrays (made by its runs, or last turn's the loop made), each with the nodes
-- whose value it is, are released once every node that reads those is done with it
-- (done, below): no program still to run reads it. So the turn's later arrays take its
-- memory while it is warm (a CG turn's search direction update takes the stencil
-- product's, as one process's awhile does). Not the loop's roots' (carried to the next
-- turn, or its condition). Checked when a node that reads a candidate is evaluated.
local Release = {}
Release.__index = Release
function Release:made(a, nd)
  self.new[a] = true
  self:candidate(a, nd)
end
function Release:candidate(a, nd)
  local list = self.cands[a] or {}
  self.cands[a] = list
  list[#list + 1] = nd
  local arrays = self.by_node[nd] or {}
  self.by_node[nd] = arrays
  arrays[a] = true
  self:check(a)
end
-- whether node r, a reader of a's nodes, is done with it: evaluated this turn, its value
-- not a itself, and an array when evaluated (run then), or a program whose own readers
-- are all done (it was part of theirs), not a root (run at the turn's end)
function Release:done(r, a, seen)
  if seen[r] ~= nil then return seen[r] end
  seen[r] = false
  local rv = rawget(self.memo, r)
  if not rv or rawequal(rv.acc, a) then return false end
  if not self.was_array[r] then
    if self.roots[r] then return false end
    for _, q in ipairs(self.readers[r] or {}) do
      if not self:done(q, a, seen) then return false end
    end
  end
  seen[r] = true
  return true
end
function Release:dead(a, nodes)
  local seen = {}
  for _, n in ipairs(nodes) do
    if self.roots[n] then return false end
    for _, r in ipairs(self.readers[n] or {}) do
      if not self:done(r, a, seen) then return false end
    end
  end
  return true
end
function Release:check(a)
  local nodes = self.cands[a]
  if not (nodes and self:dead(a, nodes)) then return end
  self.cands[a], self.new[a], self.owned[a] = nil, nil, nil
  for _, n in ipairs(nodes) do self.by_node[n][a] = nil end
  discard(a)
end
-- the candidates that are node x's values, checked again
function Release:recheck(x)
  for a in pairs(self.by_node[x] or {}) do self:check(a) end
end
-- nd evaluated (its value v): the candidates it reads may be done with
function Release:evaluated(nd, v)
  self.was_array[nd] = v ~= nil and array.is_array(v.acc)
  for i = 1, nd.n do self:recheck(nd.args[i]) end
  for _, x in ipairs(nd.reads or {}) do self:recheck(x) end
end
-- the release of one turn: memo the turn's, loop { readers, roots }, new (this turn's
-- arrays) and owned (the loop's, from earlier turns) tables of arrays
local function release_of(memo, loop, new, owned)
  return setmetatable({ memo = memo, readers = loop.readers, roots = loop.roots, new = new,
                        owned = owned, cands = {}, by_node = {}, was_array = {} }, Release)
end

-- a program every rank computes alike from values of distributed programs (lacc.the,
-- lacc.shape, lacc.size of one outside a function: lacc.mpi.scalars), its arguments
-- those values as they are in this run
local function replicated(nd, _, opts)
  return { acc = lazy(nd, "out", {}, function()
    local r = { nd.fn(unpack(C.resolved(nd.args, nd.n), 1, nd.n)) }
    return r[nd.res or 1]
  end) }
end
DESC.replicated = "every rank alike (of values of distributed programs, lacc.the, lacc.shape, " ..
  "lacc.size: no communication)"

-- the nodes being evaluated, innermost last: where util.place is not set (a replicated
-- node's own code, around the user's function) the programs built on each rank take the
-- node's own place too (util.where stops at eval's frame), as one process's combinator
-- would, rather than walking every frame down to lacc.run's
local evaluating = {}
eval = function(nd, memo, opts)
  local hit = memo[nd]
  if hit then return hit end
  local depth = #evaluating + 1
  evaluating[depth] = nd
  local vals = {}
  if not LAZY[nd.op] then
    for i = 1, nd.n do vals[i] = value_of(nd.args[i], memo, opts) end
  end
  -- what its functions read, on every rank before any handler's path can differ
  for _, x in ipairs(nd.reads or {}) do value_of(x, memo, opts) end
  local how = { memo = memo, opts = opts, replicated = nd.replicated and nd.op .. " (at " .. nd.where .. ")" }
  -- the programs a handler builds take the node's place (util.place: no walk of the
  -- stack for each); a replicated node's function is the user's, whose nodes take its lines
  local v = traced(how, not nd.replicated and nd.where or nil,
                   nd.replicated and replicated or H[nd.op], nd, vals, opts)
  shared(nd, v, opts)
  memo[nd] = v
  if opts.release then opts.release:evaluated(nd, v) end
  for k = #evaluating, depth, -1 do evaluating[k] = nil end
  return v
end
util.place_frames[eval] = function() return evaluating[#evaluating].where end

local function describe(nd, seen, out)
  if seen[nd] then return end
  seen[nd] = true
  for i = 1, nd.n do if is_dn(nd.args[i]) then describe(nd.args[i], seen, out) end end
  for _, x in ipairs(nd.inner or {}) do if is_dn(x) then describe(x, seen, out) end end
  for _, x in ipairs(nd.reads or {}) do describe(x, seen, out) end
  out[#out + 1] = ("%s (%s, rank %d) at %s: %s"):format(nd.op, nd.t, nd.rank, nd.where,
    DESC[nd.replicated and "replicated" or nd.op] or "local")
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
  if how ~= nil and how ~= "pairs" and how ~= "partials" and how ~= "tree" then
    fail("run: option exchange must be \"pairs\", \"partials\" or \"tree\", got %s", util.show(how))
  end
  local o = { localopts = local_opts(opts), memo = memo, exchange = how, uses = uses_of(list) }
  local vals, results, ends = {}, {}, {}
  for i, x in ipairs(list) do
    vals[i] = value_of(x, memo, o) or { acc = x }
    local name = is_dn(x) and x.op:gsub("_dist$", "") or is_da(x) and "a distributed array" or "a replicated array"
    ends[i] = name .. " -> " .. operand_text(x, vals[i])
  end
  -- the ranks agree on the results' types and global shapes too
  together("the end of lacc.run (" .. table.concat(ends, ", ") .. ")", function()
    force_all(vals, o)
    for i, v in ipairs(vals) do
      local a = v.acc
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


-- ---- what the handlers (lacc/mpi/*.lua) use
C.DESC = DESC
C.H = H
C.LAZY = LAZY
C.rank_of, C.is_program, C.is_list, C.arrayish = rank_of, is_program, is_list, arrayish
C.DN, C.DA = DN, DA
C.value_of = function(x, memo, opts) return value_of(x, memo, opts) end
C.read_value = read_value
C.pack, C.dist_in, C.with_outer = pack, dist_in, with_outer
-- an empty program of type t and rank `rank` (a stand-in: its type and rank, no elements)
function C.empty(t, rank)
  local z = {}
  for d = 1, rank do z[d] = 0 end
  return L.use(plain.array(t, z))
end
C.tracing_mode = function() return tracing end
C.is_dn, C.is_da = is_dn, is_da
C.uses_of = uses_of
C.readers_of, C.release_of = readers_of, release_of
C.M = M
C.about = about
C.agree_on = agree_on
C.aligned = aligned
C.any_dist = any_dist
C.array = array
C.balanced = balanced
C.collection = collection
C.exp = exp
C.explain_dist = explain_dist
C.fail = fail
C.floor = floor
C.force = force
C.force_all = force_all
C.has_dist = has_dist
C.i64 = i64
C.is_dist = is_dist
C.key_bytes = key_bytes
C.key_of = key_of
C.lazy = lazy
C.local_opts = local_opts
C.local_shape = local_shape
C.me = me
C.new_da = new_da
C.nranks = nranks
C.outer_shape = outer_shape
C.packed = packed
C.unpacked = unpacked
C.elem_bytes = elem_bytes
C.plain = plain
C.product = product
C.record = record
C.rows_before = rows_before
C.rows_of = rows_of
C.run_dist = run_dist
C.run_time = run_time
C.same_counts = same_counts
C.discard = discard
C.sorting = sorting
C.stand = stand
C.started = started
C.together = together
C.total = total
C.starts_of = starts_of
C.types = types
C.unpack = unpack
C.util = util
C.allgather, C.alltoall, C.exchange, C.reserve = allgather, alltoall, exchange, reserve
C.reserve_for, C.swapped = reserve_for, swapped
C.redistribute = redistribute
C.damethods = damethods

return C
