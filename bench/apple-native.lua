-- wrk script for bench/apple-verify: every request is the same
-- POST /auth/apple/native (backend mode, verification only). The JSON body
-- ({"key","secret","identity_token"}) is written by the benchmark to the file
-- named by APPLE_VERIFY_BODY, so the token never appears on a command line.
-- No response() callback: wrk's own non-2xx count is the failure check, and
-- a callback would make wrk parse every body and cost the server CPU.
local path = os.getenv("APPLE_VERIFY_BODY")
if not path or path == "" then
    error("APPLE_VERIFY_BODY must name the request body file")
end
local file = assert(io.open(path, "rb"))
local body = file:read("*a")
file:close()
if #body == 0 then
    error("APPLE_VERIFY_BODY is empty: " .. path)
end

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
