-- cart.lua: take every line of a cart, or nothing at all.
--
-- KEYS[1]  SKU 1's stock counter (a missing key means 0 in stock); every key shares one hash tag.
-- KEYS[2]  SKU 2's stock counter.
-- KEYS[3]  SKU 3's stock counter.
-- ARGV[1]  the units of SKU 1 wanted, a positive integer (ARGV[2], ARGV[3] likewise).
--
-- Returns  1  every line was taken
--          0  some line had too few units: nothing was taken

for i = 1, #KEYS do
  local left = redis.call('DECRBY', KEYS[i], ARGV[i])
  if left < 0 then
    redis.call('INCRBY', KEYS[i], ARGV[i])
    return 0
  end
end
return 1
