#!lua name=oversold_v2
-- reserve_function.lua: the reserve.lua check-and-decrement as a Redis Function (Redis >= 7.0).
--
-- Loaded with FUNCTION LOAD (never REPLACE: a library of this name that is not byte for
-- byte this file belongs to someone else and is left alone) and called with FCALL. Unlike
-- an EVALSHA script it lives in the dataset: SCRIPT FLUSH does not remove it, and it is
-- replicated and persisted with the keys. FUNCTION FLUSH (or a restart without
-- persistence) does remove it; callers then load it again. It runs on Redis's command
-- thread from start to finish, exactly like a script, so the check and the write cannot be
-- separated. The name carries a version, so a changed library gets a new name.
--
-- Library  oversold_v2
-- Function oversold_v2_reserve, called as: FCALL oversold_v2_reserve 1 <stock key> <qty>
--
-- KEYS[1]  the stock counter: a string holding a canonical integer. A missing key means 0 in stock.
-- ARGV[1]  qty: units wanted, a canonical integer >= 1 (digits only, no sign, no leading zero).
--
-- Returns  {1, stock_before, stock_after}  reserved: the caller now owns qty units
--          {0, stock_before, stock_before} sold out: too few units, nothing changed
-- Errors   "INVALID_QTY ..."        ARGV[1] is missing or not a canonical integer >= 1
--          "STOCK_NOT_INTEGER ..."  KEYS[1] holds something other than a canonical integer

-- What Redis itself writes: an optional minus sign, then at most 15 digits with no leading
-- zero. Lua's tonumber would also accept "2.5", " 5" and "0x10".
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

local function reserve(keys, args)
  local qty = canonical_integer(args[1])
  if qty == nil or qty < 1 then
    return redis.error_reply('INVALID_QTY qty must be a canonical integer >= 1, got ' .. tostring(args[1]))
  end

  local raw = redis.call('GET', keys[1])
  local stock = 0
  if raw then
    stock = canonical_integer(raw)
    if stock == nil then
      return redis.error_reply('STOCK_NOT_INTEGER ' .. keys[1] .. ' holds ' .. raw)
    end
  end

  if stock < qty then
    return {0, stock, stock}
  end
  return {1, stock, redis.call('DECRBY', keys[1], qty)}
end

redis.register_function('oversold_v2_reserve', reserve)
