#!lua name=oversold_busy
-- busy_function.lua: busy_write.lua's job as a Redis Function, for the busy_script
-- scenario's slow_function client.
--
-- A Function runs on Redis's one command thread exactly like a script: past
-- busy-reply-threshold every other client gets BUSY. FUNCTION KILL (not SCRIPT KILL) is
-- what stops a function, and only one that has written nothing; this one writes first, so
-- FUNCTION KILL answers UNKILLABLE and only SHUTDOWN NOSAVE ends it.
--
-- Library  oversold_busy
-- Function oversold_busy_write, called as: FCALL oversold_busy_write 2 <stock key> <job key> <ms>
--
-- KEYS[1]  the stock counter, only read.
-- KEYS[2]  the job record: set to Redis's clock in µs when the job starts (expires in 600 s).
-- ARGV[1]  ms to keep reading, a canonical integer from 1 to 10000.
--
-- Returns  the number of reads made (at least 1).
-- Errors   "INVALID_MS ..."  ARGV[1] is not a canonical integer from 1 to 10000; nothing written

local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function slow_write(keys, args)
  local ms = args[1]
  if ms == nil or not string.match(ms, '^[1-9][0-9]*$') or tonumber(ms) > 10000 then
    return redis.error_reply('INVALID_MS ms must be a canonical integer from 1 to 10000')
  end
  local start = now_us()
  -- The write that makes the rest unkillable.
  redis.call('SET', keys[2], string.format('%.0f', start), 'EX', 600)
  local stop = start + tonumber(ms) * 1000
  local reads = 0
  -- Bounded twice: by Redis's clock, and by a loop count no real clock can need.
  for _ = 1, 100000000 do
    redis.call('GET', keys[1])
    reads = reads + 1
    if now_us() >= stop then
      break
    end
  end
  return reads
end

redis.register_function('oversold_busy_write', slow_write)
