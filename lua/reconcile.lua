-- reconcile.lua: recompute the available counter from what is sold and what is held,
-- and set it, in one step.
--
-- Counters drift: an app server that died after its decrement leaves units that no order
-- and no hold explains. The truth is `stock - sold - held`; this writes it. Sold is the
-- larger of the ledger's count (passed in by the caller, which read it) and Redis's own
-- count of confirmed units (a confirmation whose ledger row is still on its way), so a
-- sold unit is never handed out again. Held is the held counter. Running inside Redis,
-- no reservation or confirmation can land between the read and the write.
--
-- A strategy without holds has no record of a buyer who is still paying: to this script
-- its units look leaked, and reconciling then hands them out again. That is the reason
-- holds exist.
--
-- KEYS[1]  the available counter: a canonical integer; must exist.
-- KEYS[2]  the held counter: units in active holds, a canonical integer (missing means 0).
-- KEYS[3]  the sold counter: units confirmed in Redis, a canonical integer (missing means 0).
-- ARGV[1]  stock: units on the shelf before the run, a canonical integer >= 0.
-- ARGV[2]  ledger: units in the ledger's confirmed rows, a canonical integer >= 0.
--
-- Returns  {available_before, available_after, sold, held}  the counter now reads available_after
-- Errors   "INVALID_COUNT ..."        ARGV[1] or ARGV[2] is missing or not a canonical integer >= 0
--          "STOCK_MISSING ..."        KEYS[1] does not exist: there is no run to reconcile
--          "STOCK_NOT_INTEGER ..."    KEYS[1] holds something other than a canonical integer
--          "COUNTER_NOT_INTEGER ..."  KEYS[2] or KEYS[3] is not a canonical integer

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

-- A stored number: missing reads as 0, anything but a canonical integer as nil.
local function stored(raw)
  if not raw then
    return 0
  end
  return canonical_integer(raw)
end

local stock, ledger = canonical_integer(ARGV[1]), canonical_integer(ARGV[2])
if stock == nil or stock < 0 or ledger == nil or ledger < 0 then
  return redis.error_reply('INVALID_COUNT stock and ledger must be canonical integers >= 0')
end
local raw = redis.call('GET', KEYS[1])
if not raw then
  return redis.error_reply('STOCK_MISSING ' .. KEYS[1] .. ' does not exist')
end
local before = canonical_integer(raw)
if before == nil then
  return redis.error_reply('STOCK_NOT_INTEGER ' .. KEYS[1] .. ' holds ' .. raw)
end
local held, confirmed = stored(redis.call('GET', KEYS[2])), stored(redis.call('GET', KEYS[3]))
if held == nil or confirmed == nil then
  return redis.error_reply('COUNTER_NOT_INTEGER ' .. KEYS[2] .. ' or ' .. KEYS[3])
end

local sold = math.max(ledger, confirmed)
local after = stock - sold - held
redis.call('SET', KEYS[1], after, 'KEEPTTL')
return {before, after, sold, held}
