import GatehouseCore
import Synchronization
import Testing

@Suite("Logging")
struct LoggingTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test("secrets, tokens and codes are redacted whatever the key spelling")
    func redaction() {
        for key in ["secret", "app.secret", "oauth.access_token", "client_secret", "Authorization", "code", "master_key", "refresh_token"] {
            #expect(Redaction.isSensitive(key: key), "\(key)")
        }
        for key in ["app.key", "request.id", "http.path", "http.status_code", "provider.id"] {
            #expect(!Redaction.isSensitive(key: key), "\(key)")
        }
    }

    @Test("JSON lines carry level, message and metadata, and never a secret value")
    func jsonLines() throws {
        let lines = Lines()
        let handler = StreamLogHandler(format: .json, capture: { lines.append($0) })
        let logger = Logger(label: "test", level: .info, handler: handler).with("request.id", "r1")
        logger.info("Token exchanged", ["oauth.access_token": "SECRET-VALUE", "provider.id": "github"])
        logger.debug("Not shown")
        #expect(lines.all.count == 1)
        let line = try #require(lines.all.first)
        #expect(!line.contains("SECRET-VALUE"))
        let object = try JSONCoding.decode(JSONValue.self, from: Array(line.utf8))
        #expect(object["message"] == "Token exchanged")
        #expect(object["level"] == "info")
        #expect(object["request.id"] == "r1")
        #expect(object["oauth.access_token"] == "[redacted]")
    }

    @Test("text lines are one line even when values contain newlines")
    func textLines() throws {
        let lines = Lines()
        let logger = Logger(label: "t", handler: StreamLogHandler(format: .text, capture: { lines.append($0) }))
        logger.warning("Odd input", ["path": "/a"])
        #expect(lines.all.first?.contains("WARNING t: Odd input path=/a") == true)
    }

    @Test("a throttled event is written at once, then at most once an interval, with what it stood for")
    func throttle() {
        let throttle = LogThrottle(interval: .seconds(1))
        let start = ContinuousClock.now
        #expect(throttle.occurrence(at: start) == 1)
        for step in 1...9 { #expect(throttle.occurrence(at: start + .milliseconds(100 * step)) == nil) }
        // Nine held back, and this one.
        #expect(throttle.occurrence(at: start + .seconds(1)) == 10)
        #expect(throttle.occurrence(at: start + .milliseconds(1500)) == nil)
        #expect(throttle.occurrence(at: start + .seconds(5)) == 2)
    }
}
