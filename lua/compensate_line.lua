-- compensate_line.lua: give one line's units back, exactly once per line.
--
-- A saga undoes the lines it took when a later line fails. An undo that is lost on the
-- way (a timeout) must be sent again, and one that is sent twice must not give the units
-- back twice: that would put units on the shelf that never existed. So each undo names
-- its line, and the script adds the units only if that name is new to the run's set of
-- undone lines. Adding to a counter commutes with other buyers' takes, so racing them is
-- safe; only a repeat is not, and the set refuses the repeat.
--
-- Every read is checked before the first write: a refusal or an error changes nothing.
--
-- KEYS[1]  the SKU's counter: a canonical integer. A missing key is an error (the run's stock is gone).
-- KEYS[2]  the run's undone lines: a set of line ids (missing means none yet).
-- ARGV[1]  qty: units to give back, a canonical integer >= 1.
-- ARGV[2]  line: the line's id, e.g. "b17:2" (non-empty).
-- ARGV[3]  key_ttl: seconds the set may live, a canonical integer >= 1.
--
-- Returns  {1, stock_after}  given back: the line's units are on the shelf again
--          {0, stock}        already given back: this line was undone before, nothing changed
-- Errors   "INVALID_QTY ..."          ARGV[1] is missing or not a canonical integer >= 1
--          "INVALID_ID ..."           ARGV[2] is missing or empty
--          "INVALID_TIME ..."         ARGV[3] is missing or not a canonical integer >= 1
--          "NO_STOCK ..."             KEYS[1] does not exist
--          "STOCK_NOT_INTEGER ..."    KEYS[1] holds something other than a canonical integer

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
local line = ARGV[2]
if line == nil or line == '' then
  return redis.error_reply('INVALID_ID the line id must be non-empty')
end
local key_ttl = canonical_integer(ARGV[3])
if key_ttl == nil or key_ttl < 1 then
  return redis.error_reply('INVALID_TIME key_ttl must be a canonical integer >= 1, got ' .. tostring(ARGV[3]))
end

local raw = redis.call('GET', KEYS[1])
if not raw then
  return redis.error_reply('NO_STOCK ' .. KEYS[1] .. ' does not exist')
end
local stock = canonical_integer(raw)
if stock == nil then
  return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[1] .. ' holds ' .. raw)
end

if redis.call('SADD', KEYS[2], line) == 0 then
  return {0, stock}
end
redis.call('EXPIRE', KEYS[2], key_ttl)
return {1, redis.call('INCRBY', KEYS[1], qty)}
