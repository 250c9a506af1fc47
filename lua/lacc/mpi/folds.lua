-- lacc.mpi.folds: folds and scans whose arrays are distributed (lacc.mpi).
-- Owns: reductions along the distributed dimension or over everything (each rank's
-- partial, combined in rank order by a tree of messages), along another dimension
-- (local), and scans along the distributed dimension (each rank's carry from the ranks
-- before it, by a scan of messages).
-- Must not: reorder a fold's operands (partials combine in rank order).
local C = require "lacc.mpi.base"
local unpacked, elem_bytes = C.unpacked, C.elem_bytes
local DESC, H, L, about, exp, force = C.DESC, C.H, C.L, C.about, C.exp, C.force
local key_of, lazy, me, nranks, packed, plain = C.key_of, C.lazy, C.me, C.nranks, C.packed, C.plain
local exchange, product, reserve = C.exchange, C.product, C.reserve
local record, rows_of, together, unpack, util = C.record, C.rows_of, C.together, C.unpack, C.util

-- ---- folds: local partials, combined in rank order

-- a shape of n rows of extents rest
local function with_rows(n, rest)
  local sh = { n }
  for d = 1, #rest do sh[d + 1] = rest[d] end
  return sh
end

local function stack(parts, t, rest)
  return unpacked(table.concat(parts), t, with_rows(#parts, rest))
end

-- A rank's partial as a message: "\1" and its bytes, "\0" where the rank had no rows,
-- "\2" and the message where combining failed.
local HAVE, NONE, FAILED = 1, 0, 2
local FAILED_ROOM = 1025

-- a then b (a from lower ranks), combined by pair (two payloads -> one): a failure, or
-- nothing, passes through; the first failure in rank order wins
local function combined(a, b, pair)
  local ka, kb = a:byte(1), b:byte(1)
  if ka == FAILED or kb == NONE then return a end
  if kb == FAILED or ka == NONE then return b end
  local ok, r = pcall(pair, a:sub(2), b:sub(2))
  if not ok then return string.char(FAILED) .. tostring(r):sub(1, FAILED_ROOM - 1) end
  return string.char(HAVE) .. r
end

-- The ranks' messages combined in rank order by recursive doubling, every rank ending
-- with the same bits: where P is not a power of two, the first 2 (P - m) ranks pair up
-- (m the largest power of two below P), each odd one's partial folded into the even one
-- before it; the m ranks left (each holding a run of consecutive ranks) then exchange
-- with the rank k = 1, 2, 4, ... away, the lower run's first; the odd ones get the end
-- result back. ceil(log2 P) messages a rank at most (an all-gather sent P - 1).
local function tree(mine, pair)
  local P, r = nranks(), me()
  if P == 1 then return mine end
  local m = 1
  while m * 2 <= P do m = m * 2 end
  local extra = P - m
  if r < 2 * extra and r % 2 == 1 then
    exchange(r - 1, mine, nil)
    return exchange(nil, nil, r - 1, mine)
  end
  local v = r - extra
  if r < 2 * extra then
    mine = combined(mine, exchange(nil, nil, r + 1, mine), pair)
    v = math.floor(r / 2)
  end
  local function rank_of_v(w) return w < extra and 2 * w or w + extra end
  local k = 1
  while k < m do
    local lower = math.floor(v / k) % 2 == 1   -- the partner's run comes first
    local q = rank_of_v(lower and v - k or v + k)
    local got = exchange(q, mine, q, mine)
    if lower then mine = combined(got, mine, pair) else mine = combined(mine, got, pair) end
    k = k * 2
  end
  if r < 2 * extra then exchange(r + 1, mine, nil) end
  return mine
end

-- For each rank, the messages of the ranks before it (right: after it) combined in rank
-- order: a scan across the ranks by recursive doubling. In round k = 1, 2, 4, ... each
-- rank sends what it has combined (its own and the k - 1 ranks before it) to the rank k
-- after it, and takes the one from k before; at most ceil(log2 P) messages a rank (an
-- all-gather sent P - 1). NONE where no such rank had rows.
local function exscan(mine, pair, right)
  local P, r = nranks(), me()
  local incl, excl = mine, string.char(NONE)
  local k = 1
  while k < P do
    local to, from = r + k, r - k
    if right then to, from = r - k, r + k end
    if to < 0 or to >= P then to = nil end
    if from < 0 or from >= P then from = nil end
    local got = exchange(to, to and incl or nil, from, incl)
    if got and right then
      incl, excl = combined(incl, got, pair), combined(excl, got, pair)
    elseif got then
      incl, excl = combined(got, incl, pair), combined(got, excl, pair)
    end
    k = k * 2
  end
  return excl
end

C.tree, C.exscan, C.HAVE, C.FAILED, C.FAILED_ROOM = tree, exscan, HAVE, FAILED, FAILED_ROOM

-- msg and sh, once the room the messages of a tree or scan of partials of type t and
-- shape sh take (a failure's text cut to fit) is reserved: inside the agreement before
-- them, so that a rank that cannot take part says so there, not in the middle
local function reserved(msg, t, sh)
  reserve(math.max(#msg, elem_bytes(t) * product(sh, 1) + 1, FAILED_ROOM))
  return msg, sh
end

-- this rank's partial (a host array, or nil where the rank had no rows) as a message
-- (above), and the partial's shape, after the agreement (what: the step; t: the type)
local function partial_of(part, v, d, opts, what, t)
  return together(what, function()
    if part then
      local h = plain.run(part, opts.localopts)
      return reserved(string.char(HAVE) .. packed(h, "fold"), t, h:shape())
    end
    local sh = {}
    if d == 1 then
      sh = force(v, opts):shape()   -- no rows here: an empty block
      table.remove(sh, 1)
    end
    return reserved(string.char(NONE), t, sh)
  end)
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
    local along = v and v.counts and (d and d ~= 1)   -- a dimension each rank holds whole
    -- replicated, or along such a dimension, or on one rank (one process's fold, its
    -- result replicated where the distributed dimension goes: a program the rest of a
    -- loop's turn can read without a run between)
    if not v or not v.counts or along or nranks() == 1 then
      return { acc = lazy(nd, "out", { v and v.acc or false, key_of(v and v.counts) }, function()
        return plain[op](unpack(args, 1, nd.n))
      end, nranks() == 1), counts = along and v.counts or nil }
    end
    -- along the distributed dimension (or over everything): partials, then in rank order
    local part
    if v.counts[me() + 1] > 0 then
      part = lazy(nd, "partial", { v.acc }, function() return spec.partial(v.acc) end, true)
    end
    local what = about(nd, vals, d and (" along dimension " .. d) or "")
    -- compiled once: each run's partials are new arrays
    nd.combine_fn = nd.combine_fn or plain.compile(spec.combine, opts.localopts)
    nd.pair_fn = nd.pair_fn or plain.compile(spec.pair or spec.combine, opts.localopts)
    local mine, rest = partial_of(part, v, d, opts, what, nd.t)
    local got = tree(mine, function(a, b) return packed(nd.pair_fn(stack({ a, b }, nd.t, rest)), "fold") end)
    local function result()
      if got:byte(1) == FAILED then error(got:sub(2), 0) end
      return nd.combine_fn(stack(got:byte(1) == HAVE and { got:sub(2) } or {}, nd.t, rest))
    end
    -- an agreement only where combining may have failed on some rank (a fold of the
    -- user's function: its reads, its integer division)
    if spec.safe then return { acc = result() } end
    return { acc = together(what, result) }
  end
end

-- combine: the partials (stacked) to the result; pair: two partials to one (where not
-- combine: a fold's start value is taken once, at the end)
local function fold_record(op, args, nargs, xs_i, dim, partial, combine, pair)
  local nd = record(op, 1, plain[op], args, nargs)
  nd.fold = { xs = xs_i, dim = dim, partial = partial, combine = combine, pair = pair }
  return nd
end

local function dim_opt(opts) return type(opts) == "table" and opts.dim or nil end

local wrapped = {}   -- name -> function(args, nargs) for distributed arguments

wrapped.fold = function(args, n)
  local f, z, xs, o = args[1], args[2], args[3], args[4]
  local d = dim_opt(o) or xs.rank
  if xs.rank == 1 then d = 1 end
  local one = function(block) return plain.fold1(f, block, { dim = 1 }) end
  return fold_record("fold", args, n, 3, d, one,
    function(st) return plain.fold(f, z, st, { dim = 1 }) end, one)
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
    local nd
    if d == nil then
      nd = fold_record(name, args, n, 1, nil,
        function(block) return plain[name](block) end,
        function(st) return plain[name](st) end)
    else
      nd = fold_record(name, args, n, 1, d,
        function(block) return plain[name](block, 1) end,
        function(st) return plain[name](st, 1) end)
    end
    -- one primitive of numbers or bools (their types checked when recorded): combining
    -- the partials reads nothing and cannot fail, so no agreement follows the tree
    nd.fold.safe = true
    return nd
  end
end
for _, name in ipairs { "fold", "fold1", "sum", "product", "maximum", "minimum", "and_", "or_" } do
  H[name] = fold_like(name)
  DESC[name] = "along the distributed dimension: a partial per rank, combined in rank order " ..
    "by a tree (recursive doubling: at most ceil(log2 P) messages a rank, the same result on " ..
    "every rank); along another dimension: local"
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
      if rows == 0 then return reserved(string.char(NONE), nd.t, sh) end
      local sum_rows = along and plain.fold1(f, v.acc, along) or plain.fold1(f, v.acc)
      return reserved(string.char(HAVE) .. packed(plain.run(sum_rows, opts.localopts), "scan"), nd.t, sh)
    end)
    -- the totals of the ranks before (scanl) or after (scanr) this one, combined
    nd.pair_fn = nd.pair_fn or plain.compile(function(st) return plain.fold1(f, st, { dim = 1 }) end,
                                             opts.localopts)
    local got = exscan(mine, function(a, b) return packed(nd.pair_fn(stack({ a, b }, nd.t, rest)), "scan") end,
                       sc.right)
    together(about(nd, vals, ": the carry"), function()
      if got:byte(1) == FAILED then error(got:sub(2), 0) end
    end)
    local side = got:byte(1) == HAVE and { got:sub(2) } or {}
    local st = unpacked(table.concat(side), nd.t, with_rows(#side, rest))
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
  DESC[op] = "along the distributed dimension: a local scan, the block totals scanned across " ..
    "the ranks by recursive doubling (at most ceil(log2 P) messages a rank), each rank's carry " ..
    "in rank order, a local fix-up; along another dimension: local"
end


C.wrapped = wrapped

return true
