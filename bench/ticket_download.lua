-- wrk script: downloads distinct tickets as PDF through orderpositions/{id}/download/pdf/.
-- Each thread walks its own share of the positions in POSITIONS_FILE (thread i takes
-- positions i, i+THREADS, ...), so every ticket is rendered once; an exhausted thread asks
-- for an unknown position (404). Counts the files (200) of all threads: ok=<n>.
local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  positions = {}
  for line in io.lines(os.getenv("POSITIONS_FILE")) do
    if line ~= "" then table.insert(positions, line) end
  end
  step = tonumber(os.getenv("THREADS") or "2")
  index = id + 1
  ok = 0
  base = wrk.path
  wrk.headers["Authorization"] = "Token " .. os.getenv("TOKEN")
end

function request()
  local position = positions[index] or "0"
  index = index + step
  return wrk.format("GET", base .. position .. "/download/pdf/")
end

function response(status, headers, body)
  if status == 200 then ok = ok + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("ok")
  end
  io.write(string.format("ok=%d\n", total))
  local bad = summary.requests - total
  io.write(string.format("non2xx=%d\n", bad))
end
