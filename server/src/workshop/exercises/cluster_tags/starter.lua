-- keys: stock:%sku
-- cluster_cart.lua: a cart of three products, every line or none, on a Redis Cluster.
--
-- KEYS[1]  the phone's stock counter (a missing key means 0 in stock): the name your
--          `-- keys:` line spells with %sku = phone, after the judge's prefix oversold:CHECK:
-- KEYS[2]  the case's stock counter (%sku = case).
-- KEYS[3]  the charger's stock counter (%sku = charger).
--          The three must hash to one slot of the cluster, or it refuses every call
--          (CROSSSLOT) before the script runs a line.
-- ARGV[1]  the units of the phone wanted, a positive integer (ARGV[2], ARGV[3] likewise).
--
-- Returns  1  every line was taken
--          0  some line had too few units: nothing was taken

for i = 1, #KEYS do
  if tonumber(redis.call('GET', KEYS[i]) or '0') < tonumber(ARGV[i]) then
    return 0
  end
end
for i = 1, #KEYS do
  redis.call('DECRBY', KEYS[i], ARGV[i])
end
return 1
