-- confirm_hold.lua: turn a hold into a sale, only if it is still held and has not expired.
--
-- The payment went through; the app asks Redis to make it final. If a release or the
-- reaper got to the hold first, or this very hold was confirmed already, it is gone and
-- nothing changes. If its expiry has passed, it is not confirmed either: it stays for the
-- reaper, which gives the units back (and the shop refunds the late payer). So a hold is
-- sold, or returned, exactly once.
--
-- KEYS[1]  the holds: a sorted set of hold keys, each scored by its expiry (shop ms).
-- KEYS[2]  the hold's hash.
-- KEYS[3]  the held counter: units in active holds, a canonical integer (missing means 0).
-- KEYS[4]  the sold counter: units confirmed in Redis, a canonical integer (missing means 0).
-- ARGV[1]  now: the shop clock in ms, a canonical integer >= 0.
-- ARGV[2]  key_ttl: seconds the sold counter may live, a canonical integer >= 1.
--
-- Returns  {1, qty}   confirmed: the hold is gone and its units count as sold
--          {0, 0}     gone: released, confirmed, or expired and returned already; nothing changed
--          {-1, qty}  expired: now >= its expiry; it is left for the reaper, nothing changed
-- Errors   "INVALID_TIME ..."         ARGV[1] or ARGV[2] is missing or not a canonical integer in range
--          "HOLD_CORRUPT ..."         KEYS[2] is listed in KEYS[1] but holds no canonical qty >= 1
--          "COUNTER_NOT_INTEGER ..."  KEYS[3] or KEYS[4] is not a canonical integer

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

local now, key_ttl = canonical_integer(ARGV[1]), canonical_integer(ARGV[2])
if now == nil or now < 0 or key_ttl == nil or key_ttl < 1 then
  return redis.error_reply('INVALID_TIME now >= 0 and key_ttl >= 1 must be canonical integers')
end

local expires_at = redis.call('ZSCORE', KEYS[1], KEYS[2])
if not expires_at then
  return {0, 0}
end
local qty = canonical_integer(redis.call('HGET', KEYS[2], 'qty'))
if qty == nil or qty < 1 then
  return redis.error_reply('HOLD_CORRUPT ' .. KEYS[2] .. ' has no qty')
end
if now >= tonumber(expires_at) then
  return {-1, qty}
end
local held, sold = stored(redis.call('GET', KEYS[3])), stored(redis.call('GET', KEYS[4]))
if held == nil or sold == nil then
  return redis.error_reply('COUNTER_NOT_INTEGER ' .. KEYS[3] .. ' or ' .. KEYS[4])
end

redis.call('ZREM', KEYS[1], KEYS[2])
redis.call('DEL', KEYS[2])
redis.call('DECRBY', KEYS[3], qty)
redis.call('INCRBY', KEYS[4], qty)
redis.call('EXPIRE', KEYS[4], key_ttl, 'NX')
return {1, qty}
