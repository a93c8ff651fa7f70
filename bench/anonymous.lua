-- An anonymous GET, as the public reads a schedule: no credentials; with the
-- Accept-Encoding header of ACCEPT_ENCODING when it is set (conference apps send gzip).
local encoding = os.getenv("ACCEPT_ENCODING")
if encoding and encoding ~= "" then
  wrk.headers["Accept-Encoding"] = encoding
end
done = function(summary, latency, requests)
  io.write(string.format("non2xx=%d\n", summary.errors.status))
end
