-- release_hold.lua: give a hold's units back to the shelf, only if it is still held.
--
-- The customer walked away or the payment was declined; the app gives the units back at
-- once instead of waiting for the expiry. If the hold is gone (confirmed, released, or
-- expired and returned by the reaper), nothing changes: a hold released twice returns its
-- units once. A hold past its expiry that the reaper has not reached yet is still a hold:
-- this returns it, and the reaper then finds nothing.
--
-- KEYS[1]  the available counter: a canonical integer.
-- KEYS[2]  the holds: a sorted set of hold keys, each scored by its expiry (shop ms).
-- KEYS[3]  the held counter: units in active holds, a canonical integer.
-- KEYS[4]  the customers: a hash of customer -> units held or bought.
-- KEYS[5]  the hold's hash.
--
-- Returns  {1, qty, available_after}  released: qty units are back on the shelf
--          {0, 0, available}          gone: nothing changed
-- Errors   "HOLD_CORRUPT ..."         KEYS[5] is listed in KEYS[2] but holds no canonical qty >= 1 and a customer
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
if not redis.call('ZSCORE', KEYS[2], KEYS[5]) then
  return {0, 0, available}
end
local hold = redis.call('HMGET', KEYS[5], 'qty', 'customer')
local qty, customer = canonical_integer(hold[1]), hold[2]
if qty == nil or qty < 1 or not customer then
  return redis.error_reply('HOLD_CORRUPT ' .. KEYS[5] .. ' has no qty or no customer')
end
local held = canonical_integer(redis.call('GET', KEYS[3]))
local mine = canonical_integer(redis.call('HGET', KEYS[4], customer))
if held == nil or mine == nil then
  return redis.error_reply('COUNTER_NOT_INTEGER ' .. KEYS[3] .. ' or the entry of ' .. customer .. ' in ' .. KEYS[4])
end

redis.call('ZREM', KEYS[2], KEYS[5])
redis.call('DEL', KEYS[5])
redis.call('DECRBY', KEYS[3], qty)
redis.call('HINCRBY', KEYS[4], customer, -qty)
return {1, qty, redis.call('INCRBY', KEYS[1], qty)}
