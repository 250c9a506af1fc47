-- Every Lua code block in the README and docs/ runs without error on this VM, and what
-- its `--> ...` comments promise is among what it prints; the guide's reference names
-- every function of the module.
-- The Lua and Python blocks of a file, in order ({ lang, code }): a Python block reads
-- or writes what the Lua blocks around it do (the guide's NumPy round trip).
local function blocks(path)
  local f = assert(io.open(path))
  local text = f:read("a") or f:read("*a")
  f:close()
  local r = {}
  for lang, code in text:gmatch("```(%a+)\n(.-)```") do
    if lang == "lua" or lang == "python" then r[#r + 1] = { lang, code } end
  end
  return r
end

local function run_python(code)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  -- without make check-asan's preloaded sanitizers: Python is not ours to check
  local ok = os.execute("env -u LD_PRELOAD /usr/bin/python3 " .. path .. " > " .. path .. ".out 2>&1")
  local o = io.open(path .. ".out")
  local out = o and o:read("*a") or ""
  if o then o:close() end
  os.remove(path)
  os.remove(path .. ".out")
  return ok == true or ok == 0, out
end

-- Words of a printed line, numbers in one spelling (Lua 5.4 prints 20.0 where LuaJIT
-- prints 20; LuaJIT's 64-bit integers print with LL).
local function tokens(line)
  local r = {}
  for w in line:gsub("[%[%],]", " %0 "):gsub("(%d)LL", "%1"):gmatch("%S+") do
    local n = tonumber(w)
    r[#r + 1] = n and ("%.10g"):format(n) or w
  end
  return r
end

-- A word of a comment matches a printed one; "…" in it stands for the rest of the word.
local function same_word(w, g)
  local at = w:find("…", 1, true)
  if not at then return w == g end
  return g:sub(1, at - 1) == w:sub(1, at - 1)
end

-- want[k..] matched at got[g..] (a word with "…" may also swallow more printed words);
-- the position after the match, or nil.
local function match_from(got, want, k, g)
  if k > #want then return g end
  if g > #got or not same_word(want[k], got[g]) then return nil end
  local r = match_from(got, want, k + 1, g + 1)
  if r or not want[k]:find("…", 1, true) then return r end
  for extra = g + 1, #got do
    r = match_from(got, want, k + 1, extra + 1)
    if r then return r end
  end
  return nil
end

-- Whether want's words appear in got side by side, from position `from`; the position
-- after them, or nil.
local function find_words(got, want, from)
  for s = from, #got do
    local r = match_from(got, want, 1, s)
    if r then return r end
  end
  return #want == 0 and from or nil
end

-- A comment's parts (split at runs of 3 or more blanks) appear in got, in order.
local function contains(got, parts)
  local at = 1
  for _, want in ipairs(parts) do
    at = find_words(got, want, at)
    if not at then return false end
  end
  return true
end

describe("documentation examples", function()
  for _, path in ipairs { "README.md", "docs/guide.md", "docs/core.md" } do
    for i, block in ipairs(blocks(path)) do
      local code = block[2]
      if block[1] == "python" then
        it(("%s block %d (Python) runs"):format(path, i), function()
          local ok, out = run_python(code)
          assert(ok, out)
        end)
      else
        it(("%s block %d runs"):format(path, i), function()
          local out = {}
          local ranks = code:match("^[^\n]*mpirun %-n (%d+)")
          if ranks then
            -- a block for MPI ranks ("-- prog.lua: mpirun -n 4 ..." first) runs under mpirun
            if not require("lacc").mpi.available() then
              local ok, err = pcall(require("lacc").mpi.init)
              assert(not ok and tostring(err):find("built without MPI", 1, true), tostring(err))
              return
            end
            local file = os.tmpname()
            local f = assert(io.open(file, "w"))
            f:write(code)
            f:close()
            local H = require "helper"
            local text = H.sh(("timeout 120 %s %s %s"):format(H.mpirun(tonumber(ranks)), H.vm, file))
            os.remove(file)
            for line in text:gmatch("[^\n]+") do out[#out + 1] = line end
          end
          local env = setmetatable({ print = function(...)
            local parts = {}
            for k = 1, select("#", ...) do parts[k] = tostring((select(k, ...))) end
            out[#out + 1] = table.concat(parts, " ")
          end }, { __index = _G })
          local chunk, err
          if setfenv then
            chunk, err = loadstring(code, path)
            if chunk then setfenv(chunk, env) end
          else
            chunk, err = load(code, path, "t", env)
          end
          assert.is_nil(err)
          if not ranks then chunk() end
          assert.is_true(#out > 0)   -- every example shows something
          -- what a "--> ..." comment promises appears in what the block printed
          local printed = {}
          for k, line in ipairs(out) do printed[k] = tokens(line) end
          for expected in code:gmatch("%-%->([^\n]*)") do
            local parts = {}
            for part in (expected:gsub("%s%s+%(.*%)%s*$", "") .. "   "):gmatch("(.-)%s%s%s+") do
              if part:find("%S") then parts[#parts + 1] = tokens(part) end
            end
            local want = parts
            local found = false
            for _, got in ipairs(printed) do found = found or contains(got, want) end
            assert.is_true(found, ("%s block %d: '-->%s' not among what it printed:\n%s")
              :format(path, i, expected, table.concat(out, "\n")))
          end
        end)
      end
    end
  end
end)

local function read_guide()
  local f = assert(io.open("docs/guide.md"))
  local text = f:read("a") or f:read("*a")
  f:close()
  return text
end

describe("the tunings table in docs/guide.md", function()
  it("is lacc.tuning(), row by row, in its order", function()
    local lacc = require "lacc"
    local text = read_guide()
    local rows = {}
    local table_text = text:match("| name | value | unit | what it decides |\n  |%-+|%-+|%-+|%-+|\n(.-)\n\n")
    assert.truthy(table_text, "no tunings table in the guide")
    for name, value, unit, what in table_text:gmatch("| `([%w_]+)` | ([^|]-) | ([^|]-) | ([^|]-) |") do
      rows[#rows + 1] = { name = name, value = tonumber(value), unit = unit, what = what }
    end
    local t = lacc.tuning()
    assert.are.equal(#t, #rows)
    for k, r in ipairs(t) do
      assert.are.same({ name = r.name, value = r.value, unit = r.unit, what = r.what }, rows[k])
      assert.are.equal(r, t[r.name])
    end
    -- the numbers the guide's prose gives for the tiers are the table's
    assert.truthy(text:find("at most " .. t.INTERP_WORK.value .. " input elements", 1, true))
    assert.truthy(text:find(("for\n  at most %.0f ms"):format(t.FAST_BUILD_S.value * 1e3), 1, true))
  end)
end)

describe("the reference in docs/guide.md", function()
  it("names every function of lacc, and nothing else", function()
    local lacc = require "lacc"
    local text = read_guide()
    local ref = text:match("\n## Reference\n(.*)$")
    assert.truthy(ref, "docs/guide.md has a Reference section")
    local named = {}
    for name in ref:gmatch("lacc%.([%a_][%w_]*)") do named[name] = true end
    local missing, stale = {}, {}
    for k, v in pairs(lacc) do
      local callable = type(v) == "function" or (type(v) == "table" and getmetatable(v) and getmetatable(v).__call)
      if callable and not k:match("^_") and not named[k] then missing[#missing + 1] = k end
    end
    for k in pairs(named) do
      if lacc[k] == nil then stale[#stale + 1] = k end
    end
    table.sort(missing)
    table.sort(stale)
    assert.are.same({}, missing)
    assert.are.same({}, stale)
  end)
end)
