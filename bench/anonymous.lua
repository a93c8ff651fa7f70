-- An anonymous GET, as the public reads a schedule or a shop: no credentials; with the
-- Accept-Encoding header of ACCEPT_ENCODING when it is set (conference apps send gzip), and
-- the Accept header of ACCEPT when it is set (a browser asks for text/html).
local encoding = os.getenv("ACCEPT_ENCODING")
if encoding and encoding ~= "" then
  wrk.headers["Accept-Encoding"] = encoding
end
local accept = os.getenv("ACCEPT")
if accept and accept ~= "" then
  wrk.headers["Accept"] = accept
end
done = function(summary, latency, requests)
  io.write(string.format("non2xx=%d\n", summary.errors.status))
end
