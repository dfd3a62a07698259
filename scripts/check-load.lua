-- wrk script for `make check` (load part): a mixed shopper load across many accounts and retailers.
-- Credentials are prepared beforehand (scripts/provision.py) and read from CHECK_LOAD_CREDENTIALS, one
-- "device <token>" or "offer <id>" per line. The id of every redemption answered 201 is appended to
-- $CHECK_LOAD_REDEEMED-<thread>, for the database check afterwards.
-- Mix: 50% GET /v1/catalog, 30% POST /v1/seen (5 items), 20% POST /v1/redemptions. Like a client that syncs
-- periodically, three catalog requests in four carry the cursor and the ETag of the last full answer (since and
-- If-None-Match, as `loyalty sync` sends them: 304 while the catalog is unchanged); the fourth fetches it all.
-- Each thread counts answers by status class and the 201s; done() prints "statuses 2xx=.. 3xx=.. 4xx=..
-- 5xx=.. redeemed=.. errors=.." (errors: socket errors and timeouts), then "latency p50=.. p99=.." in ms.

local devices, offers = {}, {}
local threads = {}
local counts

local function load()
  for line in io.lines(os.getenv("CHECK_LOAD_CREDENTIALS")) do
    local kind, value = line:match("^(%a+) (.+)$")
    if kind == "device" then devices[#devices + 1] = value else offers[#offers + 1] = value end
  end
end

function setup(thread)
  thread:set("id", #threads + 1)
  threads[#threads + 1] = thread
end

function init(args)
  load()
  math.randomseed(os.time() * 1000 + id)
  counts = { s2 = 0, s3 = 0, s4 = 0, s5 = 0, redeemed = 0 }
  redeemed_file = assert(io.open(os.getenv("CHECK_LOAD_REDEEMED") .. "-" .. id, "a"))
end

function request()
  local token = devices[math.random(#devices)]
  local headers = { ["Authorization"] = "Bearer " .. token }
  local roll = math.random(100)
  if roll <= 50 then
    if etag and cursor and roll % 4 ~= 0 then
      headers["If-None-Match"] = etag
      return wrk.format("GET", "/v1/catalog?since=" .. cursor, headers)
    end
    return wrk.format("GET", "/v1/catalog", headers)
  end
  headers["Content-Type"] = "application/json"
  if roll <= 80 then
    local items = {}
    for i = 1, 5 do
      items[i] = string.format('{"offer_id":"%s","seen_at":"2026-01-31T09:00:%02dZ"}', offers[math.random(#offers)], i)
    end
    return wrk.format("POST", "/v1/seen", headers, '{"items":[' .. table.concat(items, ",") .. ']}')
  end
  return wrk.format("POST", "/v1/redemptions", headers, string.format('{"offer_id":"%s"}', offers[math.random(#offers)]))
end

-- Only a redemption answers 201 in this mix (catalog and seen answer 200), and no request carries an
-- Idempotency-Key, so every 201 is a redemption the server says it stored.
function response(status, headers, body)
  if status == 200 and headers["ETag"] and body:find('"full":true', 1, true) then
    etag, cursor = headers["ETag"], body:match('"cursor":"([^"]+)"')
  end
  local class = math.floor(status / 100)
  counts["s" .. class] = (counts["s" .. class] or 0) + 1
  if status == 201 then
    counts.redeemed = counts.redeemed + 1
    redeemed_file:write(assert(body:match('"redemption_id":"([%x-]+)"')), "\n")
    redeemed_file:flush()
  end
  s2, s3, s4, s5, redeemed = counts.s2, counts.s3, counts.s4, counts.s5, counts.redeemed
end

function done(summary, latency, requests)
  local total = { s2 = 0, s3 = 0, s4 = 0, s5 = 0, redeemed = 0 }
  for _, thread in ipairs(threads) do
    for key, _ in pairs(total) do total[key] = total[key] + (thread:get(key) or 0) end
  end
  io.write(string.format("statuses 2xx=%d 3xx=%d 4xx=%d 5xx=%d redeemed=%d errors=%d\n", total.s2, total.s3, total.s4,
    total.s5, total.redeemed, summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.timeout))
  io.write(string.format("latency p50=%.2f p99=%.2f requests=%d duration=%.2f\n", latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, summary.requests, summary.duration / 1e6))
end
