-- wrk script for scripts/bench.mjs: one script for every scenario, driven by environment
-- variables so that the request is built once and wrk's hot loop stays in C.
--
--   BENCH_METHOD  request method (default GET)
--   BENCH_TOKEN   raw token for the Authorization header (omitted when unset)
--   BENCH_BODY    JSON request body (sent with Content-Type: application/json)
--   BENCH_PATHS   comma-separated paths to cycle through, e.g. /book/1,/book/2
--                 (default: the path of the URL given to wrk)
--
-- By hand, e.g.:
--   BENCH_TOKEN=$TOKEN BENCH_PATHS=/book/1,/book/2 \
--     wrk -t1 -c64 -d10s --latency -s scripts/bench/scenario.lua http://127.0.0.1:8080

local function env(name)
  local value = os.getenv(name)
  if value == nil or value == "" then return nil end
  return value
end

wrk.method = env("BENCH_METHOD") or "GET"

local token = env("BENCH_TOKEN")
if token then wrk.headers["Authorization"] = token end

local body = env("BENCH_BODY")
if body then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end

local paths = env("BENCH_PATHS")
if paths then
  local requests = {}
  local count = 0
  local index = 0

  -- After wrk.init has set the Host header: pre-format one request per path.
  function init(args)
    for path in string.gmatch(paths, "[^,]+") do
      count = count + 1
      requests[count] = wrk.format(nil, path)
    end
  end

  function request()
    index = index % count + 1
    return requests[index]
  end
end
