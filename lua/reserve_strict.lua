-- reserve_strict.lua: reserve.lua's check-and-take, except that a counter that is not
-- there is an error, not an empty shelf.
--
-- reserve.lua reads a missing key as 0 in stock, which is right for a sale that never
-- started and wrong for one whose counter Redis deleted under memory pressure (eviction)
-- or lost in a restart: the buyer is told "sold out" while units are left. This script
-- cannot know the stock either, so it refuses with a code the app can act on (alert,
-- restore the counter from the books, retry), and writes nothing: it never creates the
-- key, so no DECRBY ever starts a new counter below zero.
--
-- KEYS[1]  the stock counter: a string holding a canonical integer. It must exist.
-- ARGV[1]  qty: units wanted, a canonical integer >= 1 (digits only, no sign, no leading zero).
--
-- Returns  {1, stock_before, stock_after}  reserved: the caller now owns qty units
--          {0, stock_before, stock_before} sold out: too few units, nothing changed
-- Errors   "INVALID_QTY ..."        ARGV[1] is missing or not a canonical integer >= 1
--          "STOCK_MISSING ..."      KEYS[1] does not exist; nothing changed
--          "STOCK_NOT_INTEGER ..."  KEYS[1] holds something other than a canonical integer
--
-- Under maxmemory with noeviction, Redis itself refuses the DECRBY with its OOM error
-- (the script's first write), so a full Redis takes nothing either.

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
if not raw then
  return redis.error_reply('STOCK_MISSING ' .. KEYS[1] .. ' is not there: evicted, flushed or never set')
end
local stock = canonical_integer(raw)
if stock == nil then
  return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[1] .. ' holds ' .. raw)
end

if stock >= qty then
  return {1, stock, redis.call('DECRBY', KEYS[1], qty)}
end
return {0, stock, stock}
