-- hold.lua: keep units for a buyer until a deadline, and give back the holds nobody paid for.
--
-- KEYS[1]  the stock counter: units on the shelf (a missing key means 0).
-- KEYS[2]  the expiries: a sorted set of hold id -> the moment the hold ends (shop ms).
-- KEYS[3]  the holds: a hash of hold id -> units held. A hold is in KEYS[2] and KEYS[3]
--          together, or in neither.
-- ARGV[1]  the mode: "hold" (a buyer's call) or "reap" (the reaper's).
--          hold: ARGV[2] qty, ARGV[3] hold id (never used before), ARGV[4] now_ms,
--                ARGV[5] ttl_ms; all but the id positive integers.
--          reap: ARGV[2] now_ms, ARGV[3] batch: the most holds one call releases (>= 1).
--
-- Returns  hold: 1  qty units left the shelf into the hold, which ends at now_ms + ttl_ms
--                0  there were not enough: nothing changed
--          reap: the number of holds released: those that end at or before now_ms, the
--                earliest first (ties by hold id, the sorted set's order), at most batch.
--                Each one's units are back on the shelf, and it is gone from both keys, so
--                no hold is ever released twice and no running hold is released at all.

local stock, expiries, holds = KEYS[1], KEYS[2], KEYS[3]

if ARGV[1] == 'hold' then
  local qty, id = tonumber(ARGV[2]), ARGV[3]
  local now, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
  if tonumber(redis.call('GET', stock) or '0') < qty then
    return 0
  end
  redis.call('DECRBY', stock, qty)
  redis.call('HSET', holds, id, qty)
  -- The score is the moment the hold ends, not how long it lasts: then the holds due are
  -- one range of scores, everything up to the reaper's now.
  redis.call('ZADD', expiries, now + ttl, id)
  return 1
end

local now, batch = tonumber(ARGV[2]), tonumber(ARGV[3])
local due = redis.call('ZRANGE', expiries, '-inf', now, 'BYSCORE', 'LIMIT', 0, batch)
local released = 0
for _, id in ipairs(due) do
  -- Unlisted, forgotten and its units back in one script: whoever comes next (another
  -- reap, a confirm) finds it gone.
  redis.call('ZREM', expiries, id)
  local qty = redis.call('HGET', holds, id)
  if qty then
    redis.call('HDEL', holds, id)
    redis.call('INCRBY', stock, qty)
    released = released + 1
  end
end
return released
