-- busy_write.lua: a long job that writes first (it stamps its start in a job record),
-- then reads the stock for ARGV[1] ms. For the busy_script scenario's slow_write client.
--
-- Once a script has written, Redis will not stop it: a script is all or nothing, and its
-- first write is already in the dataset, so SCRIPT KILL answers UNKILLABLE. Past
-- busy-reply-threshold every other client gets BUSY, and the one way out left is
-- SHUTDOWN NOSAVE: the server ends without saving and comes back from its last snapshot,
-- without every write made since (this one included).
--
-- KEYS[1]  the stock counter, only read.
-- KEYS[2]  the job record: set to Redis's clock in µs when the job starts (expires in 600 s).
-- ARGV[1]  ms to keep reading, a canonical integer from 1 to 10000.
--
-- Returns  the number of reads made (at least 1).
-- Errors   "INVALID_MS ..."  ARGV[1] is not a canonical integer from 1 to 10000; nothing written

local ms = ARGV[1]
if ms == nil or not string.match(ms, '^[1-9][0-9]*$') or tonumber(ms) > 10000 then
  return redis.error_reply('INVALID_MS ms must be a canonical integer from 1 to 10000')
end

local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local start = now_us()
-- The write that makes the rest unkillable.
redis.call('SET', KEYS[2], string.format('%.0f', start), 'EX', 600)
local stop = start + tonumber(ms) * 1000
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
