-- explain prints the texts stored in spec/golden/explain/, first taken from the build
-- before issue 18's reorganisation of the core (commit 1517379; the reorganisation left
-- them unchanged), then written again for issue 19 (the plain texts only gained the lines
-- on checks and tiles; the generated C changed with the proofs, hoisting and tiles): for
-- every program of spec/golden/explain_corpus.lua (every combinator and feature) and
-- every program the examples (examples/*.lua) run, the plain text, its stats, the
-- generated C (all of it; the fixed prelude up to the first kernel is stored once, in
-- _prelude_c.txt) and the OpenCL C (its length and checksum). explain is the same on
-- every backend; the texts are the same under Lua 5.4 and LuaJIT, and run under each.
--
-- The texts print places ("(at spec/golden/explain_corpus.lua:LINE)", "(at
-- examples/blur.lua:LINE)"): explain_corpus.lua and the examples are loaded under those
-- names from any checkout, so only moving a line of theirs changes them.
-- When a change to explain's output or to the generated code is intended (or such a
-- line moves), write the texts again from the new build and review what changed:
--   lua5.4 tools/explain_golden.lua     # from the repository root, LUA_PATH, LUA_CPATH and
--   git diff spec/golden/explain        # LACC_LIB set as for the specs (tools/runtests.sh)
-- The OpenCL C is stored as a checksum: `tools/explain_golden.lua --full DIR` writes every
-- text in full, so that two builds' folders compare with diff -r.
local lacc = require "lacc"
local G = dofile("tools/explain_golden.lua")

local function lines(s)
  local t = {}
  for l in (s .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = l end
  return t
end

-- "line N: stored ..., now ...": where two texts first differ.
local function difference(stored, now)
  local a, b = lines(stored), lines(now)
  for i = 1, math.max(#a, #b) do
    if a[i] ~= b[i] then
      return ("line %d:\n  stored: %s\n  now:    %s"):format(i, a[i] and ("%q"):format(a[i]) or "(the end)",
                                                              b[i] and ("%q"):format(b[i]) or "(the end)")
    end
  end
  return "the same lines, other bytes"
end

local now   -- name -> texts of this build, collected once
local function texts()
  if not now then
    now = {}
    for _, e in ipairs(G.collect(lacc)) do now[e.name] = e end
  end
  return now
end

describe("explain golden texts #opt", function()
  local stored_names = G.stored_names(G.dir)
  local prelude = G.read_prelude(G.dir)

  it("cover every program of the corpus and the examples, and no other", function()
    assert.truthy(prelude, "no " .. G.dir .. "/" .. G.prelude_file)
    assert.is_true(#stored_names >= 40 + #G.example_names(), "fewer stored texts than programs")
    local stored, missing, extra = {}, {}, {}
    for _, n in ipairs(stored_names) do stored[n] = true end
    for n in pairs(texts()) do
      if not stored[n] then missing[#missing + 1] = n end
    end
    for _, n in ipairs(stored_names) do
      if not texts()[n] then extra[#extra + 1] = n end
    end
    table.sort(missing)
    assert.are.same({}, missing, "programs without a stored text (write them: see this spec's header)")
    assert.are.same({}, extra, "stored texts of no program")
    for _, n in ipairs(G.example_names()) do
      assert.truthy(texts()["examples_" .. n .. "_1"], "no program of examples/" .. n .. ".lua")
    end
  end)

  it("are each a program's own (an option that changed nothing would give two equal texts)", function()
    local first = {}
    for name, t in pairs(texts()) do
      local key = t.plain .. "\0" .. t.c
      assert.is_nil(first[key], ("%s and %s explain the same"):format(tostring(first[key]), name))
      first[key] = name
    end
  end)

  for _, name in ipairs(stored_names) do
    it("of " .. name, function()
      local want = G.read(G.dir, name, prelude)
      local got = texts()[name]
      assert.truthy(got, name .. " is no longer in the corpus")
      local file = G.dir .. "/" .. name .. ".txt"
      if got.plain ~= want.plain then
        error(("explain(p) differs from %s at %s"):format(file, difference(want.plain, got.plain)), 0)
      end
      assert.are.equal(want.stats, got.stats, "stats of " .. name)
      if got.c ~= want.c then
        error(("explain(p, {source = true}) differs from %s (+ %s) at %s"):format(file, G.prelude_file,
          difference(want.c, got.c)), 0)
      end
      assert.are.equal(want.cl_summary, G.summary(got.cl), "the OpenCL C of " .. name)
    end)
  end
end)
