import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Several gateway processes sharing one Redis, as docker/compose.yml runs them, but on
/// loopback: real gatehouse binaries, redis-server and Debian's nginx in front.
struct Cluster {
    let redis: RedisServer
    let mock: MockProvider
    let gateways: [Gateway]
    let key: String
    let secret: String
    let client: HTTPClient

    /// Starts `instances` gateways on one fresh Redis; all of them announce `publicURL`
    /// (the proxy's address) or, without one, the first gateway's own address.
    static func start(instances: Int, publicURL: String? = nil) async throws -> Cluster {
        let redis = try await RedisServer.launch()
        let mock = try await MockProvider.start()
        let workspace = try Workspace(providers: LoginBench.providers(mock: mock.baseURL))
        var gateways: [Gateway] = []
        for _ in 0..<instances {
            gateways.append(try await Gateway.start(workspace: workspace, store: redis.url(), publicURL: publicURL))
        }
        let created = try await gateways[0].send("POST", "/api/admin/apps", body: #"{"name":"shop","domains":["localhost"]}"#)
        guard let key = created.json?["key"]?.stringValue, let secret = created.json?["secret"]?.stringValue else {
            throw RawHTTPError("app creation failed: \(created.status)")
        }
        for provider in ["mock2", "mockpkce"] {
            let body = #"{"parameters":{"client_id":"client-1","client_secret":"secret-1","scope":["user"]},"response_type":"both"}"#
            let put = try await gateways[0].send("PUT", "/api/admin/apps/\(key)/keysets/\(provider)", body: body)
            guard put.status == 200 || put.status == 201 else { throw RawHTTPError("keyset: \(put.status)") }
        }
        return Cluster(redis: redis, mock: mock, gateways: gateways, key: key, secret: secret, client: try HTTPClient())
    }

    func stop() async throws {
        client.shutdown()
        for gateway in gateways { _ = try await gateway.stop() }
        mock.stop()
        await redis.stop()
    }

    func base(_ index: Int) -> String { "http://127.0.0.1:\(gateways[index].port)" }

    func get(_ url: String) async throws -> HTTPClientResponse {
        try await client.execute(HTTPClientRequest(method: "GET", url: url))
    }

    func post(_ url: String, form: [String: String]) async throws -> HTTPClientResponse {
        let body = form.sorted { $0.key < $1.key }.map { "\($0.key)=\(PercentEncoding.encode($0.value))" }.joined(separator: "&")
        return try await client.execute(HTTPClientRequest(
            method: "POST", url: url, headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")],
            body: Array(body.utf8)))
    }

    func startURL(_ base: String, provider: String = "mock2", state: String) -> String {
        // OpenID providers get the openid scope, so an id_token comes back and is verified.
        let opts = provider == "mockpkce" ? #"{"state":"\#(state)","scope":"openid"}"# : #"{"state":"\#(state)"}"#
        return base + "/auth/\(provider)?k=\(key)&d=\(PercentEncoding.encode("http://localhost/"))&opts=" + PercentEncoding.encode(opts)
    }

    /// One popup login with an app state: start at `startBase`; the provider sends the
    /// browser to the public URL's callback. Returns the message the page posts.
    /// `callbackBase` replaces the public URL in the callback, to pick the instance by hand.
    func login(startBase: String, provider: String = "mock2", state: String, callbackBase: String? = nil) async throws -> JSONValue {
        let start = try await get(startURL(startBase, provider: provider, state: state))
        guard start.status == 302, let authorize = start.header("location") else {
            throw RawHTTPError("start answered \(start.status)")
        }
        let consent = try await get(authorize)
        guard consent.status == 302, var callback = consent.header("location") else {
            throw RawHTTPError("the provider answered \(consent.status)")
        }
        if let callbackBase, let end = callback.range(of: "/auth?")?.lowerBound {
            callback = callbackBase + callback[end...]
        }
        let page = try await get(callback)
        guard page.status == 200 else { throw RawHTTPError("callback answered \(page.status)") }
        return try LoginBench.message(page)
    }
}

/// nginx in front of the gateways, with a config generated for this run.
final class Proxy: Sendable {
    let port: UInt16
    let process: ServiceProcess

    init(upstreams: [UInt16], port: UInt16) throws {
        let directory = TemporaryDirectory.make()
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        let servers = upstreams.map { "        server 127.0.0.1:\($0);" }.joined(separator: "\n")
        // As docker/nginx.conf, plus the paths a non-installed nginx needs.
        let config = """
            \(getuid() == 0 ? "user root;" : "")
            daemon off;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path \(directory)/tmp/body;
                proxy_temp_path \(directory)/tmp/proxy;
                fastcgi_temp_path \(directory)/tmp/fastcgi;
                uwsgi_temp_path \(directory)/tmp/uwsgi;
                scgi_temp_path \(directory)/tmp/scgi;
                upstream gatehouse {
            \(servers)
                    keepalive 32;
                }
                server {
                    listen 127.0.0.1:\(port);
                    location = /metrics { return 404; }
                    location / {
                        proxy_pass http://gatehouse;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_set_header Host $http_host;
                        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        proxy_set_header X-Forwarded-Proto $scheme;
                        proxy_next_upstream error timeout http_502 http_503;
                    }
                }
            }
            """
        try config.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        self.port = port
        process = try ServiceProcess(
            name: "nginx", executable: "nginx",
            arguments: ["-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/error.log"],
            port: port, logPath: directory + "/nginx.out")
    }

    var base: String { "http://127.0.0.1:\(port)" }
}

extension ScaleOutSuites {
    @Suite("Scale-out")
    struct ScaleOutTests {
        @Test("two instances behind nginx: 1,000 logins without a failure; 100 racing redemptions of one code, one success")
        func topology() async throws {
            // The public URL names the proxy's port before nginx binds it: held bound (refusing)
            // until then, so nothing running alongside takes it.
            var holder: RefusingPort? = RefusingPort()
            let proxyPort = try #require(holder?.port)
            let cluster = try await Cluster.start(instances: 2, publicURL: "http://127.0.0.1:\(proxyPort)")
            let upstreams = cluster.gateways.map(\.port)
            holder = nil
            let proxy = try await offPool { try Proxy(upstreams: upstreams, port: proxyPort) }

            let logins = 1000
            let lanes = 8
            let failures = try await withThrowingTaskGroup(of: [String].self) { group in
                for lane in 0..<lanes {
                    group.addTask {
                        var problems: [String] = []
                        for index in stride(from: lane, to: logins, by: lanes) {
                            do {
                                let message = try await cluster.login(startBase: proxy.base, state: "s\(index)")
                                if message["status"] != "success" || message["state"] != .string("s\(index)") {
                                    problems.append("login \(index): \(message)")
                                }
                            } catch {
                                problems.append("login \(index): \(error)")
                            }
                        }
                        return problems
                    }
                }
                return try await group.reduce([], +)
            }
            #expect(failures.isEmpty, "\(failures.count) failures, first: \(failures.prefix(3))")

            // Both instances served part of the load.
            for index in 0..<2 {
                let metrics = try await cluster.get(cluster.base(index) + "/metrics")
                let samples = try PrometheusText.parse(String(decoding: metrics.body, as: UTF8.self))
                let served = samples.filter { $0.name == "gatehouse_http_requests_total" && $0.labels["route"] == "/auth" }.reduce(0) { $0 + $1.value }
                #expect(served > 100, "instance \(index) served \(served) callbacks")
            }

            // A code, redeemed 100 times at once, half on each instance.
            let message = try await cluster.login(startBase: proxy.base, state: "race")
            let code = try #require(message["data"]?["code"]?.stringValue)
            let outcomes = try await withThrowingTaskGroup(of: Int.self) { group in
                for attempt in 0..<100 {
                    group.addTask {
                        try await cluster.post(
                            cluster.base(attempt % 2) + "/auth/access_token", form: ["code": code, "key": cluster.key, "secret": cluster.secret]
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == 200 }.count == 1)
            #expect(outcomes.filter { $0 == 400 }.count == 99)
            _ = try? await offPool { proxy.process.stop() }
            try await cluster.stop()
        }

        @Test("a login started on one instance finishes on the other; refresh is single-flight across instances; JWKS is fetched once")
        func sharedState() async throws {
            // One public URL for both, as behind a proxy; the test plays the proxy by hand.
            let cluster = try await Cluster.start(instances: 2, publicURL: "http://127.0.0.1:\(freePort())")
            // Started on instance 0, finished on instance 1.
            let message = try await cluster.login(startBase: cluster.base(0), state: "cross", callbackBase: cluster.base(1))
            #expect(message["status"] == "success")
            let code = try #require(message["data"]?["code"]?.stringValue)
            let tokens = try await cluster.post(cluster.base(0) + "/auth/access_token", form: ["code": code, "key": cluster.key, "secret": cluster.secret])
            let refreshToken = try #require(tokens.json?["refresh_token"]?.stringValue)

            // The mock rotates refresh tokens: a second upstream refresh of the old token would
            // fail. Twelve racing refreshes on both instances must all get the same new tokens.
            let token = refreshToken
            let before = try await cluster.mock.stats()["refresh"] ?? 0
            let answers = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for attempt in 0..<12 {
                    group.addTask {
                        let response = try await cluster.post(
                            cluster.base(attempt % 2) + "/auth/refresh_token/mock2", form: ["token": token, "key": cluster.key, "secret": cluster.secret])
                        return (response.status, response.json?["access_token"]?.stringValue)
                    }
                }
                return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.0 == 200 }, "\(answers.map(\.0))")
            #expect(Set(answers.compactMap(\.1)).count == 1, "every caller got the same new access token")
            #expect((try await cluster.mock.stats()["refresh"] ?? 0) - before == 1, "one upstream refresh for twelve callers")

            // OpenID logins on both instances: the JWKS is fetched from the provider once and
            // the other instance takes the shared copy.
            for index in 0..<2 {
                for round in 0..<2 {
                    let login = try await cluster.login(
                        startBase: cluster.base(index), provider: "mockpkce", state: "oidc\(index)\(round)", callbackBase: cluster.base(index))
                    #expect(login["status"] == "success", "\(login)")
                }
            }
            var upstream = 0
            var shared = 0
            for index in 0..<2 {
                let text = String(decoding: try await cluster.get(cluster.base(index) + "/metrics").body, as: UTF8.self)
                for sample in try PrometheusText.parse(text) where sample.name == "gatehouse_jwks_fetches_total" && sample.labels["outcome"] == "ok" {
                    if sample.labels["source"] == "upstream" { upstream += Int(sample.value) } else { shared += Int(sample.value) }
                }
            }
            #expect(upstream == 1 && shared == 1, "upstream \(upstream), shared \(shared)")
            try await cluster.stop()
        }

        @Test("/metrics parses as Prometheus text and counts requests, upstream calls, store timings and store errors")
        func metrics() async throws {
            let bench = try await LoginBench.start(store: try await TestStore.sqlite.location())
            for index in 0..<3 {
                let message = try LoginBench.message(try await bench.login("mock2", opts: #"{"state":"m\#(index)","state_type":"client"}"#))
                #expect(message["status"] == "success")
            }
            let denied = try LoginBench.message(try await bench.login("mock2", opts: #"{"state":"d","state_type":"client","scope":"deny"}"#))
            #expect(denied["status"] == "error")
            #expect(try await bench.get(bench.base + "/no/such/path").status == 404)
            #expect(try await bench.post("/auth/access_token", form: ["code": String(repeating: "C", count: 27), "key": bench.key, "secret": bench.secret]).status == 400)

            // Requests are counted when libmicrohttpd reports them complete, a moment after the
            // client has its answer, and each server thread reports its own: poll until every
            // request above is counted, not only the last one sent.
            let completed: [(name: String, labels: [String: String], count: Double)] = [
                ("gatehouse_http_requests_total", ["method": "GET", "route": "/auth/:provider", "status": "302"], 4),
                ("gatehouse_http_requests_total", ["method": "GET", "route": "/auth", "status": "200"], 4),
                ("gatehouse_http_requests_total", ["method": "GET", "route": "unmatched", "status": "404"], 1),
                ("gatehouse_http_requests_total", ["method": "POST", "route": "/auth/access_token", "status": "400"], 1),
            ]
            var samples: [PrometheusText.Sample] = []
            let deadline = ContinuousClock.now + .seconds(3)
            repeat {
                let response = try await bench.get(bench.base + "/metrics")
                #expect(response.status == 200)
                #expect(response.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
                samples = try PrometheusText.parse(String(decoding: response.body, as: UTF8.self))
                if completed.allSatisfy({ PrometheusText.value(samples, $0.name, $0.labels) == $0.count }) { break }
                try await Task.sleep(for: .milliseconds(50))
            } while ContinuousClock.now < deadline

            func count(_ name: String, _ labels: [String: String]) -> Double? { PrometheusText.value(samples, name, labels) }
            for request in completed { #expect(count(request.name, request.labels) == request.count, "\(request.labels)") }
            #expect(count("gatehouse_http_request_duration_seconds_count", ["method": "GET", "route": "/auth/:provider"]) == 4)
            #expect(count("gatehouse_http_request_duration_seconds_bucket", ["method": "GET", "route": "/auth/:provider", "le": "+Inf"]) == 4)
            #expect(count("gatehouse_upstream_requests_total", ["provider": "mock2", "step": "access_token", "outcome": "ok"]) == 3)
            #expect(samples.filter { $0.name == "gatehouse_store_errors_total" }.isEmpty)
            // Each of the four logins stored its state and took it back; the denied one too.
            for operation in ["put_record", "take_record"] {
                let timed = count("gatehouse_store_operation_duration_seconds_count", ["operation": operation]) ?? 0
                #expect(timed >= 4, "\(operation) timed \(timed) times")
                #expect(count("gatehouse_store_operation_duration_seconds_bucket", ["operation": operation, "le": "+Inf"]) == timed)
                #expect((count("gatehouse_store_operation_duration_seconds_sum", ["operation": operation]) ?? -1) > 0)
            }
            try await bench.stop()
        }

        @Test("store errors are counted while Redis is down")
        func storeErrorsCounted() async throws {
            let redis = try await RedisServer.launch()
            let bench = try await LoginBench.start(store: redis.url())
            await redis.stop(signal: SIGKILL)
            #expect(try await bench.get(bench.base + "/readyz").status == 503)
            #expect(try await bench.get(bench.startURL("mock2", opts: #"{"state":"x"}"#)).status == 503)
            let text = String(decoding: try await bench.get(bench.base + "/metrics").body, as: UTF8.self)
            let samples = try PrometheusText.parse(text)
            #expect((PrometheusText.value(samples, "gatehouse_store_errors_total", ["operation": "ping", "kind": "unavailable"]) ?? 0) >= 1)
            #expect((PrometheusText.value(samples, "gatehouse_store_errors_total", ["kind": "unavailable"]) ?? 0) >= 2, "the login's failure too")
            try await bench.stop()
        }
    }
}

/// A strict reader of the Prometheus text exposition format (0.0.4): every sample line must
/// be well formed and belong to a family declared by a `# TYPE` line, and histograms must be
/// cumulative and end in `+Inf` equal to `_count`.
enum PrometheusText {
    struct Sample {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    struct FormatError: Error, CustomStringConvertible {
        let description: String
    }

    static func value(_ samples: [Sample], _ name: String, _ labels: [String: String]) -> Double? {
        let matching = samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
        return matching.isEmpty ? nil : matching.reduce(0) { $0 + $1.value }
    }

    static func parse(_ text: String) throws -> [Sample] {
        var types: [String: String] = [:]
        var samples: [Sample] = []
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(rawLine)
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                guard parts.count >= 3, ["HELP", "TYPE"].contains(parts[1]), isName(parts[2]) else {
                    throw FormatError(description: "bad comment line: \(line)")
                }
                if parts[1] == "TYPE" {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                        throw FormatError(description: "bad TYPE line: \(line)")
                    }
                    types[parts[2]] = parts[3]
                }
                continue
            }
            samples.append(try sample(line))
        }
        for sample in samples {
            let family = ["_bucket", "_sum", "_count"].compactMap { suffix -> String? in
                sample.name.hasSuffix(suffix) && types[String(sample.name.dropLast(suffix.count))] == "histogram"
                    ? String(sample.name.dropLast(suffix.count)) : nil
            }.first ?? sample.name
            guard types[family] != nil else { throw FormatError(description: "\(sample.name) has no TYPE line") }
        }
        try checkHistograms(samples, types: types)
        return samples
    }

    private static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || first == ":" || CharacterSet.letters.contains(first) else { return false }
        return text.unicodeScalars.allSatisfy { $0 == "_" || $0 == ":" || ($0.isASCII && CharacterSet.alphanumerics.contains($0)) }
    }

    private static func sample(_ line: String) throws -> Sample {
        let characters = Array(line)
        var index = 0
        var name = ""
        while index < characters.count, characters[index] != "{", characters[index] != " " {
            name.append(characters[index])
            index += 1
        }
        guard isName(name) else { throw FormatError(description: "bad metric name in: \(line)") }
        var labels: [String: String] = [:]
        if index < characters.count, characters[index] == "{" {
            index += 1
            while index < characters.count, characters[index] != "}" {
                var label = ""
                while index < characters.count, characters[index] != "=" {
                    label.append(characters[index])
                    index += 1
                }
                guard isName(label), index + 1 < characters.count, characters[index + 1] == "\"" else {
                    throw FormatError(description: "bad label in: \(line)")
                }
                index += 2
                var value = ""
                while index < characters.count, characters[index] != "\"" {
                    if characters[index] == "\\" {
                        index += 1
                        guard index < characters.count else { break }
                        switch characters[index] {
                        case "n": value.append("\n")
                        case "\\", "\"": value.append(characters[index])
                        default: throw FormatError(description: "bad escape in: \(line)")
                        }
                    } else {
                        value.append(characters[index])
                    }
                    index += 1
                }
                guard index < characters.count else { throw FormatError(description: "unterminated label value in: \(line)") }
                index += 1
                guard labels[label] == nil else { throw FormatError(description: "repeated label in: \(line)") }
                labels[label] = value
                if index < characters.count, characters[index] == "," { index += 1 }
            }
            guard index < characters.count else { throw FormatError(description: "unterminated labels in: \(line)") }
            index += 1
        }
        guard index < characters.count, characters[index] == " " else { throw FormatError(description: "no value in: \(line)") }
        let rest = String(characters[(index + 1)...]).split(separator: " ")
        guard (1...2).contains(rest.count), let value = Double(rest[0]) ?? (rest[0] == "+Inf" ? .infinity : nil) else {
            throw FormatError(description: "bad value in: \(line)")
        }
        return Sample(name: name, labels: labels, value: value)
    }

    private static func checkHistograms(_ samples: [Sample], types: [String: String]) throws {
        for (family, type) in types where type == "histogram" {
            var series: [[String: String]: [(bound: Double, count: Double)]] = [:]
            for sample in samples where sample.name == family + "_bucket" {
                guard let le = sample.labels["le"], let bound = le == "+Inf" ? Double.infinity : Double(le) else {
                    throw FormatError(description: "\(family) bucket without a valid le")
                }
                var key = sample.labels
                key["le"] = nil
                series[key, default: []].append((bound, sample.value))
            }
            for (key, buckets) in series {
                let sorted = buckets.sorted { $0.bound < $1.bound }
                guard sorted.last?.bound == .infinity else { throw FormatError(description: "\(family) \(key) lacks +Inf") }
                for pair in zip(sorted, sorted.dropFirst()) where pair.1.count < pair.0.count {
                    throw FormatError(description: "\(family) \(key) buckets are not cumulative")
                }
                let count = samples.first { $0.name == family + "_count" && $0.labels == key }?.value
                guard count == sorted.last?.count else { throw FormatError(description: "\(family) \(key): +Inf differs from _count") }
            }
        }
    }
}
