-- release_hold_ttl.lua: give a hold's units back to the shelf, if its shadow is still there.
--
-- Two callers, one step. The app calls it when the customer walks away or the card is
-- declined (the hold's key still ticks: it is deleted here, and a deleted key publishes no
-- `expired` event). The listener calls it when an `expired` event names the hold (the key
-- is already gone; only the shadow remembers the units). Either way the shadow is deleted
-- in the step that returns its units, so a hold comes back once however often this runs;
-- and an `expired` event that was never heard leaves the shadow, and the units, stranded.
--
-- KEYS[1]  the available counter: a canonical integer.
-- KEYS[2]  the shadows: a set of the hold keys whose units are not settled yet.
-- KEYS[3]  the held counter: units in unsettled holds, a canonical integer.
-- KEYS[4]  the customers: a hash of customer -> units held or bought.
-- KEYS[5]  the hold's key (with its TTL, or already expired).
-- KEYS[6]  the hold's shadow hash.
--
-- Returns  {1, qty, available_after, expires_at}  released: qty units are back; the hold was due at expires_at
--          {0, 0, available, 0}                   gone: settled already, nothing changed
-- Errors   "HOLD_CORRUPT ..."         KEYS[6] exists but holds no canonical qty >= 1, customer and expires_at
--          "STOCK_NOT_INTEGER ..."    KEYS[1] is missing or not a canonical integer
--          "COUNTER_NOT_INTEGER ..."  KEYS[3], or the customer's entry in KEYS[4], is missing or not a canonical integer

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

local available = canonical_integer(redis.call('GET', KEYS[1]))
if available == nil then
  return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[1] .. ' is missing or not an integer')
end
if redis.call('EXISTS', KEYS[6]) == 0 then
  return {0, 0, available, 0}
end
local shadow = redis.call('HMGET', KEYS[6], 'qty', 'customer', 'expires_at')
local qty, customer, expires_at = canonical_integer(shadow[1]), shadow[2], canonical_integer(shadow[3])
if qty == nil or qty < 1 or not customer or expires_at == nil then
  return redis.error_reply('HOLD_CORRUPT ' .. KEYS[6] .. ' has no qty, customer or expires_at')
end
local held = canonical_integer(redis.call('GET', KEYS[3]))
local mine = canonical_integer(redis.call('HGET', KEYS[4], customer))
if held == nil or mine == nil then
  return redis.error_reply('COUNTER_NOT_INTEGER ' .. KEYS[3] .. ' or the entry of ' .. customer .. ' in ' .. KEYS[4])
end

redis.call('DEL', KEYS[5], KEYS[6])
redis.call('SREM', KEYS[2], KEYS[5])
redis.call('DECRBY', KEYS[3], qty)
redis.call('HINCRBY', KEYS[4], customer, -qty)
return {1, qty, redis.call('INCRBY', KEYS[1], qty), expires_at}
