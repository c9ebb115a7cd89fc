-- acquire_fenced_lock.lua: take the lock and get a fencing token, in one step.
--
-- A lock with a lease (SET NX PX) can expire while its holder is stalled, and then two
-- buyers believe they hold it. A fencing token makes that harmless: every time the lock is
-- taken, the holder also gets a number one higher than any handed out before, and the stock
-- refuses any token older than the newest it has seen (fenced_get.lua, fenced_decrby.lua).
-- Taking the lock and drawing the token in one script means the newest token always
-- belongs to the newest holder. The lock key holds the token itself, so release_lock.lua
-- gives it back by comparing that token.
--
-- KEYS[1]  the lock key: holds the holder's token while the lock is taken.
-- KEYS[2]  the fence counter: the last token handed out, a canonical integer (missing means none yet).
-- ARGV[1]  lease_ms: how long the lock lives, a canonical integer >= 1.
-- ARGV[2]  key_ttl_s: how long KEYS[2] lives after this call, a canonical integer >= 1.
--
-- Returns  token  taken: KEYS[1] holds this token for lease_ms, and so does KEYS[2]
--          nil    busy: someone holds the lock; nothing changed
-- Errors   "INVALID_LEASE ..."      ARGV[1] is missing or not a canonical integer >= 1
--          "INVALID_TTL ..."        ARGV[2] is missing or not a canonical integer >= 1
--          "FENCE_NOT_INTEGER ..."  KEYS[2] holds something other than a canonical integer >= 0
--
-- "Canonical" means what Redis itself writes: an optional minus sign, then at most 15
-- digits with no leading zero ("0" alone is fine), exactly as in reserve.lua.

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

local lease_ms = canonical_integer(ARGV[1])
if lease_ms == nil or lease_ms < 1 then
  return redis.error_reply('INVALID_LEASE lease_ms must be a canonical integer >= 1, got ' .. tostring(ARGV[1]))
end
local key_ttl_s = canonical_integer(ARGV[2])
if key_ttl_s == nil or key_ttl_s < 1 then
  return redis.error_reply('INVALID_TTL key_ttl_s must be a canonical integer >= 1, got ' .. tostring(ARGV[2]))
end

local last = 0
local raw = redis.call('GET', KEYS[2])
if raw then
  last = canonical_integer(raw)
  if last == nil or last < 0 then
    return redis.error_reply('FENCE_NOT_INTEGER ' .. KEYS[2] .. ' holds ' .. raw)
  end
end

if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local token = last + 1
redis.call('SET', KEYS[2], token, 'EX', key_ttl_s)
redis.call('SET', KEYS[1], token, 'PX', lease_ms)
return token
