-- busy_read.lua: a long read-only job (a stock report that reads the counter again and
-- again), for the busy_script scenario's slow_read client, and in short steps for its
-- short_script client.
--
-- Redis runs one script at a time and serves nobody else meanwhile. Once a script has run
-- past busy-reply-threshold, every other command is answered BUSY until it ends. This one
-- writes nothing, so SCRIPT KILL may stop it at any line: abandoning it loses nothing.
--
-- KEYS[1]  the stock counter, only read (a missing key reads as nil, which is fine).
-- ARGV[1]  ms to keep reading, a canonical integer from 1 to 10000.
--
-- Returns  the number of reads made (at least 1).
-- Errors   "INVALID_MS ..."  ARGV[1] is not a canonical integer from 1 to 10000

local ms = ARGV[1]
if ms == nil or not string.match(ms, '^[1-9][0-9]*$') or tonumber(ms) > 10000 then
  return redis.error_reply('INVALID_MS ms must be a canonical integer from 1 to 10000')
end

local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local stop = now_us() + tonumber(ms) * 1000
local reads = 0
-- Bounded twice: by Redis's clock, and by a loop count no real clock can need.
for _ = 1, 100000000 do
  redis.call('GET', KEYS[1])
  reads = reads + 1
  if now_us() >= stop then
    break
  end
end
return reads
