-- reserve.lua: check the stock and take `qty` units in one indivisible step.
--
-- Redis runs a script to completion on its single command thread, so no other
-- client's GET or DECRBY can land between the check and the write below. That
-- is the whole fix for the check-then-write race.
--
-- KEYS[1]  the stock counter: a string holding a canonical integer. A missing key means 0 in stock.
-- ARGV[1]  qty: units wanted, a canonical integer >= 1 (digits only, no sign, no leading zero).
--
-- Returns  {1, stock_before, stock_after}  reserved: the caller now owns qty units
--          {0, stock_before, stock_before} sold out: too few units, nothing changed
-- Errors   "INVALID_QTY ..."        ARGV[1] is missing or not a canonical integer >= 1
--          "STOCK_NOT_INTEGER ..."  KEYS[1] holds something other than a canonical integer
--
-- "Canonical" means what Redis itself writes: an optional minus sign, then at most 15
-- digits with no leading zero ("0" alone is fine). Lua's tonumber would also accept
-- "2.5", " 5" and "0x10"; a stock like that is a bug to report, not a number to trust.

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

local qty = canonical_integer(ARGV[1])
if qty == nil or qty < 1 then
  return redis.error_reply('INVALID_QTY qty must be a canonical integer >= 1, got ' .. tostring(ARGV[1]))
end

local raw = redis.call('GET', KEYS[1])
local stock = 0
if raw then
  stock = canonical_integer(raw)
  if stock == nil then
    return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[1] .. ' holds ' .. raw)
  end
end

if stock >= qty then
  local after = redis.call('DECRBY', KEYS[1], qty)
  return {1, stock, after}
end
return {0, stock, stock}
