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
        /// The gateway is served over https, so its cookies can be `Secure`.
        var secureCookie: Bool
    }

    static func respond(_ outcome: LoginOutcome, to target: Target, status: Int = 200) -> HTTPResponse {
        let message = outcome.json
        if let redirect = target.redirectURI {
            // The popup's script quotes the message's bytes as they are; a URL carries it encoded.
            let encoded = PercentEncoding.encode(String(decoding: message, as: UTF8.self))
            if target.redirectType == "server" {
                var response = HTTPResponse(status: 302)
                response.headers.add("Location", serverRedirect(redirect, encodedMessage: encoded))
                response.headers.add("Cache-Control", "no-store")
                return response
            }
            // Before a fragment marker OAuth.io uses '#oauthio=', inside one '&oauthio='.
            let separator = redirect.containsBytes("#") ? "&oauthio=" : "#oauthio="
            let destination = redirect + separator + encoded
            let script = "document.location.href = \(JSONString.quote(destination));"
            let fallback = "<p><a href=\"\(HTML.escape(destination))\">Continue</a></p>"
            return page(script: Array(script.utf8), body: fallback, status: status)
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
        let link = status == 200 ? " <a href=\"\(HTML.escape(origin))\">Return to the site</a>." : ""
        var response = page(script: script, body: "<p>Your browser does not support popups.\(link)</p>", status: status)
        if let agent = target.userAgent, agent.containsBytes("MSIE") || agent.containsBytes("Trident") {
            // Old IE cannot postMessage across windows; /auth/iframe relays this cookie, only to
            // the origin recorded here. Script reads it, so it cannot be HttpOnly; it is sent
            // to the relay page alone, and a third-party frame needs SameSite=None (with Secure).
            let relayed = JSONValue.object(["origin": .string(origin), "message": .string(String(decoding: message, as: UTF8.self))])
            let flags = target.secureCookie ? "; Secure; SameSite=None" : ""
            let cookie = "oauthio_last=\(PercentEncoding.encode(relayed.jsonText)); Path=\(relayPath); Max-Age=1200\(flags)"
            response.headers.add("Set-Cookie", cookie)
            response.headers.add("P3P", p3p)
        }
        return response
    }

    private static let relayPath = "/auth/iframe"
    private static let p3p = #"CP="IDC DSP COR ADM DEVi TAIi PSA PSD IVAi IVDi CONi HIS OUR IND CNT""#

    /// A login refused before its app, page and redirect target were verified: the error text
    /// (never app data) posted to the page as the SDKs expect, or, when a redirect was asked
    /// for or the page is no web page, shown as a plain page, never redirected to.
    static func refuse(_ outcome: LoginOutcome, page origin: WebURL, redirectRequested: Bool, status: Int) -> HTTPResponse {
        guard !redirectRequested, origin.isWebPage else {
            let text = "<p>Sign-in could not start: \(HTML.escape(outcome.message ?? "error"))</p>"
            return page(script: nil, body: text, status: status, frameAncestors: "'none'")
        }
        let target = Target(origin: origin.origin, redirectURI: nil, redirectType: nil, userAgent: nil, secureCookie: false)
        return respond(outcome, to: target, status: status)
    }

    /// `redirect_uri` with `oauthio=` added to its query. It always carries a fragment of its
    /// own: a 302 without one inherits the fragment of the URL it answers, which on a chained
    /// login would be another login's `#oauthio=` result.
    static func serverRedirect(_ redirect: String, encodedMessage: String) -> String {
        let parts = redirect.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let base = parts[0]
        let separator = base.containsBytes("?") ? "&" : "?"
        return base + separator + "oauthio=" + encodedMessage + "#" + (parts.count > 1 ? parts[1] : "")
    }

    /// `/auth/iframe?d=ORIGIN`: polls the `oauthio_last` cookie and relays it to the parent,
    /// only when the login it holds was started from `ORIGIN`, and only to that origin; the
    /// page may be framed by that origin alone.
    static func iframeRelay(origin url: WebURL?) -> HTTPResponse {
        guard let url, url.isWebPage else {
            let text = "<p>The d parameter must be the page's http or https origin.</p>"
            return page(script: nil, body: text, status: 400, frameAncestors: "'none'")
        }
        let origin = url.origin
        let script = """
            var origin = \(JSONString.quote(origin));
            function relay() {
              var match = document.cookie.match(/(?:^|; )oauthio_last=([^;]*)/);
              if (!match) { return; }
              var relayed;
              try { relayed = JSON.parse(decodeURIComponent(match[1].replace(/\\+/g, ' '))); } catch (e) { return; }
              if (relayed.origin !== origin) { return; }
              document.cookie = 'oauthio_last=; Path=\(relayPath); Max-Age=0';
              parent.postMessage(relayed.message, relayed.origin);
            }
            setInterval(relay, 1000);
            """
        var response = page(script: Array(script.utf8), body: "", frameAncestors: origin)
        response.headers.add("X-Frame-Options", "ALLOW-FROM " + origin)
        response.headers.add("P3P", p3p)
        return response
    }

    private static func page(script: [UInt8]?, body: String, status: Int = 200, frameAncestors: String? = nil) -> HTTPResponse {
        let nonce = (try? SecureRandom.identifier()) ?? "gatehouse"
        var html: [UInt8] = []
        html.reserveCapacity((script?.count ?? 0) + body.utf8.count + 192)
        html += "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Signing in</title></head>\n<body>".utf8
        html += body.utf8
        if let script {
            html += "\n<script nonce=\"".utf8
            html += nonce.utf8
            html += "\">\n".utf8
            html += script
            html += "\n</script>".utf8
        }
        html += "\n</body></html>".utf8
        var headers = HTTPHeaders()
        headers.add("Content-Type", "text/html; charset=utf-8")
        headers.add("Cache-Control", "no-store")
        // Result pages may be framed (the SDKs' iframe modes); the relay and refusals say by whom.
        let framing = frameAncestors.map { "; frame-ancestors " + $0 } ?? ""
        headers.add(
            "Content-Security-Policy", "default-src 'none'; script-src 'nonce-\(nonce)'; base-uri 'none'; form-action 'none'" + framing)
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("Referrer-Policy", "no-referrer")
        return HTTPResponse(status: status, headers: headers, body: html)
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
