-- wrk script: downloads distinct invoices as PDF through invoices/{number}/download/.
-- Each thread walks its own share of the invoices in INVOICES_FILE (thread i takes
-- invoices i, i+THREADS, ...), so every invoice is rendered once; an exhausted thread asks
-- for an unknown invoice (403). Counts the files (200) of all threads: ok=<n>.
local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  numbers = {}
  for line in io.lines(os.getenv("INVOICES_FILE")) do
    if line ~= "" then table.insert(numbers, line) end
  end
  step = tonumber(os.getenv("THREADS") or "2")
  index = id + 1
  ok = 0
  base = wrk.path
  wrk.headers["Authorization"] = "Token " .. os.getenv("TOKEN")
end

function request()
  local number = numbers[index] or "NONE"
  index = index + step
  return wrk.format("GET", base .. number .. "/download/")
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
