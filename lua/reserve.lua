-- reserve.lua: check the stock and take `qty` units in one indivisible step.
--
-- Redis runs a script to completion on its single command thread, so no other
-- client's GET or DECRBY can land between the check and the write below. That
-- is the whole fix for the check-then-write race.
--
-- KEYS[1]  the stock counter (a string holding an integer). A missing key means 0 in stock.
-- ARGV[1]  qty: units wanted, a whole number >= 1.
--
-- Returns  {1, stock_before, stock_after}  reserved: the caller now owns qty units
--          {0, stock_before, stock_before} sold out: too few units, nothing changed
-- Errors   "INVALID_QTY ..."    ARGV[1] is missing, not a number, not whole, or < 1
--          "STOCK_NOT_NUMBER ..." KEYS[1] holds something that is not an integer

local qty = tonumber(ARGV[1])
if qty == nil or qty < 1 or qty ~= math.floor(qty) then
  return redis.error_reply('INVALID_QTY qty must be a whole number >= 1, got ' .. tostring(ARGV[1]))
end

local raw = redis.call('GET', KEYS[1])
local stock = 0
if raw then
  stock = tonumber(raw)
  if stock == nil then
    return redis.error_reply('STOCK_NOT_NUMBER ' .. KEYS[1] .. ' holds ' .. raw)
  end
end

if stock >= qty then
  local after = redis.call('DECRBY', KEYS[1], qty)
  return {1, stock, after}
end
return {0, stock, stock}
