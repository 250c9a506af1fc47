-- lacc.mpi.simulated: a transport that sends nothing (lacc.mpi.simulate), for the scaling
-- model at rank counts past this machine's.
-- Owns: one process playing rank r of P: the functions of lacc.mpi_core (rank, size, the
-- byte collectives, exchange, agree, stats), each counting what the real one would send
-- and receive (as lacc_mpi.c counts: a part to another rank is one message of its bytes;
-- an agreement one collective), and answering with what this rank sent, as if every
-- other rank were this one: right sizes where the ranks' parts are alike (a fold's
-- partials, a stencil's halo rows, equal blocks), values that mean nothing.
-- Must not: be mistaken for a run: its results are not the program's (only its own
-- block's local work is real); lacc.mpi says so (mpi.simulate's doc).
local M = {}

function M.new(P, r)
  -- one table, its fields reset in place: with the table itself replaced at each reset
  -- (an upvalue assigned anew), LuaJIT 2.1.0-beta3's traces of sent() crashed the
  -- process now and then (a cold kernel cache, spec/mpi/model_spec.lua under LuaJIT)
  local stats = {}
  local T = {}
  local function reset()
    stats.bytes_sent, stats.bytes_received, stats.messages_sent = 0, 0, 0
    stats.messages_received, stats.collectives = 0, 0
  end
  reset()
  local function sent(n)
    if n > 0 then stats.bytes_sent, stats.messages_sent = stats.bytes_sent + n, stats.messages_sent + 1 end
  end
  local function received(n)
    if n > 0 then
      stats.bytes_received, stats.messages_received = stats.bytes_received + n, stats.messages_received + 1
    end
  end
  function T.init() return 0 end
  function T.initialized() return true end
  function T.rank() return r - 1 end
  function T.size() return P end
  function T.wtime() return os.clock() end
  function T.reset_stats() reset() end
  function T.stats()
    local s = {}
    for k, v in pairs(stats) do s[k] = v end
    return s
  end
  function T.abort() error("mpi.abort: a simulated run (lacc.mpi.simulate)", 0) end
  -- every rank sends s to every other: P - 1 messages out and in
  function T.allgather(s)
    stats.collectives = stats.collectives + 1
    local out = {}
    for q = 1, P do
      out[q] = s
      if q ~= r then sent(#s); received(#s) end
    end
    return out
  end
  -- part q to rank q; rank q's part for this one taken to be like[q] where the caller
  -- knows (a histogram's partials of this rank's bins), else this one's for rank q (a
  -- stencil's halo rows)
  function T.alltoall(parts, like)
    stats.collectives = stats.collectives + 1
    local out = {}
    for q = 1, P do
      out[q] = like and like[q] or parts[q]
      if q ~= r then sent(#parts[q]); received(#out[q]) end
    end
    return out
  end
  -- a message is counted as lacc_mpi.c counts it: one, whatever its size
  function T.exchange(to, s, from, like)
    if to ~= nil and to >= 0 then
      stats.bytes_sent, stats.messages_sent = stats.bytes_sent + #(s or ""), stats.messages_sent + 1
    end
    if from == nil or from < 0 then return nil end
    local got = (to == from and s) or like or ""
    stats.bytes_received, stats.messages_received = stats.bytes_received + #got, stats.messages_received + 1
    return got
  end
  function T.reserve() end
  function T.agree()
    stats.collectives = stats.collectives + 1
  end
  function T.barrier()
    stats.collectives = stats.collectives + 1
    return 0
  end
  return T
end

return M
