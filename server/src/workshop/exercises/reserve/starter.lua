-- reserve.lua: take qty units from the stock, or none.
--
-- KEYS[1]  the stock counter (a missing key means 0 in stock).
-- ARGV[1]  qty: the units wanted, a positive integer.
--
-- Returns  1  the units were taken
--          0  there were not enough: the stock is unchanged

local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
if stock > 0 then
  redis.call('DECRBY', KEYS[1], ARGV[1])
  return 1
end
return 0
