-- idempotent.lua: take qty units once per request id, however often it is sent.
--
-- KEYS[1]  the stock counter (a missing key means 0 in stock).
-- KEYS[2]  the request record: a hash of request id -> the answer it got (same hash tag).
-- ARGV[1]  qty: the units wanted, a positive integer.
-- ARGV[2]  request_id: the buyer's id for this request (non-empty).
--
-- Returns  1  the units were taken (now, or by the first request with this id)
--          0  there were not enough (now, or when this id was first seen): nothing taken

local first = redis.call('HGET', KEYS[2], ARGV[2])
if first then
  return tonumber(first)
end
local stock = tonumber(redis.call('GET', KEYS[1]) or '0')
local qty = tonumber(ARGV[1])
local answer = 0
if stock >= qty then
  redis.call('DECRBY', KEYS[1], qty)
  answer = 1
end
redis.call('HSET', KEYS[2], ARGV[2], answer)
return answer
