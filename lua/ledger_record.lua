-- ledger_record.lua: write one order into the Redis-side ledger, once.
--
-- The settlement ledger belongs in PostgreSQL; this is the fallback when there is none,
-- kept under the run's hash tag. An order is keyed by its request id, so a write that is
-- retried (or a resent request that reached the ledger twice) is one order, not two; the
-- totals move only when a new row is written, in the same step.
--
-- KEYS[1]  the ledger: a hash of order id -> "state customer qty".
-- KEYS[2]  the totals: a hash of state -> units, and "orders:" .. state -> rows.
-- ARGV[1]  order: the order's request id (non-empty).
-- ARGV[2]  customer: who ordered (non-empty, no spaces).
-- ARGV[3]  qty: units, a canonical integer >= 1.
-- ARGV[4]  state: "confirmed" or "backorder".
-- ARGV[5]  key_ttl: seconds either key may live, a canonical integer >= 1.
--
-- Returns  {1, units_in_state}  recorded: a new row
--          {0, units_in_state}  already recorded under this order id: nothing changed
-- Errors   "INVALID_ID ..."     ARGV[1] or ARGV[2] is missing or empty, or ARGV[2] has a space
--          "INVALID_QTY ..."    ARGV[3] is missing or not a canonical integer >= 1
--          "INVALID_STATE ..."  ARGV[4] is neither "confirmed" nor "backorder"
--          "INVALID_TIME ..."   ARGV[5] is missing or not a canonical integer >= 1

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

local order, customer, state = ARGV[1], ARGV[2], ARGV[4]
if not order or order == '' or not customer or customer == '' or string.find(customer, ' ', 1, true) then
  return redis.error_reply('INVALID_ID order and customer must be non-empty, and customer without spaces')
end
local qty = canonical_integer(ARGV[3])
if qty == nil or qty < 1 then
  return redis.error_reply('INVALID_QTY qty must be a canonical integer >= 1, got ' .. tostring(ARGV[3]))
end
if state ~= 'confirmed' and state ~= 'backorder' then
  return redis.error_reply('INVALID_STATE state must be confirmed or backorder, got ' .. tostring(state))
end
local key_ttl = canonical_integer(ARGV[5])
if key_ttl == nil or key_ttl < 1 then
  return redis.error_reply('INVALID_TIME key_ttl must be a canonical integer >= 1, got ' .. tostring(ARGV[5]))
end

if redis.call('HSETNX', KEYS[1], order, state .. ' ' .. customer .. ' ' .. qty) == 0 then
  return {0, tonumber(redis.call('HGET', KEYS[2], state) or '0')}
end
redis.call('HINCRBY', KEYS[2], 'orders:' .. state, 1)
local units = redis.call('HINCRBY', KEYS[2], state, qty)
redis.call('EXPIRE', KEYS[1], key_ttl, 'NX')
redis.call('EXPIRE', KEYS[2], key_ttl, 'NX')
return {1, units}
