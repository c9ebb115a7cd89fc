#!lua name=oversold
-- reserve_function.lua: the reserve.lua check-and-decrement as a Redis Function (Redis >= 7.0).
--
-- Loaded once with FUNCTION LOAD REPLACE and called with FCALL. Unlike an EVALSHA
-- script it lives in the dataset: SCRIPT FLUSH does not remove it, and it is replicated
-- and persisted with the keys. FUNCTION FLUSH (or a restart without persistence) does
-- remove it; callers then load it again. It runs on Redis's command thread from start to
-- finish, exactly like a script, so the check and the write cannot be separated.
--
-- Library  oversold
-- Function oversold_reserve(keys, args), called as: FCALL oversold_reserve 1 <stock key> <qty>
--
-- KEYS[1]  the stock counter (a string holding an integer). A missing key means 0 in stock.
-- ARGV[1]  qty: units wanted, a whole number >= 1.
--
-- Returns  {1, stock_before, stock_after}  reserved: the caller now owns qty units
--          {0, stock_before, stock_before} sold out: too few units, nothing changed
-- Errors   "INVALID_QTY ..."    ARGV[1] is missing, not a number, not whole, or < 1
--          "STOCK_NOT_NUMBER ..." KEYS[1] holds something that is not an integer

local function reserve(keys, args)
  local qty = tonumber(args[1])
  if qty == nil or qty < 1 or qty ~= math.floor(qty) then
    return redis.error_reply('INVALID_QTY qty must be a whole number >= 1, got ' .. tostring(args[1]))
  end

  local raw = redis.call('GET', keys[1])
  local stock = 0
  if raw then
    stock = tonumber(raw)
    if stock == nil then
      return redis.error_reply('STOCK_NOT_NUMBER ' .. keys[1] .. ' holds ' .. raw)
    end
  end

  if stock < qty then
    return {0, stock, stock}
  end
  return {1, stock, redis.call('DECRBY', keys[1], qty)}
end

redis.register_function('oversold_reserve', reserve)
