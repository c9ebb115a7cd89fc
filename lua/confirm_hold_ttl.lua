-- confirm_hold_ttl.lua: turn a hold that Redis expires into a sale, if it is still unsettled
-- and has not expired.
--
-- The payment went through. A hold whose shadow is gone was settled already (released,
-- confirmed, or given back on its `expired` event): nothing changes. A hold whose key Redis
-- no longer has, or whose expiry on the shop clock has passed, is not confirmed either: it is
-- left for the listener, which gives the units back when its `expired` event arrives (if it
-- arrives). Otherwise the hold's key and shadow are deleted (a deleted key publishes no
-- `expired` event, so nobody gives these units back) and the units count as sold.
--
-- KEYS[1]  the shadows: a set of the hold keys whose units are not settled yet.
-- KEYS[2]  the hold's key (with its TTL).
-- KEYS[3]  the hold's shadow hash.
-- KEYS[4]  the held counter: units in unsettled holds, a canonical integer (missing means 0).
-- KEYS[5]  the sold counter: units confirmed in Redis, a canonical integer (missing means 0).
-- ARGV[1]  now: the shop clock in ms, a canonical integer >= 0.
-- ARGV[2]  key_ttl: seconds the sold counter may live, a canonical integer >= 1.
--
-- Returns  {1, qty}   confirmed: the hold is gone and its units count as sold
--          {0, 0}     gone: its shadow is gone (settled already); nothing changed
--          {-1, qty}  expired: its key is gone or now >= its expiry; left for the listener, nothing changed
-- Errors   "INVALID_TIME ..."         ARGV[1] or ARGV[2] is missing or not a canonical integer in range
--          "HOLD_CORRUPT ..."         KEYS[3] exists but holds no canonical qty >= 1 and expires_at
--          "COUNTER_NOT_INTEGER ..."  KEYS[4] or KEYS[5] is not a canonical integer

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

if redis.call('EXISTS', KEYS[3]) == 0 then
  return {0, 0}
end
local shadow = redis.call('HMGET', KEYS[3], 'qty', 'expires_at')
local qty, expires_at = canonical_integer(shadow[1]), canonical_integer(shadow[2])
if qty == nil or qty < 1 or expires_at == nil then
  return redis.error_reply('HOLD_CORRUPT ' .. KEYS[3] .. ' has no qty or no expires_at')
end
if now >= expires_at or redis.call('EXISTS', KEYS[2]) == 0 then
  return {-1, qty}
end
local held, sold = stored(redis.call('GET', KEYS[4])), stored(redis.call('GET', KEYS[5]))
if held == nil or sold == nil then
  return redis.error_reply('COUNTER_NOT_INTEGER ' .. KEYS[4] .. ' or ' .. KEYS[5])
end

redis.call('DEL', KEYS[2], KEYS[3])
redis.call('SREM', KEYS[1], KEYS[2])
redis.call('DECRBY', KEYS[4], qty)
redis.call('INCRBY', KEYS[5], qty)
redis.call('EXPIRE', KEYS[5], key_ttl, 'NX')
return {1, qty}
