-- One round trip of a fleet circuit breaker: record a host's attempts and
-- probe answers, lease it half-open probes, and return the fleet's state.
--
-- The transitions mirror the local breaker's (retry-core/src/breaker.rs,
-- `try_acquire`, `counted`, `probe_answered`, `release`, `opened`; the
-- state's layout is breaker/state.rs): the same rules on the same fields,
-- checked against the same scenario vectors (tests/breaker_scenarios.rs).
-- One rule is the fleet's own: a probe place leased and not answered for
-- `open_for` is taken back (its host may have died), which starts a fresh
-- half-open period.
-- The release after a close is the fleet's too (breaker/release.rs's rules
-- on one rate): the script keeps the rate, applies every host's release
-- successes and throttled answers to it, and leases hosts release places
-- out of a bucket that fills at the rate, so the fleet's release sends at
-- most its one rate plus one round's lease per host.
--
-- KEYS[1]  the breaker's hash, `{retry-breaker:NAME}` (one key: cluster-safe)
--   phase   0 closed, 1 open, 2 half-open      trips   opened in a row (0..63)
--   period  0..255, turned at every transition (as state.rs's period)
--   from    closed: the first window slot counted
--   until   open: when the break ends (ms on Redis's clock)
--   out, ok half-open: probes leased, probes that succeeded
--   since   half-open: when a probe was last leased (ms)
--   ta, tf  the attempts and failures that last opened it (for messages)
--   rel     1 while the release after a close lasts, else 0
--   rr      the release's rate (places per ms)   rc  1 once a throttled
--           answer cut it (it then grows a quarter as fast)  rcut  when (ms)
--   rtok, rat  places not leased yet, and when they were last filled (ms)
--   rshort  when a host last asked for more release places than had filled (ms)
--   a:SLOT, f:SLOT  attempts and failures counted in window slot SLOT
-- ARGV[1]  the period the host counted its attempts in (closed)
-- ARGV[2]  attempts sent while closed      ARGV[3] of those, failures
-- ARGV[4]  the period of the probe answers below
-- ARGV[5]  probes that succeeded  ARGV[6] probes that failed
-- ARGV[7]  probe places given back (unused leases, cancelled probes)
-- ARGV[8]  probes the host wants leased (0: none)
-- ARGV[9]  failure_ratio  ARGV[10] min_calls  ARGV[11] window (us)
-- ARGV[12] open_for (ms)  ARGV[13] max_open_for (ms)  ARGV[14] open_jitter
-- ARGV[15] probes         ARGV[16] a uniform sample in [0, 1) for the jitter
-- ARGV[17] now in microseconds, or '' for Redis's own clock (TIME); tests
--          replay scenario vectors on explicit times with it
-- ARGV[18] release_ramp (ms)  ARGV[19] release attempts that succeeded
-- ARGV[20] release attempts throttled  ARGV[21] release places wanted
-- ARGV[22] the host's refresh (ms): a lease holds at most a refresh's places
-- Returns { phase, trips, period, ms until the break ends (open), out, ok,
--           probes granted, attempts, failures (closed: the window's;
--           open: those that opened it), releasing (0/1), release places
--           granted, the release's rate in places per 1000 s }.
local key = KEYS[1]
local counted_period = tonumber(ARGV[1])
local attempts_in, failures_in = tonumber(ARGV[2]), tonumber(ARGV[3])
local answer_period = tonumber(ARGV[4])
local probes_ok, probes_failed = tonumber(ARGV[5]), tonumber(ARGV[6])
local given_back, wanted = tonumber(ARGV[7]), tonumber(ARGV[8])
local failure_ratio, min_calls = tonumber(ARGV[9]), tonumber(ARGV[10])
local window_us = tonumber(ARGV[11])
local open_for, max_open_for = tonumber(ARGV[12]), tonumber(ARGV[13])
local open_jitter, probes = tonumber(ARGV[14]), tonumber(ARGV[15])
local sample = tonumber(ARGV[16])
local ramp = math.max(tonumber(ARGV[18]), 1)
local released_ok, released_throttled = tonumber(ARGV[19]), tonumber(ARGV[20])
local places_wanted, refresh = tonumber(ARGV[21]), math.max(tonumber(ARGV[22]), 1)

local now_us
if ARGV[17] ~= '' then
  now_us = tonumber(ARGV[17])
else
  local time = redis.call('TIME')
  now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local now_ms = math.floor(now_us / 1000)
local slots = 10
local slot_us = math.max(1, math.floor(window_us / slots))
local epoch = math.floor(now_us / slot_us)

local function num(field)
  return tonumber(redis.call('HGET', key, field) or '0')
end
local phase, trips, period = num('phase'), num('trips'), num('period')
local from, till, out, ok = num('from'), num('until'), num('out'), num('ok')
local since = num('since')
local rel, rr, rc, rcut = num('rel'), num('rr'), num('rc'), num('rcut')
local rtok, rat, rshort = num('rtok'), num('rat'), num('rshort')

-- Word::turn: every transition starts the next period.
local function turn(next_phase)
  phase = next_phase
  period = (period + 1) % 256
end

-- CircuitBreaker::opened: the break after the `trips`-th trip in a row,
-- doubling up to max_open_for, cut by up to open_jitter, at least 1 ms.
local function open()
  local doublings = math.min(math.max(trips, 1) - 1, 31)
  local full = math.min(open_for * 2 ^ doublings, max_open_for)
  local cut = full * math.min(math.max(open_jitter * sample, 0), 1)
  local length = math.max(full - cut, 1)
  turn(1)
  rel = 0
  till = now_ms + math.ceil(length)
  trips = math.min(trips, 63)
end

-- Window::totals_from: the closed window's counts, from slot `from` on.
local function totals()
  local oldest = math.max(epoch - slots + 1, from)
  local a, f = 0, 0
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do
    local name = fields[i]
    local kind, slot = string.sub(name, 1, 2), tonumber(string.sub(name, 3))
    if kind == 'a:' or kind == 'f:' then
      if slot < epoch - slots + 1 then
        redis.call('HDEL', key, name)
      elseif slot >= oldest and slot <= epoch then
        if kind == 'a:' then a = a + tonumber(fields[i + 1]) else f = f + tonumber(fields[i + 1]) end
      end
    end
  end
  return a, f
end

local slot_field = string.format('%.0f', epoch)

-- CircuitBreaker::counted: closed attempts counted; judged on a failure.
if phase == 0 and counted_period == period and attempts_in > 0 then
  redis.call('HINCRBY', key, 'a:' .. slot_field, attempts_in)
  if failures_in > 0 then
    redis.call('HINCRBY', key, 'f:' .. slot_field, failures_in)
    local a, f = totals()
    if a >= min_calls and f >= failure_ratio * a then
      trips = trips + 1
      open()
      redis.call('HSET', key, 'ta', a, 'tf', f)
    end
  end
end

-- CircuitBreaker::probe_answered: a failure opens it again (checked first,
-- so a round with both reopens); the last of `probes` successes closes it.
-- Answers from an earlier period change nothing.
if phase == 2 and answer_period == period then
  if probes_failed > 0 then
    trips = trips + 1
    open()
  elseif probes_ok > 0 then
    ok = ok + probes_ok
    if ok >= probes then
      -- Closing judges afresh: Window::reset and the epoch it starts from.
      turn(0)
      trips = 0
      from = epoch
      redis.call('HDEL', key, 'a:' .. slot_field, 'f:' .. slot_field)
      -- Release::new: one place per ramp step, the first one free now.
      rel, rr, rc, rcut = 1, 1 / ramp, 0, 0
      rtok, rat, rshort = 1, now_ms, now_ms
    end
  end
end

-- CircuitBreaker::release: places given back.
if phase == 2 and answer_period == period and given_back > 0 then
  out = math.max(out - given_back, 0)
end

-- The fleet's own rule: places unanswered for open_for are taken back.
if phase == 2 and out > ok and now_ms >= since + open_for then
  turn(2)
  out, ok = 0, 0
end

-- CircuitBreaker::try_acquire: an ask when the break is over half-opens
-- it; half-open leases the probe places still free.
local granted = 0
if wanted > 0 then
  if phase == 1 and now_ms >= till then
    turn(2)
    out, ok = 0, 0
  end
  if phase == 2 and out < probes then
    granted = math.min(wanted, probes - out)
    out = out + granted
    since = now_ms
  end
end

-- Release::succeeded, throttled and admit, on the fleet's one rate.
local places = 0
if phase == 0 and rel == 1 then
  if released_ok > 0 then
    local step = 1 / ramp
    if rc == 1 then step = step * 0.25 end
    rr = rr + released_ok * step
  end
  if released_throttled > 0 and (rc == 0 or now_ms - rcut >= ramp) then
    rc, rcut = 1, now_ms
    rr = math.max(rr * 0.5, 1 / ramp)
  end
  rtok = math.min(rtok + rr * math.max(now_ms - rat, 0), math.max(1, rr * refresh))
  rat = now_ms
  if places_wanted > 0 then
    places = math.min(places_wanted, math.floor(rtok))
    rtok = rtok - places
    if places < places_wanted then
      rshort = now_ms
    end
  end
  -- Over once every ask was met in full for four ramp steps.
  if now_ms - rshort > 4 * ramp then
    rel = 0
  end
end

redis.call('HSET', key, 'rel', rel, 'rr', tostring(rr), 'rc', rc,
  'rcut', string.format('%.0f', rcut), 'rtok', tostring(rtok),
  'rat', string.format('%.0f', rat), 'rshort', string.format('%.0f', rshort))
redis.call('HSET', key, 'phase', phase, 'trips', trips, 'period', period,
  'from', string.format('%.0f', from), 'until', string.format('%.0f', till),
  'out', out, 'ok', ok, 'since', string.format('%.0f', since))
redis.call('PEXPIRE', key, math.ceil(2 * (window_us / 1000 + max_open_for)))

local remaining, a, f = 0, 0, 0
if phase == 0 then
  a, f = totals()
elseif phase == 1 then
  remaining = math.max(till - now_ms, 0)
  a, f = num('ta'), num('tf')
end
return { phase, trips, period, remaining, out, ok, granted, a, f, rel, places,
  math.floor(rr * 1000000) }
