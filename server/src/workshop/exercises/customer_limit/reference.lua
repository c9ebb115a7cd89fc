-- customer_limit.lua: take units, but never more than a customer's limit over all their orders.
--
-- KEYS[1]  the stock counter (a missing key means 0 in stock).
-- KEYS[2]  units bought so far: a hash of customer id -> units (same hash tag).
-- ARGV[1]  qty: the units wanted, a positive integer.
-- ARGV[2]  customer: the customer's id (non-empty).
-- ARGV[3]  limit: the most units one customer may buy in all, a positive integer.
--
-- Returns  1   the units were taken, and counted against the customer
--          0   there were not enough in stock: nothing changed
--          -1  the customer would pass their limit (checked before the stock): nothing changed

local qty, limit = tonumber(ARGV[1]), tonumber(ARGV[3])
local bought = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
if bought + qty > limit then
  return -1
end
if tonumber(redis.call('GET', KEYS[1]) or '0') < qty then
  return 0
end
redis.call('DECRBY', KEYS[1], qty)
redis.call('HINCRBY', KEYS[2], ARGV[2], qty)
return 1
