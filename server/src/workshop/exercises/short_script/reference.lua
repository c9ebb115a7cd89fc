-- short_script.lua: take qty units off a shelf kept as a list, quickly however long it is.
--
-- KEYS[1]  the shelf: a list of unit ids, one entry per unit in stock.
-- ARGV[1]  qty: the units wanted, a positive integer.
--
-- Returns  1  qty units were taken off the list
--          0  fewer than qty remain: nothing taken
-- Limit    one call may hold Redis for at most 1 ms, with 50,000 units on the shelf

local qty = tonumber(ARGV[1])
if redis.call('LLEN', KEYS[1]) < qty then
  return 0
end
redis.call('LPOP', KEYS[1], qty)
return 1
