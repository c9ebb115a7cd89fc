-- reserve_cart.lua: take every line of a cart, or none, in one indivisible step.
--
-- A cart is several SKUs, each its own counter. Checking every line first and writing
-- only when all of them fit means no other buyer ever sees half a cart taken, and a
-- refused cart leaves nothing behind: no partial cart, no stranded units. On a Redis
-- Cluster a script may only touch keys of one slot, so the cart's keys must share a hash
-- tag ({run-ID}); without one, the cluster refuses the call with CROSSSLOT.
--
-- Every read is checked before the first write: a refusal or an error changes nothing.
--
-- KEYS[i]  SKU i's counter, for each line i (1 to 8 lines): a canonical integer. A missing key means 0 in stock.
-- ARGV[i]  line i's qty: units wanted, a canonical integer >= 1 (one ARGV per KEYS).
--
-- Returns  {1, after_1, ..., after_n}  reserved: every line is the buyer's; each counter after its DECRBY
--          {0, stock_1, ..., stock_n}  sold out: some line has too few units, nothing changed
-- Errors   "INVALID_CART ..."         no keys, more than 8, or not one ARGV per key
--          "INVALID_QTY ..."          some ARGV[i] is not a canonical integer >= 1
--          "STOCK_NOT_INTEGER ..."    some KEYS[i] holds something other than a canonical integer

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

local n = #KEYS
if n < 1 or n > 8 or #ARGV ~= n then
  return redis.error_reply('INVALID_CART want 1 to 8 keys and one qty per key, got ' .. n .. ' keys and ' .. #ARGV .. ' qtys')
end

local qty, stock = {}, {}
for i = 1, n do
  qty[i] = canonical_integer(ARGV[i])
  if qty[i] == nil or qty[i] < 1 then
    return redis.error_reply('INVALID_QTY line ' .. i .. ' qty must be a canonical integer >= 1, got ' .. tostring(ARGV[i]))
  end
  local raw = redis.call('GET', KEYS[i])
  stock[i] = 0
  if raw then
    stock[i] = canonical_integer(raw)
    if stock[i] == nil then
      return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[i] .. ' holds ' .. raw)
    end
  end
end

local short = false
for i = 1, n do
  if stock[i] < qty[i] then
    short = true
  end
end
if short then
  local reply = {0}
  for i = 1, n do
    reply[i + 1] = stock[i]
  end
  return reply
end

local reply = {1}
for i = 1, n do
  reply[i + 1] = redis.call('DECRBY', KEYS[i], qty[i])
end
return reply
