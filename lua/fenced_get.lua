-- fenced_get.lua: read the stock for a lock holder, unless a newer holder has touched it.
--
-- The stock remembers the newest fencing token that has read or written it (KEYS[2]). A
-- holder whose token is older has lost its lock (its lease ran out and someone else took
-- it), so it is refused. Reads are fenced too, not only writes: a holder reads, then
-- writes what it decided from that read. If only writes recorded their token, a stale
-- holder A could read, a new holder B could read the same stock, A's write would still be
-- accepted (B has not written yet), and B would then write from a stale read: oversold.
-- Because B's read records B's token, A's later write is refused.
--
-- KEYS[1]  the stock counter: a canonical integer. A missing key means 0 in stock.
-- KEYS[2]  the stock's fence: the newest token that has touched the stock (missing means none yet).
-- ARGV[1]  token: the caller's fencing token, a canonical integer >= 1.
-- ARGV[2]  key_ttl_s: how long KEYS[2] lives after this call, a canonical integer >= 1.
--
-- Returns  {1, stock}   read: the token is the newest, and KEYS[2] now holds it
--          {0, newest}  fenced out: KEYS[2] holds a newer token; nothing changed
-- Errors   "INVALID_TOKEN ..."      ARGV[1] is missing or not a canonical integer >= 1
--          "INVALID_TTL ..."        ARGV[2] is missing or not a canonical integer >= 1
--          "FENCE_NOT_INTEGER ..."  KEYS[2] holds something other than a canonical integer >= 0
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
local key_ttl_s = canonical_integer(ARGV[2])
if key_ttl_s == nil or key_ttl_s < 1 then
  return redis.error_reply('INVALID_TTL key_ttl_s must be a canonical integer >= 1, got ' .. tostring(ARGV[2]))
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

local stock = 0
local raw = redis.call('GET', KEYS[1])
if raw then
  stock = canonical_integer(raw)
  if stock == nil then
    return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[1] .. ' holds ' .. raw)
  end
end

redis.call('SET', KEYS[2], token, 'EX', key_ttl_s)
return {1, stock}
