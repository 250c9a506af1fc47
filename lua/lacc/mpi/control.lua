-- lacc.mpi.control: acond and awhile over distributed arrays (lacc.mpi).
-- Owns: deciding a branch or a turn: the condition, a rank-0 bool array that every rank
-- computes alike (a distributed fold's result is the same on every rank, its partials
-- combined in rank order), forced on each rank and agreed by one collective that also
-- compares the values (ranks that decide differently all raise, as ranks out of step
-- do); the loop's arrays, distributed or not, carried from turn to turn, and the arrays
-- its turns made released as it goes (base.lua's release: once no program still to run
-- reads them).
-- Must not: run a branch or a turn on some ranks only, evaluate a branch not taken, or
-- release an array the loop did not make.
local C = require "lacc.mpi.base"
local DESC, H, LAZY, agree_on, fail = C.DESC, C.H, C.LAZY, C.agree_on, C.fail
local force, is_dist, nranks, plain, record = C.force, C.is_dist, C.nranks, C.plain, C.record
local together = C.together
local stand, unpack, value_of, wrapped = C.stand, C.unpack, C.value_of, C.wrapped

local is_list = C.is_list

-- The condition c's value on this rank (what: the step, "awhile's condition, turn 3"),
-- agreed with every rank's: one collective. A failure on any rank is every rank's error.
local function decide(what, c, memo, opts)
  local ok, val = pcall(function()
    local v = value_of(c, memo, opts) or { acc = c }
    if v.counts then fail("%s: the condition is a distributed array: expected a rank-0 bool array", what) end
    local a = force(v, opts)
    if a:type() ~= "bool" or #a:shape() ~= 0 then
      fail("%s: expected a rank-0 bool array, got %s of rank %d", what, a:type(), #a:shape())
    end
    return a:get() == true
  end)
  local msg = not ok and tostring(val) or nil
  local first, text = agree_on(what .. (ok and (val and ": true" or ": false") or ""), not ok, msg)
  if first then
    if nranks() > 1 then text = ("%s [rank %d of %d]"):format(text, first, nranks()) end
    error(text, 0)
  end
  return val
end

-- ---- acond

-- acond(c, a, b) where a, b (or lists of as many) hold distributed arrays, or c is
-- computed from them: a node per result; only the branch taken runs.
wrapped.acond = function(args, n)
  local c, a, b = args[1], args[2], args[3]
  if n ~= 3 then return nil end
  local list = is_list(a) or is_list(b)
  if list and not (is_list(a) and is_list(b) and #a == #b and #a > 0) then return nil end
  if type(c) == "boolean" then
    if list then return unpack(c and a or b, 1, #a) end
    return c and a or b
  end
  -- a condition that is an expression: the rank-0 array one process makes of it
  if C.scalar_exp(c) then c = C.unit_of(c) end
  local as, bs = list and a or { a }, list and b or { b }
  local k = #as
  local flat = { c }
  for i = 1, k do flat[1 + i], flat[1 + k + i] = as[i], bs[i] end
  local typed = function(cc, ...)
    local xs = { ... }
    local r = {}
    for i = 1, k do r[i] = plain.acond(cc, xs[i], xs[k + i]) end
    return unpack(r, 1, k)
  end
  local nodes = { record("acond", k, typed, flat, 1 + 2 * k) }
  for i = 1, k do nodes[i].k = k end
  return unpack(nodes, 1, k)
end
LAZY.acond = true
H.acond = function(nd, _, opts)
  local memo, key = opts.memo, nd.group or nd
  if memo[key] == nil then memo[key] = { decide("acond's condition", nd.args[1], memo, opts) } end
  local i, k = nd.res or 1, nd.k or 1
  local branch = nd.args[memo[key][1] and 1 + i or 1 + k + i]
  return value_of(branch, memo, opts) or { acc = branch }
end
DESC.acond = "the condition (a rank-0 array, the same on every rank) agreed, one collective; " ..
  "then the branch taken alone, as written (its arrays distributed or not)"

-- ---- awhile

-- A loop's array inside its condition and body: its value is set each turn.
H.loopvar = function()
  fail("awhile: a loop's array (lacc.mpi) read outside its loop")
end
DESC.loopvar = "the loop's array this turn"

-- (an expression, or a value of distributed programs: lacc.mpi.scalars, as a program
-- every rank computes alike)
local function loop_condition(c)
  if C.scalar_exp(c) then
    if c.t ~= "bool" then fail("awhile: the condition is %s, expected bool", tostring(c.t)) end
    c = C.unit_of(c)
  end
  return c
end

-- awhile(cond, body, init) where init (an array or a list) holds distributed arrays: cond
-- and body traced once, on loop variables; each turn the condition is decided (decide)
-- and the body run as a distributed program, its arrays materialised for the next turn
-- (an agreement after that, where it ran kernels: a second collective a turn).
wrapped.awhile = function(args, n)
  local cond, body, init = args[1], args[2], args[3]
  if n ~= 3 or type(cond) ~= "function" or type(body) ~= "function" then return nil end
  local list = is_list(init)
  local inits = list and init or { init }
  local m = #inits
  if m == 0 then return nil end
  local vars = {}
  for i = 1, m do
    local s = stand(inits[i])
    vars[i] = record("loopvar", 1, function() return s end, {}, 0)
  end
  local c = loop_condition(cond(unpack(vars, 1, m)))
  local b = { body(unpack(vars, 1, m)) }
  if #b == 1 and is_list(b[1]) then b = b[1] end
  if #b ~= m then fail("awhile: the body returned %d arrays for a loop of %d", #b, m) end
  for i = 1, m do
    local s, x = stand(inits[i]), is_dist(b[i]) and stand(b[i]) or b[i]
    if type(x) ~= "table" or x.t ~= s.t or x.rank ~= s.rank then
      fail("awhile: the body's array %d is %s of rank %s, the loop's %s of rank %d", i,
           tostring(type(x) == "table" and x.t), tostring(type(x) == "table" and x.rank), s.t, s.rank)
    end
  end
  local loop = { vars = vars, cond = c, body = b }
  local typed = function(...) return ... end
  local nodes = { record("awhile", m, typed, inits, m) }
  local inner = { c }
  for i = 1, m do inner[#inner + 1] = b[i] end
  for i = 1, m do
    nodes[i].loop = loop
    nodes[i].inner = inner
  end
  return unpack(nodes, 1, m)
end

H.awhile = function(nd, vals, opts)
  local loop, memo = nd.loop, opts.memo
  if memo[loop] == nil then
    local cur = {}
    for i = 1, #loop.vars do cur[i] = vals[i] or { acc = nd.args[i] } end
    local turn = 0
    loop.uses = loop.uses or C.uses_of(nd.inner)
    if not loop.readers then
      loop.readers, loop.roots = C.readers_of(nd.inner), {}
      for _, x in ipairs(nd.inner) do loop.roots[x] = true end
    end
    -- the arrays this loop's turns made (its handlers' runs and its own: a turn's `new`),
    -- which nobody else holds, are released (C.discard) as soon as no program still to
    -- run reads them (opts.release, base.lua), else at the turn's end where the next turn
    -- does not carry them on; the loop's own (owned: carried from earlier turns) once a
    -- turn that goes on has read them
    local owned = setmetatable({}, { __mode = "k" })
    while true do
      turn = turn + 1
      local inner = setmetatable({}, { __index = memo })
      local o = {}
      for key, v in pairs(opts) do o[key] = v end
      local new = setmetatable({}, { __mode = "k" })
      -- (on one rank a turn is one program: nothing is done with before its end)
      local release = nranks() > 1 and C.release_of(inner, loop, new, owned) or nil
      o.memo, o.uses, o.release = inner, loop.uses, release
      for i, var in ipairs(loop.vars) do inner[var] = cur[i] end
      if not decide(("awhile's condition, turn %d"):format(turn), loop.cond, inner, o) then break end
      -- (this turn's arrays are the loop's result where it ends: candidates only now)
      for i, var in ipairs(loop.vars) do
        if release and owned[cur[i].acc] then release:candidate(cur[i].acc, var) end
      end
      local nxt, unforced = {}, false
      for i, x in ipairs(loop.body) do
        nxt[i] = value_of(x, inner, o) or { acc = x }
        unforced = unforced or not C.array.is_array(nxt[i].acc)
      end
      -- the body's arrays materialised for the next turn (no program grows turn by turn);
      -- where that runs kernels, which may fail on one rank, the ranks agree after it
      local function materialise()
        for i, v in ipairs(nxt) do nxt[i] = { acc = v.acc, counts = v.counts } end
        local was = {}
        for i, v in ipairs(nxt) do was[i] = C.array.is_array(v.acc) end
        C.force_all(nxt, o)
        for i, v in ipairs(nxt) do if not was[i] then new[v.acc] = true end end
      end
      if unforced then together(("awhile's body, turn %d"):format(turn), materialise) end
      local carried = {}
      for _, v in ipairs(nxt) do carried[v.acc] = true end
      for _, v in ipairs(cur) do
        if owned[v.acc] and not carried[v.acc] then
          owned[v.acc] = nil
          C.discard(v.acc)
        end
      end
      for a in pairs(new) do
        if carried[a] then owned[a] = true else C.discard(a) end
      end
      cur = nxt
    end
    memo[loop] = cur
  end
  return memo[loop][nd.res or 1]
end
DESC.awhile = "a loop: each turn its condition (a rank-0 array, the same on every rank) agreed, " ..
  "one collective, then its body run as a distributed program (the loop's arrays keep their rows), " ..
  "materialised for the next turn: an agreement after that where it ran kernels"

return true
