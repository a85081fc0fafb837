"""The Lua scripts behind the redis bus: each one decision made atomically on the server."""

PUBLISH_INBOUND = """
-- KEYS: id key, dedupe key (or ''), inbox stream, session pending zset, sequence counter
-- ARGV: body, session key, retention seconds
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[3]) == false then return 0 end
if KEYS[2] ~= '' and redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3]) == false then return 0 end
local seq = redis.call('INCR', KEYS[5])
local entry = redis.call('XADD', KEYS[3], '*', 'session', ARGV[2], 'body', ARGV[1])
redis.call('ZADD', KEYS[4], seq, entry)
return 1
"""

ADMIT = """
-- A worker may run an entry when no other worker holds the session and every earlier entry of the
-- session still pending was admitted by this worker (so its lane runs them in order first).
-- When another worker holds the session (its turn is running), the entry is handed to it instead:
-- moved to the holder in the group's pending list (so XAUTOCLAIM still recovers it if the holder dies)
-- and announced on the holder's handoff stream, which wakes its blocked read. A holder without a
-- handoff stream (gone, or an older version) is waited for as before.
-- A holder whose liveness lease has lapsed is dead: its lock no longer counts.
-- KEYS: session pending zset, session admitted hash, session lock, inbox stream
-- ARGV: entry id, worker, lease ms, inbox group, handoff stream key prefix, claimed flag (0/1), liveness key prefix
-- Returns 1 admitted, 0 wait, -1 already finished, 2 handed to the holder.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return -1 end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[2] and redis.call('EXISTS', ARGV[7] .. holder) == 0 then holder = false end
if holder and holder ~= ARGV[2] then
  -- the key is built here because the holder is only known now (the bus runs on one server, not a cluster)
  local handoff = ARGV[5] .. holder
  if redis.call('EXISTS', handoff) == 0 then return 0 end
  local moved = redis.call('XCLAIM', KEYS[4], ARGV[4], holder, 0, ARGV[1])
  if #moved == 0 or not moved[1][2] then return -1 end
  redis.call('XADD', handoff, '*', 'entry', ARGV[1], 'claimed', ARGV[6], unpack(moved[1][2]))
  return 2
end
for _, earlier in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. score)) do
  if redis.call('HGET', KEYS[2], earlier) ~= ARGV[2] then return 0 end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
return 1
"""

CLAIM_DEAD = """
-- Take over the pending entries of workers whose liveness lease has lapsed (they died: a live worker renews it),
-- and forget such workers once they hold nothing. A live worker's entries are never taken, however slow it is.
-- KEYS: inbox stream. ARGV: inbox group, this worker, liveness key prefix, how many entries at most
-- Returns the claimed entries as XCLAIM does: {{entry id, {field, value, ...}}, ...}
local claimed = {}
local room = tonumber(ARGV[4])
local summary = redis.call('XPENDING', KEYS[1], ARGV[1])
for _, row in ipairs(summary[4] or {}) do
  local worker = row[1]
  if worker ~= ARGV[2] and room > 0 and redis.call('EXISTS', ARGV[3] .. worker) == 0 then
    local ids = {}
    for _, entry in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', room, worker)) do
      ids[#ids + 1] = entry[1]
    end
    if #ids > 0 then
      for _, item in ipairs(redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, unpack(ids))) do
        claimed[#claimed + 1] = item
      end
      room = room - #ids
    end
  end
end
for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local name, pending
  for i = 1, #consumer, 2 do
    if consumer[i] == 'name' then name = consumer[i + 1] end
    if consumer[i] == 'pending' then pending = consumer[i + 1] end
  end
  if name ~= ARGV[2] and pending == 0 and redis.call('EXISTS', ARGV[3] .. name) == 0 then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
  end
end
return claimed
"""

PUBLISH_OUTBOUND = """
-- Journal an outbound message once (by id) in its channel's outbox, complete inbound entries and give up the
-- session locks the completing worker no longer needs, in one step.
-- KEYS: outbound state hash, channel outbox stream, inbox stream, outbox index set,
--       then (pending zset, admitted hash) per completion, then the session locks to give up
-- ARGV: message id, body, retention seconds, inbox group, channel, lock holder, number of completions n,
--       then one entry id per completion
local fresh = redis.call('HSETNX', KEYS[1], 'state', 'pending') == 1
if fresh then
  redis.call('EXPIRE', KEYS[1], ARGV[3])
  redis.call('XADD', KEYS[2], '*', 'id', ARGV[1], 'body', ARGV[2])
  redis.call('SADD', KEYS[4], ARGV[5])
end
local n = tonumber(ARGV[7])
for i = 1, n do
  local k = 5 + (i - 1) * 2
  redis.call('XACK', KEYS[3], ARGV[4], ARGV[7 + i])
  redis.call('ZREM', KEYS[k], ARGV[7 + i])
  redis.call('HDEL', KEYS[k + 1], ARGV[7 + i])
end
for k = 5 + 2 * n, #KEYS do
  if redis.call('GET', KEYS[k]) == ARGV[6] then redis.call('DEL', KEYS[k]) end
end
return fresh and 1 or 0
"""

BEGIN = """
-- Count a turn start for each message, toward its crash limit: one counter per message, kept for the retention.
-- KEYS: the messages' start counters. ARGV: retention seconds
for _, key in ipairs(KEYS) do
  redis.call('INCR', key)
  redis.call('EXPIRE', key, ARGV[1])
end
return #KEYS
"""

FINISH = """
-- Record an outbound message as sent or failed and acknowledge its outbox entry (when the gateway read one),
-- in one step.
-- KEYS: outbound state hash, then the outbox stream when there is an entry to acknowledge
-- ARGV: state, error, outbox group, entry id (when KEYS[2])
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'error', ARGV[2])
if KEYS[2] then redis.call('XACK', KEYS[2], ARGV[3], ARGV[4]) end
return 1
"""

RENEW = """
-- Extend a lease only while this holder still has it. KEYS: lease. ARGV: holder, lease ms
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

RELEASE = """
-- Compare-and-delete: give a lease up only while this holder still has it. KEYS: lease. ARGV: holder
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

TRIM = """
-- Drop a stream's entries older than a cutoff, but never one its group still has pending or has not read.
-- KEYS: stream. ARGV: group, cutoff (ms). Returns how many entries went.
local function ms(id) return tonumber(string.match(id, '^(%d+)')) end
local cutoff = tonumber(ARGV[2])
local pending = redis.call('XPENDING', KEYS[1], ARGV[1])
if pending[2] then cutoff = math.min(cutoff, ms(pending[2])) end
for _, group in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  for i = 1, #group, 2 do
    if group[i] == 'name' and group[i + 1] ~= ARGV[1] then break end
    if group[i] == 'last-delivered-id' then cutoff = math.min(cutoff, ms(group[i + 1])) end
  end
end
return redis.call('XTRIM', KEYS[1], 'MINID', string.format('%.0f', cutoff))
"""
