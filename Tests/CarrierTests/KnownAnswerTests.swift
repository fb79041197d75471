import Carrier
import Compression
import GatehouseCore
import GatehouseCrypto
import GatehouseTestSupport
import Testing

/// carrier.md §12: the known-answer vectors, run through the engine's own operations (a small
/// definition per recipe, prepared or interpreted with a frozen clock).
@Suite("Carrier known answers")
struct KnownAnswerTests {
    static func definition(_ text: String) throws -> CarrierDefinition {
        let document = try #require(JSONValue.parse(text))
        switch CarrierDefinitionReader.read(document) {
        case .success(let definition): return definition
        case .failure(let failure): throw EngineTestError("defects: \(failure.defects)")
        }
    }

    static func exchange(_ text: String, inputs: [String: String] = ["token": "T"], secrets: [String: String]) throws -> CarrierExchange {
        try CarrierExchange(
            definition: definition(text), baseURL: "https://vendor.example", inputs: inputs, secrets: secrets,
            environment: CarrierEnvironment(nowMilliseconds: 1_542_355_862_990) { Array(repeating: 7, count: $0) })
    }

    static func formValue(_ body: [UInt8]?, _ name: String) -> String? {
        FormField.parse(String(decoding: body ?? [], as: UTF8.self))?.first { $0.name == name }.map(\.value)
    }

    static let geetestResponse = """
        {"kind":"carrier","secrets":["appKey"],"inputs":{"token":{"required":true}},
         "request":{"url":"/check_phone","body":{"fields":[{"name":"token","value":"{{input.token}}"}]}},
         "response":{"success":{"all":[{"path":"$.status","eq":200}]},"errorCode":"$.status",
          "phone":{"path":"$.result","decrypt":{"op":"aes","mode":"cbc","in":"hex","key":{"utf8":"{{secret.appKey}}"},
                   "iv":{"utf8":"0000000000000000"}}}}}
        """

    @Test("K1, K2: Geetest AES-256-CBC phone decryption", arguments: [
        ("be28dea08ee543320b1ef9e1bceb51e4", "gywzffojtnzl0vd6kcut8fcgyud5wg49", "13333333333"),
        ("d8de5f60137aba90a1e3ec13b12ec473", "32139f31fc733647b1e865ebaab277c2", "15727067221"),
    ])
    func geetestDecrypt(ciphertext: String, key: String, phone: String) throws {
        let exchange = try Self.exchange(Self.geetestResponse, secrets: ["appKey": key])
        let body = Array(#"{"status":200,"result":"\#(ciphertext)","charge":true}"#.utf8)
        let outcome = try exchange.interpret(status: 200, headers: [], body: body).get()
        #expect(outcome.phone == phone)
    }

    @Test("a wrong key is decrypt_failed, not a wrong number")
    func geetestWrongKey() throws {
        let exchange = try Self.exchange(Self.geetestResponse, secrets: ["appKey": "32139f31fc733647b1e865ebaab277c2"])
        let body = Array(#"{"status":200,"result":"be28dea08ee543320b1ef9e1bceb51e4"}"#.utf8)
        guard case .failure(let error) = exchange.interpret(status: 200, headers: [], body: body) else {
            Issue.record("decrypted with the wrong key")
            return
        }
        #expect(error.errorClass == .decryptFailed)
    }

    static func aliyun(timestampName: String) -> String {
        """
        {"kind":"carrier","secrets":["accessKeyId","accessKeySecret"],"inputs":{"token":{"required":true}},
         "request":{"method":"GET","url":"/","body":{"encoding":"form","fields":[
           {"name":"\(timestampName)","value":"2016-02-23T12:46:24Z"},{"name":"Format","value":"XML"},
           {"name":"AccessKeyId","value":"{{secret.accessKeyId}}"},{"name":"Action","value":"DescribeRegions"},
           {"name":"SignatureMethod","value":"HMAC-SHA1"},{"name":"SignatureNonce","value":"3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf"},
           {"name":"Version","value":"2014-05-26"},{"name":"SignatureVersion","value":"1.0"},
           {"name":"Signature","value":{"op":"hmac","alg":"sha1","out":"base64","key":"{{secret.accessKeySecret}}&",
             "msg":{"op":"concat","parts":["GET&%2F&",{"op":"percent","of":{"op":"canonical","source":"body","exclude":["Signature"],
               "encode":"rfc3986","pair":"{k}={v}","sep":"&"}}]}}}]}},
         "response":{"success":{"all":[{"path":"$.Code","eq":"OK"}]},"phone":{"path":"$.GetMobileResultDTO.Mobile"}}}
        """
    }

    @Test("K3, K3b: Aliyun RPC v1 signature over the sorted, RFC 3986-encoded fields", arguments: [
        ("TimeStamp", "CT9X0VtwR86fNWSnsc6v8YGOjuE="), ("Timestamp", "OLeaidS1JvxuMvnyHOwuJ+uX5qY="),
    ])
    func aliyunSignature(timestampName: String, expected: String) throws {
        let exchange = try Self.exchange(Self.aliyun(timestampName: timestampName), secrets: ["accessKeyId": "testid", "accessKeySecret": "testsecret"])
        let request = try exchange.prepare()
        #expect(Self.formValue(request.body, "Signature") == expected)
    }

    @Test("K4: Tencent sig is a plain SHA-256 of appkey, random and time")
    func tencentSig() throws {
        let text = """
            {"kind":"carrier","secrets":["sdkAppId","appKey"],"inputs":{"token":{"required":true}},
             "let":[{"name":"rnd","value":"7226249334"},{"name":"t","value":"1457336869"}],
             "request":{"url":"/v5/rapidauth/validate","query":{"sdkappid":"{{secret.sdkAppId}}","random":"{{rnd}}"},
              "body":{"fields":[{"name":"sig","value":{"op":"hash","alg":"sha256","msg":"appkey={{secret.appKey}}&random={{rnd}}&time={{t}}"}},
                {"name":"time","value":"{{t}}","type":"int"},{"name":"token","value":"{{input.token}}"}]}},
             "response":{"success":{"all":[{"path":"$.result","eq":0}]},"phone":{"path":"$.mobile"}}}
            """
        let request = try Self.exchange(text, secrets: ["sdkAppId": "1400000000", "appKey": "5f03a35d00ee52a21327ab048186a2c4"]).prepare()
        let body = try #require(JSONValue.parse(request.body ?? []))
        #expect(body["sig"]?.stringValue == "c13e54f047ed75e821e698730c72d030dc30e5b510b3f8a0fb6fb7605283d7df")
        #expect(String(decoding: request.body ?? [], as: UTF8.self).contains(#""time":1457336869"#))
        #expect(request.url == "https://vendor.example/v5/rapidauth/validate?random=7226249334&sdkappid=1400000000")
    }

    @Test("K5: JVerification HTTP Basic header")
    func jverificationBasic() throws {
        let text = """
            {"kind":"carrier","secrets":["appKey","masterSecret"],"inputs":{"token":{"required":true}},
             "request":{"url":"/v1/web/loginTokenVerify","auth":{"type":"basic","user":"{{secret.appKey}}","password":"{{secret.masterSecret}}"},
              "body":{"fields":[{"name":"loginToken","value":"{{input.token}}"}]}},
             "response":{"success":{"all":[{"path":"$.code","eq":8000}]},"phone":{"path":"$.phone"}}}
            """
        let request = try Self.exchange(text, secrets: ["appKey": "7d431e42dfa6a6d693ac2d04", "masterSecret": "5e987ac6d2e04d95a9d8f0d1"]).prepare()
        let authorization = request.headers.first { $0.name == "Authorization" }?.value
        #expect(authorization == "Basic N2Q0MzFlNDJkZmE2YTZkNjkzYWMyZDA0OjVlOTg3YWM2ZDJlMDRkOTVhOWQ4ZjBkMQ==")
    }

    @Test("D1: Geetest sign = hex HMAC-SHA256(app_key, app_id&&timestamp)")
    func geetestSign() throws {
        let text = """
            {"kind":"carrier","secrets":["appId","appKey"],"inputs":{"token":{"required":true}},
             "let":[{"name":"ts","value":{"op":"now","unit":"ms"}}],
             "request":{"url":"/check_phone","body":{"fields":[{"name":"timestamp","value":"{{ts}}"},
               {"name":"sign","value":{"op":"hmac","alg":"sha256","key":"{{secret.appKey}}","msg":"{{secret.appId}}&&{{ts}}"}}]}},
             "response":{"success":{"all":[{"path":"$.status","eq":200}]},"phone":{"path":"$.result"}}}
            """
        let request = try Self.exchange(text, secrets: ["appId": "zoekwui1hnmg49x5fwzf5la0ml5dziwn", "appKey": "gywzffojtnzl0vd6kcut8fcgyud5wg49"]).prepare()
        let body = try #require(JSONValue.parse(request.body ?? []))
        #expect(body["timestamp"]?.stringValue == "1542355862990")
        #expect(body["sign"]?.stringValue == "6ef12cd35800607896a0e82b2a53955d679f97ff63e2a17954ddfbd3f7647501")
    }

    @Test("G1: Shanyan AES-128-CBC with key and IV from md5(appKey)")
    func shanyanDecrypt() throws {
        let text = """
            {"kind":"carrier","secrets":["appKey"],"inputs":{"token":{"required":true}},
             "request":{"url":"/q","body":{"encoding":"form","fields":[{"name":"token","value":"{{input.token}}"}]}},
             "response":{"success":{"all":[{"path":"$.code","eq":"200000"}]},
              "phone":{"path":"$.data.mobileName","decrypt":{"op":"aes","mode":"cbc","in":"hex",
                "key":{"slice":{"of":{"md5hex":"{{secret.appKey}}"},"from":0,"to":16}},
                "iv":{"slice":{"of":{"md5hex":"{{secret.appKey}}"},"from":16,"to":32}}}}}}
            """
        let exchange = try Self.exchange(text, secrets: ["appKey": "xnFiQUGP"])
        let body = Array(#"{"code":"200000","data":{"mobileName":"8fb6537501b9b9d72b964351923ccdc4"}}"#.utf8)
        #expect(try exchange.interpret(status: 200, headers: [], body: body).get().phone == "13800138000")
    }

    @Test("G2, G3: Shanyan sign over the sent fields, sorted, name+value")
    func shanyanSign() throws {
        func sign(_ optional: Bool) throws -> String? {
            let text = """
                {"kind":"carrier","secrets":["appId","appKey"],"inputs":{"token":{"required":true},"outId":{},"clientIp":{}},
                 "request":{"url":"/q","body":{"encoding":"form","fields":[
                   {"name":"appId","value":"{{secret.appId}}"},{"name":"token","value":"{{input.token}}"},
                   {"name":"clientIp","value":"{{input.clientIp}}","omitIfEmpty":true},{"name":"encryptType","value":"\(optional ? "0" : "")","omitIfEmpty":true},
                   {"name":"outId","value":"{{input.outId}}","omitIfEmpty":true},
                   {"name":"sign","value":{"op":"hmac","alg":"sha256","key":"{{secret.appKey}}",
                     "msg":{"op":"canonical","source":"body","exclude":["sign"],"pair":"{k}{v}","sep":""}}}]}},
                 "response":{"success":{"all":[{"path":"$.code","eq":"200000"}]},"phone":{"path":"$.x"}}}
                """
            let inputs = optional ? ["token": "A2-TESTTOKEN", "outId": "11111", "clientIp": "1.1.1.1"] : ["token": "A2-TESTTOKEN"]
            return Self.formValue(try Self.exchange(text, inputs: inputs, secrets: ["appId": "xnFiQUGP", "appKey": "xnFiQUGP"]).prepare().body, "sign")
        }
        #expect(try sign(true) == "fba2ce4632baa8f3aac0a1e650c5e84918917288aeda5f688ec0870b8f4cb7d2")
        #expect(try sign(false) == "83000476c6a0d53ea8af801ecf803010e640ed22e7397aff1aa72042384c992a")
    }

    @Test("G4: MobTech DES-CBC record (legacy provider), then the nested JSON's phone")
    func mobtechDecrypt() throws {
        let text = """
            {"kind":"carrier","secrets":["appSecret"],"inputs":{"token":{"required":true}},
             "request":{"url":"/m","body":{"fields":[{"name":"token","value":"{{input.token}}"}]}},
             "response":{"success":{"all":[{"path":"$.status","eq":200}]},
              "phone":{"path":"$.res","decrypt":{"op":"des","mode":"cbc","in":"base64",
                "key":{"slice":{"of":"{{secret.appSecret}}","from":0,"to":8}},"iv":"00000000"},
               "then":{"op":"json","require":[{"path":"$.isValid","eq":1}],"path":"$.phone"}}}}
            """
        let exchange = try Self.exchange(text, secrets: ["appSecret": "9ea05374746c988ab3373112b2ba9289"])
        let body = Array(#"{"status":200,"res":"zTxM7bo9fdIVBIJpT7oxWYJPfru8NCi+kR13fjAEOSJLvpNUtLE9lJ/5zJVzsPS3PiE56RGxCBw="}"#.utf8)
        #expect(try exchange.interpret(status: 200, headers: [], body: body).get().phone == "13800138000")
    }

    @Test("G6: CMCC upper-case MD5 sign over the fixed field order")
    func cmccSign() throws {
        let text = """
            {"kind":"carrier","secrets":["appId","appKey"],"inputs":{"token":{"required":true}},
             "let":[{"name":"msgid","value":"335e06a28f064b999d6a25e403991e4c"},{"name":"st","value":"20180129112955435"}],
             "request":{"url":"/c","body":{"fields":[{"name":"sign","value":{"op":"hash","alg":"md5","out":"HEX",
               "msg":"{{secret.appId}}2.0{{msgid}}{{st}}0{{input.token}}{{secret.appKey}}"}}]}},
             "response":{"success":{"all":[{"path":"$.resultCode","eq":"103000","ci":true}]},"phone":{"path":"$.msisdn"}}}
            """
        let exchange = try Self.exchange(
            text, inputs: ["token": "STsid0000001517196594066OHmZvPMBwn2MkFxwvWkV12JixwuZuyDU"],
            secrets: ["appId": "300011111111", "appKey": "APPKEY0123456789"])
        let body = try #require(JSONValue.parse(try exchange.prepare().body ?? []))
        #expect(body["sign"]?.stringValue == "B0DF8D56CFEC6909665A8D5955C9D235")
    }

    static let emay = """
        {"kind":"carrier","secrets":["appId","secretKey"],"inputs":{"token":{"required":true}},
         "request":{"url":"/quickLogin/login","headers":{"appId":"{{secret.appId}}"},
          "body":{"fields":[{"name":"token","value":"{{input.token}}"}],
           "transforms":[{"op":"aes","mode":"ecb","dir":"enc","key":{"pad":{"of":"{{secret.secretKey}}","len":16,"with":" "}}}]}},
         "response":{"pre":[{"when":{"header":"result","eq":"SUCCESS"},"ops":[
            {"op":"aes","mode":"ecb","dir":"dec","key":{"pad":{"of":"{{secret.secretKey}}","len":16,"with":" "}}},
            {"op":"gunzip","ifMagic":true}]}],
          "success":{"all":[{"header":"result","eq":"SUCCESS"}]},"errorCode":{"header":"result"},"phone":{"path":"$.mobile"}}}
        """

    @Test("G7: Emay envelope AES-128-ECB, with and without gzip inside")
    func emayEnvelope() throws {
        let exchange = try Self.exchange(Self.emay, secrets: ["appId": "A", "secretKey": "ABCDEFGH12345678"])
        let ciphertext = [UInt8](hex: "3d6952c7ef4bf352a8b9f0b848f4c7f6f7d18e519a36d9f7dd54a8536c086571")
        let plain = try exchange.interpret(status: 200, headers: [VendorHeader(name: "Result", value: "SUCCESS")], body: ciphertext).get()
        #expect(plain.phone == "13800138000")
        let zipped = try BlockCipher.encrypt(
            try Gzip.compress(Array(#"{"mobile":"+8613900001234"}"#.utf8)), algorithm: .aes, mode: .ecb, key: Array("ABCDEFGH12345678".utf8))
        let outcome = try exchange.interpret(status: 200, headers: [VendorHeader(name: "result", value: "SUCCESS")], body: zipped).get()
        #expect(outcome.phone == "13900001234")
        let request = try exchange.prepare()
        let opened = try BlockCipher.decrypt(request.body ?? [], algorithm: .aes, mode: .ecb, key: Array("ABCDEFGH12345678".utf8))
        #expect(String(decoding: opened, as: UTF8.self) == #"{"token":"T"}"#)
        guard case .failure(let error) = exchange.interpret(status: 200, headers: [VendorHeader(name: "result", value: "ERROR_APPID")], body: []) else {
            Issue.record("an error header succeeded")
            return
        }
        #expect(error.errorClass == .upstream && error.vendorCode == "ERROR_APPID")
    }

    @Test("G8: RSA PKCS#1 v1.5 decryption of a 1024-bit key's base64 ciphertext")
    func rsaDecrypt() throws {
        let text = """
            {"kind":"carrier","secrets":["rsaPrivateKeyPem"],"inputs":{"token":{"required":true}},
             "request":{"url":"/j","body":{"fields":[{"name":"loginToken","value":"{{input.token}}"}]}},
             "response":{"success":{"all":[{"path":"$.code","eq":8000}]},
              "phone":{"path":"$.phone","decrypt":{"op":"rsa_decrypt","padding":"pkcs1","in":"base64","keyPem":"{{secret.rsaPrivateKeyPem}}"}}}}
            """
        let exchange = try Self.exchange(text, secrets: ["rsaPrivateKeyPem": MockCarrier.rsaPrivateKeyPEM])
        let ciphertext =
            "W3v9uONiA6ixEG1vl6cbbI29xiRr40zn4tffkmYRN2K+h8ohsNNKW1XWcUMOxUKx/1WpsYlc11z20h5DN6BmJKdBDeUd+80Sg9l1ARZOPRUFSv8YhbFb8gxGuUjBcnpn3RBB4KA2oOq0SNtskZWL82z+f6U1IoUJvdLxvoc2oRQ="
        let body = Array(#"{"id":117270465679982592,"code":8000,"phone":"\#(ciphertext)"}"#.utf8)
        #expect(try exchange.interpret(status: 200, headers: [], body: body).get().phone == "13800138000")
    }

    @Test("civil time formats: CMCC's Beijing compact time and Aliyun's UTC ISO 8601")
    func times() throws {
        let text = """
            {"kind":"carrier","inputs":{"token":{}},
             "request":{"url":"/t","body":{"fields":[{"name":"a","value":{"op":"now","format":"yyyyMMddHHmmssSSS","tz":"Asia/Shanghai"}},
               {"name":"b","value":{"op":"now","format":"iso8601z"}},{"name":"c","value":{"op":"now","unit":"s"}}]}},
             "response":{"success":{"all":[{"status":true,"eq":200}]},"phone":{"path":"$.p"}}}
            """
        let body = try #require(JSONValue.parse(try Self.exchange(text, secrets: [:]).prepare().body ?? []))
        // 1542355862990 ms = 2018-11-16T08:11:02.990Z.
        #expect(body["a"]?.stringValue == "20181116161102990")
        #expect(body["b"]?.stringValue == "2018-11-16T08:11:02Z")
        #expect(body["c"]?.stringValue == "1542355862")
    }

    @Test("definition defects carry JSON pointers")
    func defects() {
        let text = """
            {"kind":"carrier","secrets":["appKey"],"inputs":{"token":{"required":true}},"bogus":1,
             "request":{"url":"/x","body":{"fields":[{"name":"s","value":{"op":"hmac","alg":"sha512","key":"k","msg":"x"}},{"name":"t","value":"{{secret.nope}}"}]}},
             "response":{"success":{"all":[]},"errors":{"1":"no_such_class"},"phone":{"path":"mobile"}}}
            """
        guard case .failure(let failure) = CarrierDefinitionReader.read(JSONValue.parse(text) ?? .null) else {
            Issue.record("a defective definition was accepted")
            return
        }
        let lines = Set(failure.defects.map(\.description))
        #expect(lines.contains("/native/bogus: unknown key"))
        #expect(lines.contains("/native/request/body/fields/0/value/alg: must be md5, sha1 or sha256"))
        #expect(lines.contains("/native/request/body/fields/1/value: {{secret.nope}}: 'nope' is not in /secrets"))
        #expect(lines.contains("/native/response/errors/1: unknown error class 'no_such_class'"))
        #expect(lines.contains("/native/response/phone/path: must be a path like $.a.b"))
    }

    @Test("phone numbers are masked for logs")
    func masking() {
        #expect(PhoneNumber.masked("13800138000") == "138****8000")
        #expect(PhoneNumber.masked("123") == "[3 chars]")
        #expect(PhoneNumber.normalised("+86 138-0013-8000") == "13800138000")
    }
}

struct EngineTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension [UInt8] {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self = bytes
    }
}

@Suite("gzip")
struct GzipTests {
    @Test("round trip, magic detection, truncation and the output limit")
    func gzip() throws {
        let text = Array(String(repeating: "一键登录 carrier ", count: 200).utf8)
        let packed = try Gzip.compress(text)
        #expect(Gzip.isGzip(packed) && !Gzip.isGzip(text))
        #expect(try Gzip.decompress(packed) == text)
        #expect(throws: CompressionError.self) { try Gzip.decompress(Array(packed.dropLast(8))) }
        #expect(throws: CompressionError.self) { try Gzip.decompress(text) }
        #expect(throws: CompressionError.self) { try Gzip.decompress(packed, limit: 100) }
        #expect(try Gzip.decompress(try Gzip.compress([])) == [])
    }
}
