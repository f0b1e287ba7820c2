-- wrk script for benchmarks/lead_intake.py --wrk: POST /v1/leads (or the floor) with a
-- submission id no other request of the run uses, and the run's figures as one JSON line.
-- LEAD_KEY, LEAD_SUBSCRIPTION, LEAD_RUN (a prefix unique to the run), LEAD_PATH; with
-- LEAD_PATH=/healthz a plain GET.
local counter = 0
local threads = {}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  key = os.getenv("LEAD_KEY")
  subscription = os.getenv("LEAD_SUBSCRIPTION")
  run = os.getenv("LEAD_RUN")
  path = os.getenv("LEAD_PATH") or "/v1/leads"
  statuses = {}
end

function request()
  if path == "/healthz" then
    return wrk.format("GET", path)
  end
  counter = counter + 1
  local n = counter
  local body = string.format(
    '{"subscription_id":"%s","source":"form-%d","source_submission_id":"%s-%d-%d",'
      .. '"campaign_ids":[],"contact":{"email":"lead-%s-%d-%d@customer.example",'
      .. '"phone":"+6591%06d"}}',
    subscription, n % 5, run, tid, n, run, tid, n, (tid * 100003 + n) % 1000000)
  return wrk.format("POST", path, {
    ["Authorization"] = "Bearer " .. key,
    ["Content-Type"] = "application/json",
  }, body)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local codes = {}
  for _, thread in ipairs(threads) do
    local counts = thread:get("statuses")
    for status, n in pairs(counts) do
      codes[#codes + 1] = string.format('"%d":%d', status, n)
    end
  end
  io.write(string.format(
    'WRK {"requests":%d,"seconds":%.3f,"p50_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,'
      .. '"errors":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.status + summary.errors.timeout,
    table.concat(codes, ",")))
end
