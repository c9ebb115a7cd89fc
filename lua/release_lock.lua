-- release_lock.lua: give a lock back, but only if we still hold it.
--
-- A lock taken with SET key token NX PX ttl can expire while its holder is still
-- working, and another buyer can then take it with a new token. A bare DEL from the
-- first holder would delete the second holder's lock. Comparing the token and deleting
-- inside one script leaves no gap for that to happen in.
--
-- KEYS[1]  the lock key.
-- ARGV[1]  token: the value this holder wrote when it took the lock (non-empty).
--
-- Returns  1  the lock held this token and is now deleted
--          0  the lock is gone or belongs to someone else: nothing changed
-- Errors   "INVALID_TOKEN ..."  ARGV[1] is missing or empty

local token = ARGV[1]
if token == nil or token == '' then
  return redis.error_reply('INVALID_TOKEN token must be a non-empty string')
end

if redis.call('GET', KEYS[1]) == token then
  return redis.call('DEL', KEYS[1])
end
return 0
