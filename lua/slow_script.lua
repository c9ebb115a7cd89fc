-- slow_script.lua: a deliberately slow script, for the "slow script" chaos button.
--
-- Redis runs one script at a time and nothing else while it runs: every other client,
-- the health check's PING included, waits behind it. This spins until ARGV[1] ms of
-- Redis's own clock (TIME) have passed, so the stall is measured, not guessed. It writes
-- nothing, and the length is capped well under lua-time-limit (5 s), so Redis never
-- reports the script as busy and nobody has to SCRIPT KILL it.
--
-- KEYS     none.
-- ARGV[1]  ms to spin, a canonical integer from 1 to 1000.
--
-- Returns  the µs actually spent (Redis's clock).
-- Errors   "INVALID_MS ..."  ARGV[1] is not a canonical integer from 1 to 1000

local ms = ARGV[1]
if ms == nil or not string.match(ms, '^[1-9][0-9]*$') or tonumber(ms) > 1000 then
  return redis.error_reply('INVALID_MS ms must be a canonical integer from 1 to 1000')
end

local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local start = now_us()
local stop = start + tonumber(ms) * 1000
local now = start
-- Bounded twice: by the clock, and by a loop count no real clock can need.
for _ = 1, 100000000 do
  now = now_us()
  if now >= stop then
    break
  end
end
return now - start
