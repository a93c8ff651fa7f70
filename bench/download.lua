-- wrk script: downloads distinct documents once each: the IDs or numbers in DOWNLOADS_FILE,
-- each appended to the target path and followed by DOWNLOAD_SUFFIX (tickets:
-- orderpositions/{id}/download/pdf/, invoices: invoices/{number}/download/). Each thread
-- walks its own share (thread i takes lines i, i+THREADS, ...), so every document is made
-- once; an exhausted thread asks for an unknown one (an error). Counts the files (200) of
-- all threads: ok=<n>.
local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  keys = {}
  for line in io.lines(os.getenv("DOWNLOADS_FILE")) do
    if line ~= "" then table.insert(keys, line) end
  end
  suffix = os.getenv("DOWNLOAD_SUFFIX") or "/"
  step = tonumber(os.getenv("THREADS") or "2")
  index = id + 1
  ok = 0
  base = wrk.path
  wrk.headers["Authorization"] = "Token " .. os.getenv("TOKEN")
end

function request()
  local key = keys[index] or "0"
  index = index + step
  return wrk.format("GET", base .. key .. suffix)
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
