-- reserve_hold_once.lua: reserve_hold.lua, plus the request id recorded in the same step,
-- so a request sent twice is answered twice but reserves once.
--
-- A client that times out resends the same request. The first call records its answer
-- under the request id; any later call with that id changes nothing and returns the
-- recorded answer (with the hold the first call made). The check and the record are in
-- one script, so two copies arriving together cannot both reserve.
--
-- Every read is checked before the first write: a refusal or an error changes nothing.
--
-- KEYS[1]  the available counter: a canonical integer. A missing key means 0 available.
-- KEYS[2]  the holds: a sorted set of hold keys, each scored by its expiry (shop ms).
-- KEYS[3]  the held counter: units in active holds, a canonical integer (missing means 0).
-- KEYS[4]  the customers: a hash of customer -> units held or bought (missing means 0).
-- KEYS[5]  the new hold's hash: must not exist yet (unless the request is recorded).
-- KEYS[6]  the record: a hash of request id -> the answer it got.
-- ARGV[1]  qty: units wanted, a canonical integer >= 1.
-- ARGV[2]  now: the shop clock in ms, a canonical integer >= 0.
-- ARGV[3]  ttl: how long the hold lasts in shop ms, a canonical integer >= 1.
-- ARGV[4]  customer: who orders (non-empty).
-- ARGV[5]  request: the order's request id (non-empty); the record's key.
-- ARGV[6]  key_ttl: seconds any key written here may live, a canonical integer >= 1.
--
-- Returns  {1, available_after, expires_at, customer_units, hold, 0}  held now: hold is KEYS[5]
--          {0, available, 0, customer_units, "", 0}                   sold out now; the refusal is recorded too
--          {1, available, expires_at, customer_units, hold, 1}        from the record: the hold the first call made; nothing changed
--          {0, available, 0, customer_units, "", 1}                   from the record: the first call was sold out; nothing changed
-- Errors   "INVALID_QTY ..."          ARGV[1] is missing or not a canonical integer >= 1
--          "INVALID_TIME ..."         ARGV[2], ARGV[3] or ARGV[6] is missing or not a canonical integer in range
--          "INVALID_ID ..."           ARGV[4] or ARGV[5] is missing or empty
--          "RECORD_CORRUPT ..."       the request's entry in KEYS[6] is not an answer this script wrote
--          "HOLD_EXISTS ..."          KEYS[5] already exists and the request is not recorded
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
local now, ttl, key_ttl = canonical_integer(ARGV[2]), canonical_integer(ARGV[3]), canonical_integer(ARGV[6])
if now == nil or now < 0 or ttl == nil or ttl < 1 or key_ttl == nil or key_ttl < 1 then
  return redis.error_reply('INVALID_TIME now >= 0, ttl >= 1 and key_ttl >= 1 must be canonical integers')
end
local customer, request = ARGV[4], ARGV[5]
if not customer or customer == '' or not request or request == '' then
  return redis.error_reply('INVALID_ID customer and request must be non-empty')
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

-- Seen before? Answer as the first time, and touch nothing.
local recorded = redis.call('HGET', KEYS[6], request)
if recorded then
  if recorded == '0' then
    return {0, available, 0, mine, '', 1}
  end
  local expires, hold = string.match(recorded, '^1 (%d+) (.+)$')
  if not expires then
    return redis.error_reply('RECORD_CORRUPT ' .. request .. ' in ' .. KEYS[6] .. ' holds ' .. recorded)
  end
  return {1, available, tonumber(expires), mine, hold, 1}
end

if redis.call('EXISTS', KEYS[5]) == 1 then
  return redis.error_reply('HOLD_EXISTS ' .. KEYS[5] .. ' is already a hold')
end

if available < qty then
  redis.call('HSET', KEYS[6], request, '0')
  redis.call('EXPIRE', KEYS[6], key_ttl, 'NX')
  return {0, available, 0, mine, '', 0}
end

local expires_at = now + ttl
local after = redis.call('DECRBY', KEYS[1], qty)
redis.call('HSET', KEYS[5], 'qty', qty, 'customer', customer, 'request', request, 'expires_at', expires_at)
redis.call('EXPIRE', KEYS[5], key_ttl)
redis.call('ZADD', KEYS[2], expires_at, KEYS[5])
redis.call('INCRBY', KEYS[3], qty)
mine = redis.call('HINCRBY', KEYS[4], customer, qty)
redis.call('HSET', KEYS[6], request, '1 ' .. expires_at .. ' ' .. KEYS[5])
for i = 2, 6 do
  if i ~= 5 then
    redis.call('EXPIRE', KEYS[i], key_ttl, 'NX')
  end
end
return {1, after, expires_at, mine, KEYS[5], 0}
