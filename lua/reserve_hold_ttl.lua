-- reserve_hold_ttl.lua: take `qty` units off the shelf into a hold that Redis itself expires.
--
-- The hold is a plain key with a TTL (PX), and nothing lists it by expiry: when Redis removes
-- it, Redis publishes an `expired` keyspace event, and whoever listens gives the units back.
-- Once the key is gone nothing in it can be read, so the hold's contents live on in a
-- *shadow* hash that does not expire with it (only with the run). The shadow is the record
-- of the units: confirm_hold_ttl.lua and release_hold_ttl.lua each delete it in the same
-- step that moves its units, so whichever comes first settles the hold, once.
-- Redis has no shop clock, so the caller passes `now`, the hold's life on the shop clock
-- (`ttl`) and the same life in real ms (`px`), which is what Redis counts down.
--
-- Every read is checked before the first write: a refusal or an error changes nothing.
--
-- KEYS[1]  the available counter: a canonical integer. A missing key means 0 available.
-- KEYS[2]  the shadows: a set of the hold keys whose units are not settled yet.
-- KEYS[3]  the held counter: units in unsettled holds, a canonical integer (missing means 0).
-- KEYS[4]  the customers: a hash of customer -> units held or bought (missing means 0).
-- KEYS[5]  the new hold's key: must not exist yet; written with a TTL of `px` ms.
-- KEYS[6]  the new hold's shadow hash: must not exist yet.
-- ARGV[1]  qty: units wanted, a canonical integer >= 1.
-- ARGV[2]  now: the shop clock in ms, a canonical integer >= 0.
-- ARGV[3]  ttl: how long the hold lasts in shop ms, a canonical integer >= 1.
-- ARGV[4]  customer: who orders (non-empty).
-- ARGV[5]  request: the order's request id (non-empty).
-- ARGV[6]  key_ttl: seconds the shadow and the counters may live, a canonical integer >= 1.
-- ARGV[7]  px: the hold's life in real ms, a canonical integer >= 1.
--
-- Returns  {1, available_after, expires_at, customer_units}  held: qty units are the customer's until expires_at
--          {0, available, 0, customer_units}                 sold out: too few units, nothing changed
-- Errors   "INVALID_QTY ..."          ARGV[1] is missing or not a canonical integer >= 1
--          "INVALID_TIME ..."         ARGV[2], ARGV[3], ARGV[6] or ARGV[7] is missing or not a canonical integer in range
--          "INVALID_ID ..."           ARGV[4] or ARGV[5] is missing or empty
--          "HOLD_EXISTS ..."          KEYS[5] or KEYS[6] already exists: a hold is never overwritten
--          "STOCK_NOT_INTEGER ..."    KEYS[1] holds something other than a canonical integer
--          "COUNTER_NOT_INTEGER ..."  KEYS[3], or the customer's entry in KEYS[4], is not a canonical integer

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

-- A stored number: missing reads as 0, anything but a canonical integer as nil.
local function stored(raw)
  if not raw then
    return 0
  end
  return canonical_integer(raw)
end

local qty = canonical_integer(ARGV[1])
if qty == nil or qty < 1 then
  return redis.error_reply('INVALID_QTY qty must be a canonical integer >= 1, got ' .. tostring(ARGV[1]))
end
local now, ttl = canonical_integer(ARGV[2]), canonical_integer(ARGV[3])
local key_ttl, px = canonical_integer(ARGV[6]), canonical_integer(ARGV[7])
if now == nil or now < 0 or ttl == nil or ttl < 1 or key_ttl == nil or key_ttl < 1 or px == nil or px < 1 then
  return redis.error_reply('INVALID_TIME now >= 0, ttl >= 1, key_ttl >= 1 and px >= 1 must be canonical integers')
end
local customer, request = ARGV[4], ARGV[5]
if not customer or customer == '' or not request or request == '' then
  return redis.error_reply('INVALID_ID customer and request must be non-empty')
end
if redis.call('EXISTS', KEYS[5]) == 1 or redis.call('EXISTS', KEYS[6]) == 1 then
  return redis.error_reply('HOLD_EXISTS ' .. KEYS[5] .. ' or its shadow is already a hold')
end

local available = stored(redis.call('GET', KEYS[1]))
if available == nil then
  return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[1] .. ' holds ' .. redis.call('GET', KEYS[1]))
end
local held = stored(redis.call('GET', KEYS[3]))
local mine = stored(redis.call('HGET', KEYS[4], customer))
if held == nil or mine == nil then
  return redis.error_reply('COUNTER_NOT_INTEGER ' .. KEYS[3] .. ' or the entry of ' .. customer .. ' in ' .. KEYS[4])
end

if available < qty then
  return {0, available, 0, mine}
end

local expires_at = now + ttl
local after = redis.call('DECRBY', KEYS[1], qty)
redis.call('SET', KEYS[5], qty, 'PX', px)
redis.call('HSET', KEYS[6], 'qty', qty, 'customer', customer, 'request', request, 'expires_at', expires_at)
redis.call('EXPIRE', KEYS[6], key_ttl)
redis.call('SADD', KEYS[2], KEYS[5])
redis.call('INCRBY', KEYS[3], qty)
mine = redis.call('HINCRBY', KEYS[4], customer, qty)
for i = 2, 4 do
  redis.call('EXPIRE', KEYS[i], key_ttl, 'NX')
end
return {1, after, expires_at, mine}
