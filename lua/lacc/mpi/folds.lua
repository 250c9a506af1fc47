-- lacc.mpi.folds: folds and scans whose arrays are distributed (lacc.mpi).
-- Owns: reductions along the distributed dimension or over everything (each rank's
-- partial all-gathered, combined in rank order), along another dimension (local), and
-- scans along the distributed dimension (each rank's carry from the ranks before it).
-- Must not: reorder a fold's operands (partials combine in rank order).
local C = require "lacc.mpi.base"
local DESC, H, L, about, allgather, exp, force = C.DESC, C.H, C.L, C.about, C.allgather, C.exp, C.force
local key_of, lazy, me, nranks, packed, plain = C.key_of, C.lazy, C.me, C.nranks, C.packed, C.plain
local record, rows_of, together, unpack, util = C.record, C.rows_of, C.together, C.unpack, C.util

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
  local got = allgather(s)
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
    local got = allgather(mine)
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


C.wrapped = wrapped

return true
