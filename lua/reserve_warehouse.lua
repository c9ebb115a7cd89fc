-- reserve_warehouse.lua: take an order from the preferred warehouse, else the nearest one
-- that can fill it, in one indivisible step; optionally split it over several.
--
-- Each warehouse is its own counter. Reading them all and deciding in the app lets two
-- buyers pick the same warehouse for its last units; deciding here, where no other
-- command can run between the look and the take, cannot. With split = 1, an order no
-- single warehouse can fill takes what each has, in order, until it is filled, but only
-- when together they have enough: an order is never half taken.
--
-- Every read is checked before the first write: a refusal or an error changes nothing.
--
-- KEYS[i]  warehouse i's counter, preferred first, then nearest first (1 to 8): a canonical integer. A missing key means 0.
-- ARGV[1]  qty: units wanted, a canonical integer >= 1.
-- ARGV[2]  split: "1" to allow taking from several warehouses, "0" for one only.
--
-- Returns  {1, taken_1, ..., taken_n}  reserved: taken_i units came from warehouse i (they add up to qty)
--          {0, stock_1, ..., stock_n}  sold out: no warehouse (or, with split, not all together) can fill it, nothing changed
-- Errors   "INVALID_CART ..."         no keys, or more than 8
--          "INVALID_QTY ..."          ARGV[1] is missing or not a canonical integer >= 1
--          "INVALID_SPLIT ..."        ARGV[2] is neither "0" nor "1"
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
if n < 1 or n > 8 then
  return redis.error_reply('INVALID_CART want 1 to 8 warehouse keys, got ' .. n)
end
local qty = canonical_integer(ARGV[1])
if qty == nil or qty < 1 then
  return redis.error_reply('INVALID_QTY qty must be a canonical integer >= 1, got ' .. tostring(ARGV[1]))
end
local split = ARGV[2]
if split ~= '0' and split ~= '1' then
  return redis.error_reply('INVALID_SPLIT split must be "0" or "1", got ' .. tostring(split))
end

local stock, total = {}, 0
for i = 1, n do
  local raw = redis.call('GET', KEYS[i])
  stock[i] = 0
  if raw then
    stock[i] = canonical_integer(raw)
    if stock[i] == nil then
      return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[i] .. ' holds ' .. raw)
    end
  end
  if stock[i] > 0 then
    total = total + stock[i]
  end
end

local taken = {}
for i = 1, n do
  taken[i] = 0
end
local filled = false
for i = 1, n do
  if stock[i] >= qty then
    taken[i] = qty
    filled = true
    break
  end
end
if not filled and split == '1' and total >= qty then
  local left = qty
  for i = 1, n do
    if left > 0 and stock[i] > 0 then
      taken[i] = math.min(stock[i], left)
      left = left - taken[i]
    end
  end
  filled = true
end

if not filled then
  local reply = {0}
  for i = 1, n do
    reply[i + 1] = stock[i]
  end
  return reply
end
local reply = {1}
for i = 1, n do
  if taken[i] > 0 then
    redis.call('DECRBY', KEYS[i], taken[i])
  end
  reply[i + 1] = taken[i]
end
return reply
