/// Tokens Apple itself signed, with the public keys Apple published for them at
/// https://appleid.apple.com/auth/keys (apple.md §6 lists them as the end-to-end known answers).
/// Both are public data: an identity token for a test Services ID and a `consent-revoked`
/// notification, each verifiable only at a clock inside its validity window.
enum AppleKnownAnswers {
    /// Apple's key set with the two signing keys these tokens name (kid `AIDOPK1` and `fh6Bs8C`).
    static let keySet = """
        {"keys":[
        {"kty":"RSA","kid":"AIDOPK1","use":"sig","alg":"RS256","e":"AQAB","n":"lxrwmuYSAsTfn-lUu4goZSXBD9ackM9OJuwUVQHmbZo6GW4Fu_auUdN5zI7Y1dEDfgt7m7QXWbHuMD01HLnD4eRtY-RNwCWdjNfEaY_esUPY3OVMrNDI15Ns13xspWS3q-13kdGv9jHI28P87RvMpjz_JCpQ5IM44oSyRnYtVJO-320SB8E2Bw92pmrenbp67KRUzTEVfGU4-obP5RZ09OxvCr1io4KJvEOjDJuuoClF66AT72WymtoMdwzUmhINjR0XSqK6H0MdWsjw7ysyd_JhmqX5CAaT9Pgi0J8lU_pcl215oANqjy7Ob-VMhug9eGyxAWVfu_1u6QJKePlE-w"},
        {"kty":"RSA","kid":"fh6Bs8C","use":"sig","alg":"RS256","e":"AQAB","n":"u704gotMSZc6CSSVNCZ1d0S9dZKwO2BVzfdTKYz8wSNm7R_KIufOQf3ru7Pph1FjW6gQ8zgvhnv4IebkGWsZJlodduTC7c0sRb5PZpEyM6PtO8FPHowaracJJsK1f6_rSLstLdWbSDXeSq7vBvDu3Q31RaoV_0YlEzQwPsbCvD45oVy5Vo5oBePUm4cqi6T3cZ-10gr9QJCVwvx7KiQsttp0kUkHM94PlxbG_HAWlEZjvAlxfEDc-_xZQwC6fVjfazs3j1b2DZWsGmBRdx1snO75nM7hpyRRQB4jVejW9TuZDtPtsNadXTr9I5NjxPdIYMORj9XKEh44Z73yfv0gtw"}
        ]}
        """

    /// An identity token for `jp.yauth.signin.service2`, issued at 1559709290, valid ten minutes.
    static let identityToken = [
        "eyJraWQiOiJBSURPUEsxIiwiYWxnIjoiUlMyNTYifQ.eyJpc3MiOiJodHRwczovL2FwcGxlaWQuYXBwbGUuY29tIiwiYXVkIjoia",
        "nAueWF1dGguc2lnbmluLnNlcnZpY2UyIiwiZXhwIjoxNTU5NzA5ODkwLCJpYXQiOjE1NTk3MDkyOTAsInN1YiI6IjAwMDcyMy4yN",
        "WRhOGJlMzMyOTY0OTkxODk4NjMwOTQ3MjAyZmVmMC4wNDAyIiwiYXRfaGFzaCI6InpqUmlUN2QzVHFRNVM3cEZkbzZxWGcifQ.jD",
        "V-AVFM-Yx_lxc-hsJNF2mgD2PoRlQ8SJjharKom87pIKR1frQfaY_apO-AxyDrhvB3qOdfhZql08EHBHNWATlX3l6sAKL-bUPH6b",
        "zHxIZTWHZ9IOimPyvTOJNFyJWLsm6lGcqemKB1UQG2MQ06lI9qc6C6T8_obv2HPJ-Sm8OBE9z-CDyKGcFZ-R8b2Ut6TibmRyQ-km",
        "B7na6ay9kGXm56I_TeA2QCMJGKH_X8C2M7kBPsO_WrYuogA3tnWLT8wi0TPD5zKnnBH0bXLgjeyE2lYRgboQttX6WqTdR0dN-mLi",
        "8ShTPEGUCkC7_jFJH9XpC7LfCeKl9tD3qzC_Dx1Q"
    ].joined()
    static let identityTokenIssuedAt: Int64 = 1_559_709_290

    /// A server-to-server notification for `jp.yauth.signin.app`; `events` is a JSON string.
    static let notification = [
        "eyJraWQiOiJmaDZCczhDIiwiYWxnIjoiUlMyNTYifQ.eyJpc3MiOiJodHRwczovL2FwcGxlaWQuYXBwbGUuY29tIiwiYXVkIjoia",
        "nAueWF1dGguc2lnbmluLmFwcCIsImV4cCI6MTY1NzcwMzQ5MiwiaWF0IjoxNjU3NjE3MDkyLCJqdGkiOiJTMjVjQjBQYkhzNnk5N",
        "2dZWW1neWRRIiwiZXZlbnRzIjoie1widHlwZVwiOlwiY29uc2VudC1yZXZva2VkXCIsXCJzdWJcIjpcIjAwMDc2OC42MTY2ZjAzM",
        "TE2NzE0MWU2OTU2OTgyMzk5NTlmNTkxYS4xNTIxXCIsXCJldmVudF90aW1lXCI6MTY1NzYxNzA2MzAxMn0ifQ.mISnuaalVknFGR",
        "HBwPIkN26n78uBW2uicijX2R_5myHrepPrNGhj1V0VRBFHPts_MZ5ofrqJ1y5ZxNHcuahv5bp7ytrAOslnBCaTaxQXZu2DWgiOw0",
        "I1XmBJ9zdZZbsWr8Godwv4PX933SdJuaevpcQDLkDxd33vFfNm9Xk_cotKQ12PjqmP535d94cppyVKE-APyYTpTxC7A4f2Lrf4Ok",
        "ka4A-62CgjYqFA4txhNyAvP7Ir-6AlHdnn9ASWwKGysZW987h6PhZNQJcOYSDgKXS7m5rw2noksjhWw6qt7ggP3Lm-b3PqY1Am0v",
        "Ikx_biCUvnHBjWXwCkXFQDNbPRsg"
    ].joined()
    static let notificationIssuedAt: Int64 = 1_657_617_092
}
