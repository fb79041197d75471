import Foundation

extension OpenSSLTool {
    /// A fresh self-signed P-256 certificate for 127.0.0.1, valid for a day, and its key, as
    /// PEM files in the tool's directory (removed with the tool). No trust store knows it.
    public func makeSelfSignedCertificate(
        certificate: String = "cert.pem", key: String = "key.pem", subjectAltName: String = "IP:127.0.0.1"
    ) throws -> (certificate: String, key: String) {
        try run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=\(subjectAltName)",
            "-keyout", key, "-out", certificate,
        ])
        return (path(certificate), path(key))
    }
}
