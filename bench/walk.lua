-- wrk script: walks distinct keys once each, the lines of WALK_FILE. Each thread takes its
-- own share (thread i takes lines i, i+THREADS, ...), so every key is used once; an
-- exhausted thread asks for an unknown one (an error). With WALK_BODY (a body with %s for
-- the key) it POSTs that body to the target (check-in scans: the ticket's secret);
-- otherwise it GETs the target path, the key and WALK_SUFFIX (downloads: a position's ID or
-- an invoice's number). Counts the answers with status WALK_OK (default 200) of all
-- threads: ok=<n>, and the others: non2xx=<n>.
local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  keys = {}
  for line in io.lines(os.getenv("WALK_FILE")) do
    if line ~= "" then table.insert(keys, line) end
  end
  body = os.getenv("WALK_BODY")
  suffix = os.getenv("WALK_SUFFIX") or "/"
  wanted = tonumber(os.getenv("WALK_OK") or "200")
  step = tonumber(os.getenv("THREADS") or "2")
  index = id + 1
  ok = 0
  base = wrk.path
  wrk.headers["Authorization"] = "Token " .. os.getenv("TOKEN")
  if body then
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
  end
end

function request()
  local key = keys[index] or "0"
  index = index + step
  if body then
    return wrk.format(nil, nil, nil, string.format(body, key))
  end
  return wrk.format("GET", base .. key .. suffix)
end

function response(status, headers, body)
  if status == wanted then ok = ok + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("ok")
  end
  io.write(string.format("ok=%d\n", total))
  io.write(string.format("non2xx=%d\n", summary.requests - total))
end
