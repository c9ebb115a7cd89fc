-- quantity.lua: take qty units from the stock, or none; refuse what is not a number.
--
-- KEYS[1]  the stock counter (a missing key means 0 in stock).
-- ARGV[1]  qty: the units wanted, a canonical integer >= 1 ("1", "12"; not "01", "1.5", "1e2").
--
-- Returns  1  the units were taken
--          0  there were not enough: the stock is unchanged
-- Errors   "BAD_INPUT ..."  ARGV[1] is not a canonical integer >= 1, or KEYS[1] holds
--                           something other than a canonical integer: nothing changed

local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
local qty = tonumber(ARGV[1])
if qty == nil then
  return redis.error_reply('BAD_INPUT qty is not a number')
end
if stock < qty then
  return 0
end
redis.call('DECRBY', KEYS[1], qty)
return 1
