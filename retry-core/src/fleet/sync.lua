-- One round trip of a fleet retry budget: record calls, lease retries.
--
-- KEYS[1]  the budget's hash, `{retry-budget:NAME}` (one key, so any Redis
--          Cluster node that owns its slot can run the script)
-- ARGV[1]  calls to record (first attempts since the last round trip)
-- ARGV[2]  retries wanted for the host's lease
-- ARGV[3]  ratio: retries allowed per call in the window
-- ARGV[4]  floor: retries allowed whatever the calls (min_per_sec × window)
-- ARGV[5]  the window in microseconds
--
-- The window is the local budget's: ten slots, each a pair of fields
-- `c:EPOCH` (calls) and `r:EPOCH` (retries), where EPOCH counts slots since
-- the Unix epoch on Redis's own clock (TIME), so hosts' clocks cannot skew it.
-- Returns { retries granted, calls in the window, retries in the window }.
local key = KEYS[1]
local calls_in = tonumber(ARGV[1])
local wanted = tonumber(ARGV[2])
local ratio = tonumber(ARGV[3])
local floor_tokens = tonumber(ARGV[4])
local window_us = tonumber(ARGV[5])
local slots = 10
local slot_us = math.max(1, math.floor(window_us / slots))

local time = redis.call('TIME')
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local epoch = math.floor(now_us / slot_us)
local oldest = epoch - slots + 1

local calls, retries = 0, 0
local fields = redis.call('HGETALL', key)
for i = 1, #fields, 2 do
  local field = fields[i]
  local slot = tonumber(string.sub(field, 3))
  if slot == nil or slot < oldest then
    redis.call('HDEL', key, field)
  elseif string.sub(field, 1, 1) == 'c' then
    calls = calls + tonumber(fields[i + 1])
  else
    retries = retries + tonumber(fields[i + 1])
  end
end

local now_field = string.format('%.0f', epoch)
if calls_in > 0 then
  redis.call('HINCRBY', key, 'c:' .. now_field, calls_in)
  calls = calls + calls_in
end

local allowed = ratio * calls + floor_tokens
local granted = math.floor(allowed - retries)
if granted > wanted then granted = wanted end
if granted < 0 then granted = 0 end
if granted > 0 then
  redis.call('HINCRBY', key, 'r:' .. now_field, granted)
  retries = retries + granted
end
redis.call('PEXPIRE', key, math.ceil(2 * window_us / 1000))
return { granted, calls, retries }
