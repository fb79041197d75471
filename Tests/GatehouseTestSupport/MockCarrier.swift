import Foundation

/// Local stand-ins for nine carrier one-click vendors: `Tests/Fixtures/mock_carrier.py` run as
/// a python3 child process on 127.0.0.1, each vendor under its own path prefix
/// (`/emay`, `/geetest`, ...), checking signatures and envelopes as the vendor documents and
/// answering with the phone protected as the vendor does. Start one per test so state never mixes.
public final class MockCarrier: FixtureServer, @unchecked Sendable {
    /// A device token the mock minted, with the companions some vendors want alongside it.
    public struct DeviceToken: Sendable {
        public let token: String
        /// Geetest's `process_id`.
        public let processID: String
        /// MobTech's carrier `opToken`.
        public let opToken: String
        /// Yidun's carrier `accessToken`.
        public let accessToken: String
    }

    /// How the mock treats a token's exchange.
    public enum Behaviour: String, Sendable {
        case ok
        /// Already expired when minted.
        case expired
        /// Answered with an HTML page (Emay: a correctly enveloped HTML page).
        case garbage
        /// The phone (or envelope) encrypted under a key the app does not have.
        case wrongKey = "wrongkey"
        /// Answered only after `delay` seconds.
        case slow
    }

    /// The credentials the mock accepts, per vendor (mirrors `CREDENTIALS` in the script).
    public static let credentials: [String: [String: String]] = [
        "emay": ["appId": "EMAY-TEST-APP-01", "secretKey": "ABCDEFGH12345678"],
        "geetest": ["appId": "zoekwui1hnmg49x5fwzf5la0ml5dziwn", "appKey": "gywzffojtnzl0vd6kcut8fcgyud5wg49"],
        "aliyun": ["accessKeyId": "testid", "accessKeySecret": "testsecret"],
        "shanyan": ["appId": "xnFiQUGP", "appKey": "shanyanAppKey001"],
        "jverification": ["appKey": "7d431e42dfa6a6d693ac2d04", "masterSecret": "5e987ac6d2e04d95a9d8f0d1", "rsaPrivateKeyPem": rsaPrivateKeyPEM],
        "mobtech": ["appKey": "2f2d7j9wf8a40", "appSecret": "9ea05374746c988ab3373112b2ba9289"],
        "cmcc": ["appId": "300011111111", "appKey": "APPKEY0123456789"],
        "tencent": ["sdkAppId": "1400000000", "appKey": "5f03a35d00ee52a21327ab048186a2c4"],
        "yidun": ["secretId": "SECRETID", "secretKey": "SECRETKEY", "businessId": "BIZID"],
    ]

    /// carrier.md §12 G8's 1024-bit test key: JVerification's mock encrypts with its public half.
    public static let rsaPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIICdQIBADANBgkqhkiG9w0BAQEFAASCAl8wggJbAgEAAoGBAKke42SCONsKZUO0
        oBwhb/t9UIroAx0dbZHrzS+YxqqZM0mzU6e1ARE4HE75WG48saxMgTR7tWkPvJ8S
        l/5Wrn2ANDLuBrojcHkA9uvXoeIc+2JA2F7QJHxLYwmSq/17EuwaXqO01ECMZqlI
        npw/qSCZ1Wmbv06pSKTY9IB9b1P3AgMBAAECgYA7qNDQsPt7kcQ9SSe+JLGLRx61
        kbkfeTUg58z/QGa84cRs+FzHaZvRxjh+R4nBgZmvzWE68XUCdfG1L+r8ZvmwayUT
        s/QiwGrT7jH+/ix6aQykYCQg2WrEaTrOdJK6xoMrYJ56LvzClDkUSpsc4LAkFjFt
        RfWmWZnM329oCpuIkQJBANoaDpQBs2ngd3dJ0pPkTAdTUIQX8Uk2xIIn/3R5T/WZ
        BAWQIoTqXbqXl8wTEX0rbItePEpkHU8UhcAN9BOO/78CQQDGgfn/HGTUUeSUzjSO
        2wX2OCMit/qoyI7v8J7TeW5sh22XrocP1dkyey79JON9tFc6BYc3Y/s/B0f0XgAS
        iTnJAkAo1WQRVdgvZHU5gjrIsZ+CZ5jVgl4MZRKZg7+SIPxVcRaNrBSqae6udp9W
        9+L4Wl7yIOyMyP2rxp3b/UDLQKSlAkAGlDAw4EQHNV+Z/uuHAINGEb44XFiWV29F
        THg3EgMy3ZooOMSJJdE49xQrl5lihSOO7Lf6gfnFsPwVgTgHZTzhAkA2we2n4JSL
        AAHErE6Sdn54DWbgyPveyehLpM1JRIIBoaFmiPFD2pgmNQBbbPgc4sW4+70gpSB1
        qQViwmtrjCbt
        -----END PRIVATE KEY-----

        """

    /// Launches `python3 Tests/Fixtures/mock_carrier.py --port 0` off the cooperative pool.
    public static func start() async throws -> MockCarrier {
        try await offPool { MockCarrier(child: try MockProcess(scriptName: "mock_carrier.py", name: "mock carrier")) }
    }

    /// `POST /_token`: a fresh single-use device token for `vendor` standing for `phone`.
    public func mint(vendor: String, phone: String = "13800138000", behaviour: Behaviour = .ok, delay: Double = 0) async throws
        -> DeviceToken
    {
        let body = #"{"vendor":"\#(vendor)","phone":"\#(phone)","behaviour":"\#(behaviour.rawValue)","delay":\#(delay)}"#
        let object = try await child.controlJSON("POST /_token", json: body)
        guard let token = object["token"] as? String, let process = object["process_id"] as? String,
            let opToken = object["op_token"] as? String, let accessToken = object["access_token"] as? String
        else { throw MockProviderError("/_token returned \(object)") }
        return DeviceToken(token: token, processID: process, opToken: opToken, accessToken: accessToken)
    }

    /// `GET /_stats`: vendor requests seen in all, per device token, and refusals by reason.
    public func stats() async throws -> (total: Int, requests: [String: Int], rejected: [String: Int]) {
        let object = try await child.controlJSON("GET /_stats")
        func counters(_ value: Any?) -> [String: Int] {
            var result: [String: Int] = [:]
            for (name, count) in (value as? [String: Any]) ?? [:] {
                if let number = MockProcess.integer(count) { result[name] = number }
            }
            return result
        }
        return (object["total"].flatMap(MockProcess.integer) ?? -1, counters(object["requests"]), counters(object["rejected"]))
    }
}
