-- wrk script for the booking rows of scripts/bench.
--
--   wrk ... -s scripts/bench-booking.lua URL -- book <threads> <base> [<total>]
--   wrk ... -s scripts/bench-booking.lua URL -- update <threads> <base> <first id> <count>
--
-- book-keyed, update-keyed: the same, each request with an Idempotency-Key of its own.
--
-- book: every request books a car of model 1 to 8 (in turn) for two days; the n-th booking of
-- a model starts 3n days after <base> (Unix seconds), so every request finds a free car. With
-- <total>, the threads stop sending once they have received that many answers between them
-- (wrk itself still runs for its duration).
-- update: every request moves the return of one of <count> bookings (Ids from <first id>,
-- booked by scripts/bench with the same schedule from <base>) to one or two days after its
-- start, in turn: each update changes the dates, so it re-checks availability, re-prices
-- and records comments.

local day = 86400
local created = 0
local mode, threads, base, first, count, keyed, total
local sent, received = 0, 0
-- Keys unique to this run, so that a server benchmarked twice answers none of them again.
local run = tostring(os.time())

function setup(thread)
  thread:set("thread_index", created)
  created = created + 1
end

function init(args)
  mode, keyed = args[1]:gsub("%-keyed$", "")
  keyed = keyed > 0
  threads = tonumber(args[2])
  base = tonumber(args[3])
  if mode == "book" then
    total = tonumber(args[4] or "")
  else
    first = tonumber(args[4] or "0")
    count = tonumber(args[5] or "0")
  end
  wrk.headers["Content-Type"] = "application/json"
end

local function at(t)
  return os.date("!%Y-%m-%dT%H:%M:%SZ", t)
end

-- The model and start of the j-th booking of the schedule.
local function slot(j)
  return j % 8 + 1, base + math.floor(j / 8) * 3 * day
end

function request()
  local j = sent * threads + thread_index
  sent = sent + 1
  local headers = nil
  if keyed then
    -- Headers given to wrk.format replace wrk.headers (the token's among them).
    headers = {}
    for name, value in pairs(wrk.headers) do
      headers[name] = value
    end
    headers["Idempotency-Key"] = string.format("%s-%s-%d", run, mode, j)
  end
  if mode == "book" then
    local model, from = slot(j)
    local body = string.format(
      '{"Customer":{"Id":%d},"Car":{"Model":{"Id":%d}},"FromDate":"%s","ToDate":"%s",'
        .. '"DeliveryPlace":{"Id":1},"ReturnPlace":{"Id":1}}',
      j % 22 + 1, model, at(from), at(from + 2 * day))
    return wrk.format("POST", "/api/booking/book", headers, body)
  end
  local k = j % count
  local _, from = slot(k)
  local body = string.format('{"Id":%d,"ToDate":"%s"}', first + k,
    at(from + (1 + math.floor(j / count) % 2) * day))
  return wrk.format("PUT", "/api/booking/update", headers, body)
end

function response()
  received = received + 1
  if total and received * threads >= total then
    wrk.thread:stop()
  end
end
