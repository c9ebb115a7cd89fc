-- take_cart_lines.lua: take a cart line by line inside one script, and stop with an error at
-- the first line that is short. A lesson, not a fix: Redis has no rollback.
--
-- It reads like a transaction: check a line, take it, go on; if a line is short, raise an
-- error, as an exception would abort a SQL transaction. But a script is isolated, not
-- transactional: Redis runs it with nothing in between, and an error stops it where it
-- is. Every DECRBY it already ran stays applied; the caller only gets the error. A failing
-- redis.call (WRONGTYPE, OOM...) raises the very same way. redis.pcall instead hands the
-- error back as a value, so a script can notice it and give back what it took, but only
-- if it does so itself. The fix is reserve_cart.lua: check every line, then write.
--
-- The quantities are checked before the first write; each line's stock only when the
-- script reaches it, after the lines before it were taken.
--
-- KEYS[i]  SKU i's counter, for each line i (1 to 8 lines): a canonical integer. A missing key means 0 in stock.
-- ARGV[i]  line i's qty: units wanted, a canonical integer >= 1 (one ARGV per KEYS).
--
-- Returns  {1, after_1, ..., after_n}  reserved: every line is the buyer's; each counter after its DECRBY
-- Errors   "SHORT_LINE i has s wants q"  line i had only s units: the script stopped there, lines 1 to i-1 stay taken
--          "INVALID_CART ..."            no keys, more than 8, or not one ARGV per key; nothing changed
--          "INVALID_QTY ..."             some ARGV[i] is not a canonical integer >= 1; nothing changed
--          "STOCK_NOT_INTEGER ..."       KEYS[i] holds something other than a canonical integer: lines 1 to i-1 stay taken

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

local qty = {}
for i = 1, n do
  qty[i] = canonical_integer(ARGV[i])
  if qty[i] == nil or qty[i] < 1 then
    return redis.error_reply('INVALID_QTY line ' .. i .. ' qty must be a canonical integer >= 1, got ' .. tostring(ARGV[i]))
  end
end

local reply = {1}
for i = 1, n do
  local raw = redis.call('GET', KEYS[i])
  local stock = 0
  if raw then
    stock = canonical_integer(raw)
    if stock == nil then
      error({err = 'STOCK_NOT_INTEGER ' .. KEYS[i] .. ' holds ' .. raw})
    end
  end
  if stock < qty[i] then
    -- The author expects this to undo the lines above. It does not: they stay taken.
    error({err = 'SHORT_LINE ' .. i .. ' has ' .. stock .. ' wants ' .. qty[i]})
  end
  reply[i + 1] = redis.call('DECRBY', KEYS[i], qty[i])
end
return reply
