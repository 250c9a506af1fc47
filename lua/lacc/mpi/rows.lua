-- lacc.mpi.rows: redistribution and row-wise work over distributed arrays (lacc.mpi):
-- reshape, flatten and transpose (elements moved to their new owners), the combinators
-- that work on each row alone (sort of rows, take, drop, reverse, rotate, ...), and the
-- sample sort across ranks.
-- Owns: new row counts after a redistribution, the sort's splitters and exchange.
-- Must not: keep an order other than the plain combinator's (stable sorts stay stable).
local C = require "lacc.mpi.base"
local unpacked, elem_bytes = C.unpacked, C.elem_bytes
local DESC, H, L, SEARCH_LEVELS, about, aligned = C.DESC, C.H, C.L, C.SEARCH_LEVELS, C.about, C.aligned
local allgather, alltoall, balanced, exp, fail = C.allgather, C.alltoall, C.balanced, C.exp, C.fail
local floor, force, gshape_of, is_dist, is_scalar = C.floor, C.force, C.gshape_of, C.is_dist, C.is_scalar
local key_bytes, key_of, lazy, local_shape = C.key_bytes, C.key_of, C.lazy, C.local_shape
local me, nranks, outer_shape, packed, plain = C.me, C.nranks, C.outer_shape, C.packed, C.plain
local product, record, rows_before, run_time = C.product, C.record, C.rows_before, C.run_time
local sorting, together, total, unpack = C.sorting, C.together, C.total, C.unpack
local util, wrapped = C.util, C.wrapped

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
  local eb, scalar = elem_bytes(t), is_scalar[t]
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
  local got = table.concat(alltoall(parts))
  return { acc = unpacked(got, t, local_shape(shape, counts[me() + 1])), counts = counts }
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
  local got = alltoall(parts)
  -- row i of this rank's result: each rank's piece's row i, in rank order
  local t = block:type()
  local eb = elem_bytes(t)
  local my_rows = counts[me() + 1]
  local out = {}
  for i = 0, my_rows - 1 do
    for q = 1, nranks() do
      local w = v.counts[q] * eb
      out[#out + 1] = got[q]:sub(i * w + 1, (i + 1) * w)
    end
  end
  return { acc = unpacked(table.concat(out), t, { my_rows, rows }), counts = counts }
end
DESC.transpose = "redistribution: one all-to-all, each rank sends every other the columns " ..
  "that become its rows"

-- Along the innermost dimension of an array of rank 2 or more each row is one rank's:
-- local. (Of rank 1, along the distributed dimension: reverse, rotate, take and drop move
-- elements between ranks, gather.lua's C.rearranged; scanl_ and scanr_ are one segment's
-- exclusive scan, segments.lua's C.whole_exclusive.)
local function row_local(name, xs_i, how_many)
  wrapped[name] = function(args, n)
    local xs = args[xs_i]
    if not is_dist(xs) then return nil end
    if xs.rank < 2 then
      if C.rearranged and (name == "reverse" or name == "rotate" or name == "take" or name == "drop") then
        return C.rearranged(name, args, n)
      end
      local o = args[4]
      if C.whole_exclusive and (name == "scanl_" or name == "scanr_")
         and (o == nil or (type(o) == "table" and o.dim == 1 and next(o, next(o)) == nil)) then
        return C.whole_exclusive(name, args)
      end
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
  for f = 1, #kts do arrs[f] = unpacked(table.concat(per[f]), kts[f], { m }) end
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
    local got = allgather(samples)
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
      for f = 1, #kts do sarr[f] = unpacked(table.concat(sp[f]), kts[f], { nsp }) end
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
      local veb, pts, at = elem_bytes(t), {}, 0
      for q = 1, P do
        local c = split:get(q)
        pts[q] = vb:sub(at * veb + 1, (at + c) * veb) .. (name == "argsort" and pb:sub(at * 8 + 1, (at + c) * 8) or "")
        at = at + c
      end
      return pts
    end)
    local veb = elem_bytes(t)
    local recv = alltoall(parts)
    local per = name == "argsort" and veb + 8 or veb
    local vals_s, pos_s, mine = {}, {}, 0
    for q = 1, P do
      local c = #recv[q] / per
      vals_s[q] = recv[q]:sub(1, c * veb)
      pos_s[q] = recv[q]:sub(c * veb + 1)
      mine = mine + c
    end
    local counts = {}
    for q, c in ipairs(allgather(tostring(mine))) do counts[q] = tonumber(c) end
    local res = together(what, function()
      local xs = unpacked(table.concat(vals_s), t, { mine })
      if name == "sort" then return plain.run(plain.sort(xs, o), opts.localopts) end
      local ord = plain.argsort(xs, o)
      local gpos = unpacked(table.concat(pos_s), "i64", { mine })
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


return true
