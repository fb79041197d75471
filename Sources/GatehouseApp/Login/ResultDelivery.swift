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
        if let redirect = target.redirectURI {
            if target.redirectType == "server" {
                let separator = redirect.containsBytes("?") ? "&" : "?"
                var response = HTTPResponse(status: 302)
                response.headers.add("Location", redirect + separator + "oauthio=" + PercentEncoding.encode(message))
                response.headers.add("Cache-Control", "no-store")
                return response
            }
            // Before a fragment marker OAuth.io uses '#oauthio=', inside one '&oauthio='.
            let separator = redirect.containsBytes("#") ? "&oauthio=" : "#oauthio="
            let destination = redirect + separator + PercentEncoding.encode(message)
            let script = "document.location.href = \(JSONString.quote(destination));"
            let fallback = "<p><a href=\"\(HTML.escape(destination))\">Continue</a></p>"
            return page(script: script, body: fallback)
        }
        let origin = target.origin
        var script = "var msg = \(JSONString.quote(message));\nvar origin = \(JSONString.quote(origin));\n"
        if origin.hasPrefix("chrome-extension://") {
            let extensionID = String(origin.dropFirst("chrome-extension://".count))
            script += "chrome.runtime.sendMessage(\(JSONString.quote(extensionID)), {data: msg});\nwindow.close();"
        } else {
            script += """
                var opener = window.opener || (window.parent && window.parent.opener);
                if (opener) { opener.postMessage(msg, origin); }
                window.close();
                """
        }
        var response = page(
            script: script,
            body: "<p>Your browser does not support popups. <a href=\"\(HTML.escape(origin))\">Return to the site</a>.</p>")
        if let agent = target.userAgent, agent.containsBytes("MSIE") || agent.containsBytes("Trident") {
            // Old IE cannot postMessage across windows; /auth/iframe relays this cookie.
            response.headers.add("Set-Cookie", "oauthio_last=\(PercentEncoding.encode(message)); Path=/; Max-Age=1200")
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
        var response = page(script: script, body: "")
        response.headers.add("P3P", #"CP="IDC DSP COR ADM DEVi TAIi PSA PSD IVAi IVDi CONi HIS OUR IND CNT""#)
        return response
    }

    private static func page(script: String, body: String) -> HTTPResponse {
        let nonce = (try? SecureRandom.identifier()) ?? "gatehouse"
        let html = """
            <!DOCTYPE html>
            <html><head><meta charset="utf-8"><title>Signing in</title></head>
            <body>\(body)
            <script nonce="\(nonce)">
            \(script)
            </script>
            </body></html>
            """
        var headers = HTTPHeaders()
        headers.add("Content-Type", "text/html; charset=utf-8")
        headers.add("Cache-Control", "no-store")
        headers.add("Content-Security-Policy", "default-src 'none'; script-src 'nonce-\(nonce)'; base-uri 'none'; form-action 'none'")
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("Referrer-Policy", "no-referrer")
        return HTTPResponse(status: 200, headers: headers, body: Array(html.utf8))
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
