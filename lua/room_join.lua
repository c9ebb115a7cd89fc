-- room_join.lua: count one more person into a room, unless it is full.
--
-- A room's head count is kept per server process and role (one field each), so that when
-- a process dies, another can take its share back. Summing the fields and adding one in
-- the app would let two processes both see the last free place and both take it; here
-- the sum, the check and the add are one step.
--
-- Every read is checked before the first write: a refusal or an error changes nothing.
--
-- KEYS[1]  the room's record: a hash; its next_id field numbers the participants.
-- KEYS[2]  the room's head counts: a hash of "<process>:<role>" -> people (missing means none).
-- ARGV[1]  field: the "<process>:<role>" to count into (non-empty).
-- ARGV[2]  cap: people the room holds at most, a canonical integer >= 1.
-- ARGV[3]  new_id: "1" to draw a new participant id, "0" for someone back with their id.
-- ARGV[4]  key_ttl: seconds both keys live from now, a canonical integer >= 1.
--
-- Returns  {1, id, people}  counted in: id is the new participant id (0 when new_id is "0"), people the count after
--          {0, 0, people}   the room is full: nothing changed
-- Errors   "INVALID_ID ..."           ARGV[1] is missing or empty
--          "INVALID_COUNT ..."        ARGV[2] is missing or not a canonical integer >= 1
--          "INVALID_FLAG ..."         ARGV[3] is neither "0" nor "1"
--          "INVALID_TIME ..."         ARGV[4] is missing or not a canonical integer >= 1
--          "NO_ROOM ..."              KEYS[1] does not exist (the room expired)
--          "COUNTER_NOT_INTEGER ..."  a field of KEYS[2] is not a canonical integer

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

local field = ARGV[1]
if field == nil or field == '' then
  return redis.error_reply('INVALID_ID field must be a non-empty string')
end
local cap = canonical_integer(ARGV[2])
if cap == nil or cap < 1 then
  return redis.error_reply('INVALID_COUNT cap must be a canonical integer >= 1, got ' .. tostring(ARGV[2]))
end
local new_id = ARGV[3]
if new_id ~= '0' and new_id ~= '1' then
  return redis.error_reply('INVALID_FLAG new_id must be "0" or "1", got ' .. tostring(new_id))
end
local key_ttl = canonical_integer(ARGV[4])
if key_ttl == nil or key_ttl < 1 then
  return redis.error_reply('INVALID_TIME key_ttl must be a canonical integer >= 1, got ' .. tostring(ARGV[4]))
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('NO_ROOM ' .. KEYS[1] .. ' does not exist')
end

local people = 0
for _, raw in ipairs(redis.call('HVALS', KEYS[2])) do
  local n = canonical_integer(raw)
  if n == nil then
    return redis.error_reply('COUNTER_NOT_INTEGER ' .. KEYS[2] .. ' holds ' .. raw)
  end
  people = people + math.max(n, 0)
end
if people >= cap then
  return {0, 0, people}
end

local id = 0
if new_id == '1' then
  id = redis.call('HINCRBY', KEYS[1], 'next_id', 1)
end
redis.call('HINCRBY', KEYS[2], field, 1)
redis.call('EXPIRE', KEYS[1], key_ttl)
redis.call('EXPIRE', KEYS[2], key_ttl)
return {1, id, people + 1}
