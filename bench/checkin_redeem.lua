-- wrk script: scans distinct tickets through checkinrpc/redeem. Each thread walks its own
-- share of the secrets in SECRETS_FILE (thread i takes secrets i, i+THREADS, ...), so every
-- ticket is scanned at most once; an exhausted thread scans an unknown secret (404). Counts
-- the admissions (201) of all threads: ok=<n>.
local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  secrets = {}
  for line in io.lines(os.getenv("SECRETS_FILE")) do
    if line ~= "" then table.insert(secrets, line) end
  end
  step = tonumber(os.getenv("THREADS") or "2")
  index = id + 1
  ok = 0
  list = os.getenv("CHECKIN_LIST")
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Token " .. os.getenv("TOKEN")
end

function request()
  local secret = secrets[index] or "exhausted"
  index = index + step
  return wrk.format(nil, nil, nil,
    string.format('{"lists":[%s],"secret":"%s"}', list, secret))
end

function response(status, headers, body)
  if status == 201 then ok = ok + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("ok") end
  io.write(string.format("ok=%d\n", total))
  io.write(string.format("non2xx=%d\n", summary.errors.status))
end
