-- The passes after lowering (core/kir/passes.c): LACC_DUMP prints the kernel IR after a
-- pass, in the table's order; the IR shows what a pass did (checks proved go, so fewer
-- `fail` instructions after `fold` than as lowered); LACC_BOUNDS=0 leaves them; a name
-- that is no pass is a warning; docs/architecture.md's table is passes.c's. The verifier
-- (LACC_VERIFY, set by the test runner for every spec) is tested in core/test/test_core.c.
local H = require "helper"

-- a gather whose index is proved inside its array (i of a generate over xs's extent),
-- and a histogram whose targets come from data (a check that stays)
local program = [[
  local lacc = require "lacc"
  local xs = lacc.fromtable({ 3, 1, 4, 1, 5, 9, 2, 6 }, "i64")
  local g = lacc.generate({ 8 }, function(i) return xs[i] * 2 end)
  local h = lacc.permute(function(a, b) return a + b end, lacc.fill({ 10 }, lacc.constant(0, "i64")),
    function(i) return xs[i] + 1 end, xs)
  local a, b = lacc.run({ g, h }, { backend = "cpu" })
  io.write(table.concat(a:totable(), ","), " ", table.concat(b:totable(), ","), "\n")
]]
local want = "6,2,8,2,10,18,4,12 0,2,2,3,4,5,6,0,0,9\n"

local function dump(vars)
  local out, status = H.child(program, nil, vars)
  assert.are.equal(0, status, out)
  return out
end

-- the passes named by the headers, in order, and the text after each
local function sections(out)
  local names, texts, starts = {}, {}, {}
  for at, name in out:gmatch("()%-%- kernel IR after (%w+):") do
    names[#names + 1], starts[#starts + 1] = name, at
  end
  for k, name in ipairs(names) do
    texts[name] = out:sub(starts[k], (starts[k + 1] or #out + 1) - 1)
  end
  return names, texts
end
local function count(text, pattern) return select(2, text:gsub(pattern, "")) end

-- passes.c's table, read from its source: the names in order
local function table_of_passes()
  local src = assert(io.open("core/kir/passes.c")):read("a")
  local body = src:match("static const kpass passes%[%] = {(.-)\n};")
  local names = {}
  for name in body:gmatch('{ "(%w+)",') do names[#names + 1] = name end
  return names
end

describe("passes after lowering", function()
  it("LACC_DUMP=all prints the IR as lowered, then after every pass in the table's order, " ..
     "and the results are unchanged", function()
    local out = dump("LACC_DUMP=all")
    assert.truthy(out:find(want, 1, true), out)
    local names = sections(out)
    local order = { "lower" }
    for _, n in ipairs(table_of_passes()) do order[#order + 1] = n end
    -- each plan lowered prints the whole sequence once (one program here)
    assert.are.same(order, names)
  end)

  it("the dump shows what a pass did: checks proved are gone after fold, the data's check " ..
     "stays; LACC_BOUNDS=0 keeps them all", function()
    local _, t = sections(dump("LACC_DUMP=all"))
    local lowered, folded = count(t.lower, "\n%s*fail "), count(t.refold, "\n%s*fail ")
    assert.is_true(folded >= 1, t.refold)        -- the histogram's target check
    assert.is_true(folded < lowered, ("%d fails as lowered, %d after refold"):format(lowered, folded))
    local _, kept = sections(dump("LACC_DUMP=lower LACC_BOUNDS=0"))
    assert.are.equal(lowered, count(kept.lower, "\n%s*fail "))
    local names = sections(dump("LACC_DUMP=tiles LACC_BOUNDS=0"))
    assert.are.same({ "tiles" }, names)
  end)

  it("an instruction per line, from the operation table: the variable written, its type, " ..
     "the operation and its operands", function()
    local _, t = sections(dump("LACC_DUMP=lower"))
    assert.truthy(t.lower:find("\n    v%d+:i64 = kconst K%[%d+%]"), t.lower)
    assert.truthy(t.lower:find("\n%s+v%d+:i64 = load S%d+%.%d+ v%d+"), t.lower)
    assert.truthy(t.lower:find("\n%s+v%d+:bool = prim lt v%d+ v%d+"), t.lower)
    assert.truthy(t.lower:find("\nfunction %d+: body of step %d+, %d+ variables\n  prologue:\n"), t.lower)
  end)

  it("LACC_DUMP naming no pass is a warning, and the program runs", function()
    local out = dump("LACC_DUMP=folds")
    assert.truthy(out:find("ignoring LACC_DUMP=folds: expected lower, fold, hoist, refold, " ..
      "ranges, tiles, gtiles or all", 1, true), out)
    assert.truthy(out:find(want, 1, true), out)
    assert.is_nil(out:find("kernel IR after", 1, true))
  end)

  it("docs/architecture.md's table of passes is passes.c's, in order", function()
    local doc = assert(io.open("docs/architecture.md")):read("a")
    local rows = {}
    for name in doc:match("## The passes after lowering(.-)\n## "):gmatch("\n| `(%w+)` |") do
      rows[#rows + 1] = name
    end
    assert.are.same(table_of_passes(), rows)
    assert.is_true(#rows >= 6)
  end)
end)
