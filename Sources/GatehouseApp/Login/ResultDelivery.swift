internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPServer

/// Hands a login's outcome back to the page that started it, as the OAuth.io SDKs expect:
/// a popup page that posts the message to the opener's origin, a redirect carrying it in the
/// fragment, or (`redirect_type=server`) a 302 carrying it in the query. Every value that
/// reaches HTML or JavaScript is escaped; the script runs under a per-page CSP nonce.
enum ResultDelivery {
    struct Target: Sendable {
        var origin: String
        var redirectURI: String?
        var redirectType: String?
        var userAgent: String?
    }

    static func respond(_ outcome: LoginOutcome, to target: Target) -> HTTPResponse {
        let message = outcome.json
        // For the URL and cookie forms; the popup's script quotes the bytes as they are.
        func encodedMessage() -> String { PercentEncoding.encode(String(decoding: message, as: UTF8.self)) }
        if let redirect = target.redirectURI {
            let encoded = encodedMessage()
            if target.redirectType == "server" {
                let separator = redirect.containsBytes("?") ? "&" : "?"
                var response = HTTPResponse(status: 302)
                response.headers.add("Location", redirect + separator + "oauthio=" + encoded)
                response.headers.add("Cache-Control", "no-store")
                return response
            }
            // Before a fragment marker OAuth.io uses '#oauthio=', inside one '&oauthio='.
            let separator = redirect.containsBytes("#") ? "&oauthio=" : "#oauthio="
            let destination = redirect + separator + encoded
            let script = "document.location.href = \(JSONString.quote(destination));"
            let fallback = "<p><a href=\"\(HTML.escape(destination))\">Continue</a></p>"
            return page(script: Array(script.utf8), body: fallback)
        }
        // The page's script, built as bytes: the message is already JSON text, quoted into it
        // straight from its bytes.
        let origin = target.origin
        var script: [UInt8] = []
        script.reserveCapacity(message.count + message.count / 4 + 320)
        script += "var msg = ".utf8
        message.withUnsafeBufferPointer { JSONString.append(utf8: $0, to: &script) }
        script += ";\nvar origin = ".utf8
        JSONString.append(origin, to: &script)
        script += ";\n".utf8
        if origin.hasPrefix("chrome-extension://") {
            let extensionID = String(origin.dropFirst("chrome-extension://".count))
            script += "chrome.runtime.sendMessage(".utf8
            JSONString.append(extensionID, to: &script)
            script += ", {data: msg});\nwindow.close();".utf8
        } else {
            script += """
                var opener = window.opener || (window.parent && window.parent.opener);
                if (opener) { opener.postMessage(msg, origin); }
                window.close();
                """.utf8
        }
        var response = page(
            script: script,
            body: "<p>Your browser does not support popups. <a href=\"\(HTML.escape(origin))\">Return to the site</a>.</p>")
        if let agent = target.userAgent, agent.containsBytes("MSIE") || agent.containsBytes("Trident") {
            // Old IE cannot postMessage across windows; /auth/iframe relays this cookie.
            response.headers.add("Set-Cookie", "oauthio_last=\(encodedMessage()); Path=/; Max-Age=1200")
            response.headers.add("P3P", #"CP="IDC DSP COR ADM DEVi TAIi PSA PSD IVAi IVDi CONi HIS OUR IND CNT""#)
        }
        return response
    }

    /// `/auth/iframe?d=ORIGIN`: polls the `oauthio_last` cookie and relays it to the parent.
    static func iframeRelay(origin: String) -> HTTPResponse {
        let script = """
            var origin = \(JSONString.quote(origin));
            function relay() {
              var match = document.cookie.match(/(?:^|; )oauthio_last=([^;]*)/);
              if (match) {
                parent.postMessage(decodeURIComponent(match[1].replace(/\\+/g, ' ')), origin);
                document.cookie = 'oauthio_last=; Path=/; Max-Age=0';
              }
            }
            setInterval(relay, 1000);
            """
        var response = page(script: Array(script.utf8), body: "")
        response.headers.add("P3P", #"CP="IDC DSP COR ADM DEVi TAIi PSA PSD IVAi IVDi CONi HIS OUR IND CNT""#)
        return response
    }

    private static func page(script: [UInt8], body: String) -> HTTPResponse {
        let nonce = (try? SecureRandom.identifier()) ?? "gatehouse"
        var html: [UInt8] = []
        html.reserveCapacity(script.count + body.utf8.count + 192)
        html += "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Signing in</title></head>\n<body>".utf8
        html += body.utf8
        html += "\n<script nonce=\"".utf8
        html += nonce.utf8
        html += "\">\n".utf8
        html += script
        html += "\n</script>\n</body></html>".utf8
        var headers = HTTPHeaders()
        headers.add("Content-Type", "text/html; charset=utf-8")
        headers.add("Cache-Control", "no-store")
        headers.add("Content-Security-Policy", "default-src 'none'; script-src 'nonce-\(nonce)'; base-uri 'none'; form-action 'none'")
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("Referrer-Policy", "no-referrer")
        return HTTPResponse(status: 200, headers: headers, body: html)
    }
}

/// HTML text and attribute escaping. The five characters it replaces are ASCII, so it works
/// on UTF-8 bytes: walking `Character`s (grapheme breaking) cost more than the page around it.
enum HTML {
    static func escape(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): out.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): out.append(contentsOf: "&#39;".utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
