-- quantity.lua: take qty units from the stock, or none; refuse what is not a number.
--
-- KEYS[1]  the stock counter (a missing key means 0 in stock).
-- ARGV[1]  qty: the units wanted, a canonical integer >= 1 ("1", "12"; not "01", "1.5", "1e2").
--
-- Returns  1  the units were taken
--          0  there were not enough: the stock is unchanged
-- Errors   "BAD_INPUT ..."  ARGV[1] is not a canonical integer >= 1, or KEYS[1] holds
--                           something other than a canonical integer: nothing changed

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
  return redis.error_reply('BAD_INPUT qty must be a canonical integer >= 1, got ' .. tostring(ARGV[1]))
end
local raw = redis.call('GET', KEYS[1])
local stock = 0
if raw then
  stock = canonical_integer(raw)
  if stock == nil then
    return redis.error_reply('BAD_INPUT the stock holds ' .. raw .. ', not an integer')
  end
end
if stock < qty then
  return 0
end
redis.call('DECRBY', KEYS[1], qty)
return 1
