-- wrk script for scripts/bench.mjs: one script for every scenario, driven by environment
-- variables so that the request is built once and wrk's hot loop stays in C.
--
--   BENCH_METHOD  request method (default GET)
--   BENCH_TOKEN   raw token for the Authorization header (omitted when unset)
--   BENCH_BODY    JSON request body (sent with Content-Type: application/json)
--   BENCH_PATHS   comma-separated paths to cycle through, e.g. /book/1,/book/2
--                 (default: the path of the URL given to wrk)
--   BENCH_KEY_PREFIX  when set, every request carries a fresh Idempotency-Key:
--                 <prefix>-<thread>-<counter>; the prefix must be new for every wrk run
--                 (the counters restart at 1), so keys never repeat across runs
--   BENCH_EXPECT_STATUS  when set, every answer must have this status and no
--                 Idempotent-Replayed header; the others are counted and printed at the end as
--                 "Unexpected responses: N (first: <status> <body>)"
--
-- By hand, e.g.:
--   BENCH_TOKEN=$TOKEN BENCH_PATHS=/book/1,/book/2 \
--     wrk -t1 -c64 -d10s --latency -s scripts/bench/scenario.lua http://127.0.0.1:8080
--   BENCH_TOKEN=$TOKEN BENCH_METHOD=POST BENCH_BODY='{"title":"T","author":"A","year":2024}' \
--     BENCH_KEY_PREFIX=$(openssl rand -hex 8) BENCH_EXPECT_STATUS=201 \
--     wrk -t1 -c64 -d10s --latency -s scripts/bench/scenario.lua http://127.0.0.1:8080/book

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
local keyPrefix = env("BENCH_KEY_PREFIX")
local expectStatus = tonumber(env("BENCH_EXPECT_STATUS") or "")

-- setup() runs in wrk's main Lua state once per thread; the thread's own state gets its number
-- (for its keys) and, with BENCH_EXPECT_STATUS, is read back in done().
local threads = {}
if keyPrefix or expectStatus then
  function setup(thread)
    threads[#threads + 1] = thread
    thread:set("threadNumber", #threads)
  end
end

if paths or keyPrefix then
  local requests = {}
  local count = 0
  local index = 0
  local keyCounter = 0
  local KEY_MARK = "\0key\0"

  -- After wrk.init has set the Host header: pre-format one request per path (the URL's path when
  -- none is given). With keys, each is split where the key goes, so that a request costs wrk one
  -- concatenation rather than a wrk.format over every header.
  function init(args)
    if keyPrefix then wrk.headers["Idempotency-Key"] = KEY_MARK end
    for path in string.gmatch(paths or wrk.path, "[^,]+") do
      count = count + 1
      local formatted = wrk.format(nil, path)
      if keyPrefix then
        local at = string.find(formatted, KEY_MARK, 1, true)
        requests[count] = {
          string.sub(formatted, 1, at - 1) .. keyPrefix .. "-" .. threadNumber .. "-",
          string.sub(formatted, at + #KEY_MARK),
        }
      else
        requests[count] = formatted
      end
    end
  end

  if keyPrefix then
    function request()
      index = index % count + 1
      keyCounter = keyCounter + 1
      local parts = requests[index]
      return parts[1] .. keyCounter .. parts[2]
    end
  else
    function request()
      index = index % count + 1
      return requests[index]
    end
  end
end

if expectStatus then
  unexpected = 0
  firstUnexpected = ""

  -- Defined only here: a response() callback makes wrk collect every answer's headers and body.
  function response(status, headers, body)
    local replayed = headers["Idempotent-Replayed"] or headers["idempotent-replayed"]
    if status ~= expectStatus or replayed then
      unexpected = unexpected + 1
      if firstUnexpected == "" then
        firstUnexpected = status .. (replayed and " (Idempotent-Replayed: " .. replayed .. ")" or "") ..
          " " .. string.sub(body or "", 1, 200):gsub("%s+", " ")
      end
    end
  end

  function done(summary, latency, requests)
    local total = 0
    local first = ""
    for _, thread in ipairs(threads) do
      total = total + (thread:get("unexpected") or 0)
      if first == "" then first = thread:get("firstUnexpected") or "" end
    end
    io.write(string.format("Unexpected responses: %d (expected %d without Idempotent-Replayed)", total, expectStatus))
    if total > 0 then io.write(" (first: " .. first .. ")") end
    io.write("\n")
  end
end
