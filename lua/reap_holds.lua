-- reap_holds.lua: give back the units of at most `batch` expired holds, oldest first.
--
-- A hold nobody confirms or releases (its app server crashed, its client vanished) must
-- still come back. The holds are a sorted set scored by expiry, so the expired ones are
-- the cheapest range to find. A script blocks every other client while it runs, so each
-- call does a bounded amount of work: the reaper calls again while `still_due` > 0.
--
-- The hold keys come out of KEYS[2] rather than from the caller: the one place a script
-- here touches keys it was not handed. Each was written there by a reserve script, and
-- shares the run's hash tag, so a Redis Cluster keeps them on this call's slot.
--
-- Every hold of the batch and every counter is checked before the first write: an error
-- changes nothing.
--
-- KEYS[1]  the available counter: a canonical integer.
-- KEYS[2]  the holds: a sorted set of hold keys, each scored by its expiry (shop ms).
-- KEYS[3]  the held counter: units in active holds, a canonical integer.
-- KEYS[4]  the customers: a hash of customer -> units held or bought.
-- ARGV[1]  now: the shop clock in ms, a canonical integer >= 0; a hold with expiry <= now is due.
-- ARGV[2]  batch: most holds to return in this call, a canonical integer from 1 to 1000.
--
-- Returns  {holds_returned, units_returned, still_due, holds_left}  still_due: due holds left for the next call
-- Errors   "INVALID_TIME ..."         ARGV[1] is missing or not a canonical integer >= 0
--          "INVALID_BATCH ..."        ARGV[2] is missing or not a canonical integer from 1 to 1000
--          "HOLD_CORRUPT ..."         a due hold holds no canonical qty >= 1 and a customer
--          "STOCK_NOT_INTEGER ..."    KEYS[1] is missing or not a canonical integer, with holds due
--          "COUNTER_NOT_INTEGER ..."  KEYS[3], or a due hold's customer entry in KEYS[4], is not a canonical integer

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

local now = canonical_integer(ARGV[1])
if now == nil or now < 0 then
  return redis.error_reply('INVALID_TIME now must be a canonical integer >= 0, got ' .. tostring(ARGV[1]))
end
local batch = canonical_integer(ARGV[2])
if batch == nil or batch < 1 or batch > 1000 then
  return redis.error_reply('INVALID_BATCH batch must be a canonical integer from 1 to 1000, got ' .. tostring(ARGV[2]))
end

local due = redis.call('ZRANGE', KEYS[2], '-inf', now, 'BYSCORE', 'LIMIT', 0, batch)
if #due == 0 then
  return {0, 0, 0, redis.call('ZCARD', KEYS[2])}
end

-- First pass: read and check everything this call will touch.
local holds, units = {}, 0
for i, key in ipairs(due) do
  local hold = redis.call('HMGET', key, 'qty', 'customer')
  local qty, customer = canonical_integer(hold[1]), hold[2]
  if qty == nil or qty < 1 or not customer then
    return redis.error_reply('HOLD_CORRUPT ' .. key .. ' has no qty or no customer')
  end
  if canonical_integer(redis.call('HGET', KEYS[4], customer)) == nil then
    return redis.error_reply('COUNTER_NOT_INTEGER the entry of ' .. customer .. ' in ' .. KEYS[4])
  end
  holds[i] = {key, qty, customer}
  units = units + qty
end
if canonical_integer(redis.call('GET', KEYS[1])) == nil then
  return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[1] .. ' is missing or not an integer')
end
if canonical_integer(redis.call('GET', KEYS[3])) == nil then
  return redis.error_reply('COUNTER_NOT_INTEGER ' .. KEYS[3] .. ' is missing or not an integer')
end

-- Second pass: give every unit back.
for _, hold in ipairs(holds) do
  redis.call('ZREM', KEYS[2], hold[1])
  redis.call('DEL', hold[1])
  redis.call('HINCRBY', KEYS[4], hold[3], -hold[2])
end
redis.call('INCRBY', KEYS[1], units)
redis.call('DECRBY', KEYS[3], units)
local still_due = redis.call('ZCOUNT', KEYS[2], '-inf', now)
return {#holds, units, still_due, redis.call('ZCARD', KEYS[2])}
