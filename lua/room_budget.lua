-- room_budget.lua: take from a budget that starts over every window, or refuse.
--
-- Rooms are shared by every server process, so what one address may do with them (rooms
-- created, sale time, bots, new seats, clicks) is counted in Redis, where every process
-- sees the same count. Reading the count and adding to it in the app would let two
-- processes both see room for one more; here the check and the add are one step. The
-- window starts with the first take and the counter disappears with it.
--
-- Every read is checked before the first write: a refusal or an error changes nothing.
--
-- KEYS[1]  the budget's counter: units taken in this window (missing means none yet).
-- ARGV[1]  amount: units to take, a canonical integer >= 1.
-- ARGV[2]  cap: units one window allows, a canonical integer >= 1.
-- ARGV[3]  window_ms: the window's length, a canonical integer >= 1.
--
-- Returns  {1, taken, ms_left}  taken: the counter is now taken; the window ends in ms_left
--          {0, taken, ms_left}  refused: amount more would pass cap, nothing changed
-- Errors   "INVALID_COUNT ..."        ARGV[1] or ARGV[2] is missing or not a canonical integer >= 1
--          "INVALID_TIME ..."         ARGV[3] is missing or not a canonical integer >= 1
--          "COUNTER_NOT_INTEGER ..."  KEYS[1] holds something other than a canonical integer

local function canonical_integer(s)
  if s == '0' then
    return 0
  end
  local digits = type(s) == 'string' and string.match(s, '^%-?([1-9]%d*)$')
  if not digits or #digits > 15 then
    return nil
  end
  return tonumber(s)
end

local amount, cap = canonical_integer(ARGV[1]), canonical_integer(ARGV[2])
if amount == nil or amount < 1 or cap == nil or cap < 1 then
  return redis.error_reply('INVALID_COUNT amount and cap must be canonical integers >= 1')
end
local window = canonical_integer(ARGV[3])
if window == nil or window < 1 then
  return redis.error_reply('INVALID_TIME window_ms must be a canonical integer >= 1, got ' .. tostring(ARGV[3]))
end
local raw = redis.call('GET', KEYS[1])
local taken = 0
if raw then
  taken = canonical_integer(raw)
  if taken == nil then
    return redis.error_reply('COUNTER_NOT_INTEGER ' .. KEYS[1] .. ' holds ' .. raw)
  end
end

if taken + amount > cap then
  return {0, taken, math.max(redis.call('PTTL', KEYS[1]), 0)}
end
taken = redis.call('INCRBY', KEYS[1], amount)
if taken == amount then
  redis.call('PEXPIRE', KEYS[1], window)
end
return {1, taken, math.max(redis.call('PTTL', KEYS[1]), 0)}
