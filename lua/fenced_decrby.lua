-- fenced_decrby.lua: take qty units for a lock holder, unless a newer holder has touched the stock.
--
-- The write half of a fenced read-check-write (see fenced_get.lua for the read half and
-- why both are fenced). The check itself happened in the app, on what fenced_get.lua
-- returned: this script does not look at how much is left. It only guarantees that no
-- newer holder has read or written the stock since this token did, so that check still
-- holds. A refused write changes nothing: the caller never wrote, and may start over.
--
-- KEYS[1]  the stock counter: a canonical integer. It must exist (the read saw the units).
-- KEYS[2]  the stock's fence: the newest token that has touched the stock (missing means none yet).
-- ARGV[1]  token: the caller's fencing token, a canonical integer >= 1.
-- ARGV[2]  qty: units to take, a canonical integer >= 1.
-- ARGV[3]  key_ttl_s: how long KEYS[2] lives after this call, a canonical integer >= 1.
--
-- Returns  {1, stock_after}  written: KEYS[1] is qty lower, and KEYS[2] now holds the token
--          {0, newest}       fenced out: KEYS[2] holds a newer token; nothing changed
-- Errors   "INVALID_TOKEN ..."      ARGV[1] is missing or not a canonical integer >= 1
--          "INVALID_QTY ..."        ARGV[2] is missing or not a canonical integer >= 1
--          "INVALID_TTL ..."        ARGV[3] is missing or not a canonical integer >= 1
--          "FENCE_NOT_INTEGER ..."  KEYS[2] holds something other than a canonical integer >= 0
--          "STOCK_MISSING ..."      KEYS[1] does not exist (the run's stock is gone)
--          "STOCK_NOT_INTEGER ..."  KEYS[1] holds something other than a canonical integer
--
-- "Canonical" means what Redis itself writes, exactly as in reserve.lua.

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

local token = canonical_integer(ARGV[1])
if token == nil or token < 1 then
  return redis.error_reply('INVALID_TOKEN token must be a canonical integer >= 1, got ' .. tostring(ARGV[1]))
end
local qty = canonical_integer(ARGV[2])
if qty == nil or qty < 1 then
  return redis.error_reply('INVALID_QTY qty must be a canonical integer >= 1, got ' .. tostring(ARGV[2]))
end
local key_ttl_s = canonical_integer(ARGV[3])
if key_ttl_s == nil or key_ttl_s < 1 then
  return redis.error_reply('INVALID_TTL key_ttl_s must be a canonical integer >= 1, got ' .. tostring(ARGV[3]))
end

local raw_fence = redis.call('GET', KEYS[2])
if raw_fence then
  local newest = canonical_integer(raw_fence)
  if newest == nil or newest < 0 then
    return redis.error_reply('FENCE_NOT_INTEGER ' .. KEYS[2] .. ' holds ' .. raw_fence)
  end
  if token < newest then
    return {0, newest}
  end
end

local raw = redis.call('GET', KEYS[1])
if not raw then
  return redis.error_reply('STOCK_MISSING ' .. KEYS[1] .. ' does not exist')
end
if canonical_integer(raw) == nil then
  return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[1] .. ' holds ' .. raw)
end

redis.call('SET', KEYS[2], token, 'EX', key_ttl_s)
return {1, redis.call('DECRBY', KEYS[1], qty)}
