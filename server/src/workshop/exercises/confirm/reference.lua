-- confirm.lua: the payment went through: sell a hold's units, if the hold still stands.
--
-- KEYS[1]  the stock counter: units on the shelf. Confirm never touches it: a hold's units
--          left the shelf when the hold was made.
-- KEYS[2]  the expiries: a sorted set of hold id -> the moment the hold ends (shop ms).
-- KEYS[3]  the holds: a hash of hold id -> units held. A hold is in KEYS[2] and KEYS[3]
--          together, or in neither.
-- KEYS[4]  the sold counter: units sold (a missing key means 0).
-- ARGV[1]  hold id.
-- ARGV[2]  qty: the units the order paid for, as the app wrote them down when it made the hold.
-- ARGV[3]  now_ms: the shop's clock when the payment landed, a positive integer.
--
-- Returns  1   sold: the hold is gone from KEYS[2] and KEYS[3], and its units are added to KEYS[4]
--          0   no such hold (the reaper gave it back, it was sold already, it was never
--              made): nothing changed
--          -1  the hold has ended (now_ms >= its end) and is the reaper's: nothing changed
-- Beside   the shop's reaper (the hold exercise's "reap"), which may run just before or just
--          after this script, and gives back every hold that ends at or before its own now.

local id, now = ARGV[1], tonumber(ARGV[3])
-- The shop's own record, not the app's memory, says whether there is anything to sell.
local qty = redis.call('HGET', KEYS[3], id)
if not qty then
  return 0
end
if now >= tonumber(redis.call('ZSCORE', KEYS[2], id)) then
  return -1
end
-- Sold, unlisted and forgotten in one script: the reaper can no longer give it back.
redis.call('ZREM', KEYS[2], id)
redis.call('HDEL', KEYS[3], id)
redis.call('INCRBY', KEYS[4], qty)
return 1
