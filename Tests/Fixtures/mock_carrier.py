#!/usr/bin/env python3
"""Mock of nine carrier one-click login vendors' token -> phone APIs, for Gatehouse's tests.

One server answers every vendor under its own path prefix, speaking the wire format
carrier.md documents for it: it recomputes and checks each request's signature (or opens the
envelope) exactly as the vendor does, and answers with the phone number protected as the
vendor protects it. Device tokens are single use and minted through a `/_` helper, since no
handset is at hand:

    POST /_token   {"vendor": "emay", "phone": "13800138000", "behaviour": "ok", "delay": 0}
                   -> {"token", "process_id", "op_token", "access_token"}
                   (with "count": n -> {"tokens": [n such objects]}, for benchmarks)
                   behaviour: ok | expired | garbage (a body that is not JSON) |
                              wrongkey (phone encrypted under another key) | slow (sleep `delay` s)
    GET  /_stats   -> {"total", "requests": {token: count}, "rejected": {reason: count}}
    POST /_reset

    /emay/quickLogin/login                        Emay envelope: AES-128-ECB(gzip(JSON)), `result` header
    /geetest/check_phone                          Geetest OneLogin, HMAC-SHA256 sign, AES-256-CBC phone
    /aliyun/                                      Aliyun Dypnsapi GetMobile, RPC v1 HMAC-SHA1 signature
    /shanyan/open/flashsdk/mobile-query           Shanyan, HMAC-SHA256 over sorted k+v, AES-128-CBC phone
    /jverification/v1/web/loginTokenVerify        JVerification, HTTP Basic, RSA PKCS#1 v1.5 phone
    /mobtech/auth/auth/sdkClientFreeLogin         MobTech, MD5 over sorted k=v&..+secret, DES-CBC record
    /cmcc/unisdk/rsapi/loginTokenValidate         China Mobile, upper MD5 of the fixed field order
    /tencent/v5/rapidauth/validate                Tencent, SHA-256 sig, sdkappid/random in the URL
    /yidun/v1/oneclick/check                      NetEase Yidun, MD5 over sorted k+v + secretKey

Python 3 standard library only (AES written out below; single DES goes through the openssl
command line tool, as only MobTech needs it). All state is in memory.

    python3 mock_carrier.py [--host 127.0.0.1] [--port 0] [--exit-on-stdin-eof] [--verbose]
    python3 mock_carrier.py --selftest
"""

import base64
import gzip
import hashlib
import hmac
import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from mock_common import MockHandler, MockState, json_bytes, make_mock_server, parse_arguments, serve  # noqa: E402

# --- Registered credentials (test constants, mirrored by MockCarrier.swift) ----------------

CREDENTIALS = {
    "emay": {"appId": "EMAY-TEST-APP-01", "secretKey": "ABCDEFGH12345678"},
    "geetest": {"appId": "zoekwui1hnmg49x5fwzf5la0ml5dziwn", "appKey": "gywzffojtnzl0vd6kcut8fcgyud5wg49"},
    "aliyun": {"accessKeyId": "testid", "accessKeySecret": "testsecret"},
    "shanyan": {"appId": "xnFiQUGP", "appKey": "shanyanAppKey001"},
    "jverification": {"appKey": "7d431e42dfa6a6d693ac2d04", "masterSecret": "5e987ac6d2e04d95a9d8f0d1"},
    "mobtech": {"appKey": "2f2d7j9wf8a40", "appSecret": "9ea05374746c988ab3373112b2ba9289"},
    "cmcc": {"appId": "300011111111", "appKey": "APPKEY0123456789"},
    "tencent": {"sdkAppId": "1400000000", "appKey": "5f03a35d00ee52a21327ab048186a2c4"},
    "yidun": {"secretId": "SECRETID", "secretKey": "SECRETKEY", "businessId": "BIZID"},
}
WRONG_KEY_16 = b"WRONGKEY87654321"

# The public half of carrier.md's G8 test key (1024-bit): JVerification encrypts phones with
# the key the developer registered; Gatehouse's keyset holds the private half.
RSA_N = int(
    "A91EE3648238DB0A6543B4A01C216FFB7D508AE8031D1D6D91EBCD2F98C6AA993349B353A7B50111381C4EF9586E3CB1AC4C8134"
    "7BB5690FBC9F1297FE56AE7D803432EE06BA23707900F6EBD7A1E21CFB6240D85ED0247C4B630992ABFD7B12EC1A5EA3B4D4408C"
    "66A9489E9C3FA92099D5699BBF4EA948A4D8F4807D6F53F7", 16)
RSA_E = 65537

# --- AES (FIPS 197), small and slow but enough for a few blocks per request ----------------


def _aes_tables():
    sbox = [0] * 256
    p = q = 1
    while True:
        p = (p ^ (p << 1) ^ (0x1B if p & 0x80 else 0)) & 0xFF
        q ^= q << 1
        q ^= q << 2
        q ^= q << 4
        q &= 0xFF
        if q & 0x80:
            q ^= 0x09
        rot = lambda x, s: ((x << s) | (x >> (8 - s))) & 0xFF  # noqa: E731
        sbox[p] = q ^ rot(q, 1) ^ rot(q, 2) ^ rot(q, 3) ^ rot(q, 4) ^ 0x63
        if p == 1:
            break
    sbox[0] = 0x63
    inverse = [0] * 256
    for index, value in enumerate(sbox):
        inverse[value] = index
    return sbox, inverse


SBOX, INV_SBOX = _aes_tables()


def _gmul(a, b):
    result = 0
    while b:
        if b & 1:
            result ^= a
        a = ((a << 1) ^ (0x1B if a & 0x80 else 0)) & 0xFF
        b >>= 1
    return result


MUL = {k: [_gmul(x, k) for x in range(256)] for k in (2, 3, 9, 11, 13, 14)}


def _expand_key(key):
    nk = len(key) // 4
    if len(key) not in (16, 24, 32):
        raise ValueError("AES key must be 16, 24 or 32 bytes")
    rounds = nk + 6
    words = [list(key[4 * i:4 * i + 4]) for i in range(nk)]
    rcon = 1
    for i in range(nk, 4 * (rounds + 1)):
        temp = list(words[i - 1])
        if i % nk == 0:
            temp = temp[1:] + temp[:1]
            temp = [SBOX[b] for b in temp]
            temp[0] ^= rcon
            rcon = _gmul(rcon, 2)
        elif nk > 6 and i % nk == 4:
            temp = [SBOX[b] for b in temp]
        words.append([a ^ b for a, b in zip(words[i - nk], temp)])
    return [sum(words[4 * r:4 * r + 4], []) for r in range(rounds + 1)]


def _encrypt_block(keys, block):
    s = [a ^ b for a, b in zip(block, keys[0])]
    for r in range(1, len(keys)):
        s = [SBOX[b] for b in s]
        s = [s[(i % 4) + 4 * (((i // 4) + (i % 4)) % 4)] for i in range(16)]
        if r != len(keys) - 1:
            m2, m3 = MUL[2], MUL[3]
            t = []
            for c in range(4):
                a0, a1, a2, a3 = s[4 * c:4 * c + 4]
                t += [m2[a0] ^ m3[a1] ^ a2 ^ a3, a0 ^ m2[a1] ^ m3[a2] ^ a3, a0 ^ a1 ^ m2[a2] ^ m3[a3], m3[a0] ^ a1 ^ a2 ^ m2[a3]]
            s = t
        s = [a ^ b for a, b in zip(s, keys[r])]
    return bytes(s)


def _decrypt_block(keys, block):
    s = [a ^ b for a, b in zip(block, keys[-1])]
    for r in range(len(keys) - 2, -1, -1):
        s = [s[(i % 4) + 4 * (((i // 4) - (i % 4)) % 4)] for i in range(16)]
        s = [INV_SBOX[b] for b in s]
        s = [a ^ b for a, b in zip(s, keys[r])]
        if r != 0:
            m9, m11, m13, m14 = MUL[9], MUL[11], MUL[13], MUL[14]
            t = []
            for c in range(4):
                a0, a1, a2, a3 = s[4 * c:4 * c + 4]
                t += [m14[a0] ^ m11[a1] ^ m13[a2] ^ m9[a3], m9[a0] ^ m14[a1] ^ m11[a2] ^ m13[a3],
                      m13[a0] ^ m9[a1] ^ m14[a2] ^ m11[a3], m11[a0] ^ m13[a1] ^ m9[a2] ^ m14[a3]]
            s = t
    return bytes(s)


def pkcs7_pad(data, size=16):
    n = size - len(data) % size
    return data + bytes([n]) * n


def pkcs7_unpad(data, size=16):
    if not data or len(data) % size:
        raise ValueError("not whole blocks")
    n = data[-1]
    if n < 1 or n > size or data[-n:] != bytes([n]) * n:
        raise ValueError("bad padding")
    return data[:-n]


def aes_encrypt(key, data, iv=None):
    keys = _expand_key(key)
    data = pkcs7_pad(data)
    out, previous = b"", iv
    for i in range(0, len(data), 16):
        block = data[i:i + 16]
        if previous is not None:
            block = bytes(a ^ b for a, b in zip(block, previous))
        encrypted = _encrypt_block(keys, block)
        out += encrypted
        if previous is not None:
            previous = encrypted
    return out


def aes_decrypt(key, data, iv=None):
    if not data or len(data) % 16:
        raise ValueError("not whole blocks")
    keys = _expand_key(key)
    out, previous = b"", iv
    for i in range(0, len(data), 16):
        block = data[i:i + 16]
        plain = _decrypt_block(keys, block)
        if previous is not None:
            plain = bytes(a ^ b for a, b in zip(plain, previous))
            previous = block
        out += plain
    return pkcs7_unpad(out)


def des_cbc_encrypt(key, iv, data):
    """Single DES through `openssl enc` (the legacy provider), MobTech only."""
    result = subprocess.run(
        ["openssl", "enc", "-des-cbc", "-provider", "legacy", "-provider", "default", "-K", key.hex(), "-iv", iv.hex()],
        input=data, capture_output=True, check=True, timeout=10)
    return result.stdout


def rsa_encrypt(message):
    """RSAES-PKCS1-v1_5 (RFC 8017 section 7.2.1) with the registered public key."""
    k = (RSA_N.bit_length() + 7) // 8
    padding = b""
    while len(padding) < k - 3 - len(message):
        byte = secrets.token_bytes(1)
        if byte != b"\x00":
            padding += byte
    em = b"\x00\x02" + padding + b"\x00" + message
    return pow(int.from_bytes(em, "big"), RSA_E, RSA_N).to_bytes(k, "big")


def emay_key(secret):
    """UTF-8 of the secret key, truncated or space-padded to 16 bytes (AES-128)."""
    return secret.encode("utf-8")[:16].ljust(16, b" ")


# --- State --------------------------------------------------------------------------------


class CarrierState(MockState):
    def __init__(self, host):
        super().__init__(host)
        self.reset()

    def reset(self):
        with self.lock:
            self.tokens = {}
            self.requests = {}
            self.rejected = {}
            self.total = 0

    def mint(self, vendor, phone, behaviour, delay):
        with self.lock:
            token = "%s-%s" % (vendor, secrets.token_hex(12))
            record = {
                "vendor": vendor, "phone": phone, "behaviour": behaviour, "delay": delay, "used": False,
                "expires": time.time() + (-1 if behaviour == "expired" else 120),
                "process_id": secrets.token_hex(16), "op_token": "op-" + secrets.token_hex(8),
                "access_token": "acc-" + secrets.token_hex(8),
            }
            self.tokens[token] = record
            return token, record

    def reject(self, reason):
        with self.lock:
            self.rejected[reason] = self.rejected.get(reason, 0) + 1

    def consume(self, token):
        """Counts the request and applies single use: (record, None) or (record|None, why)."""
        with self.lock:
            self.total += 1
            if token:
                self.requests[token] = self.requests.get(token, 0) + 1
            record = self.tokens.get(token)
            if record is None:
                return None, "unknown"
            if record["behaviour"] == "expired" or time.time() > record["expires"]:
                return record, "expired"
            if record["used"]:
                return record, "used"
            record["used"] = True
            return record, None


# --- Handlers -----------------------------------------------------------------------------


class CarrierHandler(MockHandler):
    server_version = "MockCarrier/1"
    log_name = "mock_carrier"
    json_ascii = False
    ROUTES = {
        "/_token": ("control_token", ("POST",)),
        "/_stats": ("control_stats", ("GET",)),
        "/_reset": ("control_reset", ("POST",)),
        "/emay/quickLogin/login": ("emay", ("POST",)),
        "/geetest/check_phone": ("geetest", ("POST",)),
        "/aliyun/": ("aliyun", ("POST",)),
        "/shanyan/open/flashsdk/mobile-query": ("shanyan", ("POST",)),
        "/jverification/v1/web/loginTokenVerify": ("jverification", ("POST",)),
        "/mobtech/auth/auth/sdkClientFreeLogin": ("mobtech", ("POST",)),
        "/cmcc/unisdk/rsapi/loginTokenValidate": ("cmcc", ("POST",)),
        "/tencent/v5/rapidauth/validate": ("tencent", ("POST",)),
        "/yidun/v1/oneclick/check": ("yidun", ("POST",)),
    }

    # -- control --

    def control_token(self):
        spec = json.loads(self.body or b"{}")
        vendor = spec.get("vendor", "")
        if vendor not in CREDENTIALS:
            return self.send_json(400, {"error": "unknown vendor"})
        minted = []
        for _ in range(max(1, min(int(spec.get("count", 1)), 100000))):
            token, record = self.state.mint(vendor, spec.get("phone", "13800138000"), spec.get("behaviour", "ok"),
                                            float(spec.get("delay", 0)))
            minted.append({"token": token, "process_id": record["process_id"], "op_token": record["op_token"],
                           "access_token": record["access_token"]})
        if "count" in spec:
            return self.send_json(200, {"tokens": minted})
        self.send_json(200, minted[0])

    def control_stats(self):
        with self.state.lock:
            self.send_json(200, {"total": self.state.total, "requests": dict(self.state.requests),
                                 "rejected": dict(self.state.rejected)})

    def control_reset(self):
        self.state.reset()
        self.send_json(200, {})

    # -- helpers --

    def json_body(self):
        try:
            value = json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def form(self):
        pairs = self.form_params() or []
        return dict(pairs)

    def behave(self, record):
        """Applies `slow`; True when the answer must be a non-JSON page instead."""
        if record and record["behaviour"] == "slow":
            time.sleep(record["delay"])
        return bool(record and record["behaviour"] == "garbage")

    def garbage(self):
        self.send(502, b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")

    def refuse(self, reason, status, value, headers=()):
        self.state.reject(reason)
        self.send_json(status, value, headers)

    # -- Emay: the body is AES-128-ECB(secretKey, gzip(JSON)); the answer's `result` header says how it went --

    def emay_reply(self, result, body=b"", key=None):
        self.send(200, body, "application/octet-stream" if body else None, [("result", result)])

    def emay(self):
        creds = CREDENTIALS["emay"]
        if self.headers.get("appId") != creds["appId"]:
            self.state.reject("appid")
            return self.emay_reply("ERROR_APPID")
        key = emay_key(creds["secretKey"])
        try:
            plain = aes_decrypt(key, self.body)
            if (self.headers.get("gzip") or "").lower() == "on":
                plain = gzip.decompress(plain)
            request = json.loads(plain.decode("utf-8"))
        except (ValueError, OSError, EOFError):
            # A body that does not open under the app's secret key: wrong key or not Emay's format.
            self.state.reject("secretkey")
            return self.emay_reply("ERROR_SECRETKEY")
        now_ms = int(time.time() * 1000)
        request_time = request.get("requestTime")
        period = request.get("requestValidPeriod", 60)
        if not isinstance(request_time, int) or not isinstance(period, int) or request_time + period * 1000 < now_ms \
                or request_time > now_ms + 60000:
            self.state.reject("request_time")
            return self.emay_reply("ERROR_REQUEST_NO_VALID")
        record, why = self.state.consume(request.get("token"))
        if why:
            self.state.reject(why)
            return self.emay_reply({"unknown": "ERROR_TOKEN_INVALID", "expired": "ERROR_TOKEN_EXPIRED", "used": "ERROR_TOKEN_USED"}[why])
        if self.behave(record):
            return self.emay_reply("SUCCESS", aes_encrypt(key, gzip.compress(b"<html>maintenance</html>", mtime=0)))
        answer = json_bytes({"mobile": record["phone"]}, ensure_ascii=False)
        out_key = WRONG_KEY_16 if record["behaviour"] == "wrongkey" else key
        self.emay_reply("SUCCESS", aes_encrypt(out_key, gzip.compress(answer, mtime=0)))

    # -- Geetest OneLogin: sign = hex(HMAC-SHA256(app_key, app_id + "&&" + timestamp)) --

    def geetest(self):
        creds = CREDENTIALS["geetest"]
        body = self.json_body()
        if body is None:
            return self.refuse("not_json", 200, {"status": 12000, "error_msg": "process_id is empty"})
        for field, code in (("process_id", 12000), ("token", 12001), ("sign", 12002)):
            if not isinstance(body.get(field), str) or not body[field]:
                return self.refuse("missing_" + field, 200, {"status": code, "error_msg": field + " is empty"})
        if len(body["process_id"]) != 32:
            return self.refuse("process_id_length", 200, {"status": 12003, "error_msg": "process_id length error"})
        if "is_phone_encode" in body and not isinstance(body["is_phone_encode"], bool):
            return self.refuse("is_phone_encode", 200, {"status": 12004, "error_msg": "is_phone_encode must be bool"})
        timestamp = body.get("timestamp")
        if not isinstance(timestamp, str) or len(timestamp) != 13 or not timestamp.isdigit() \
                or abs(int(timestamp) - time.time() * 1000) > 600000:
            return self.refuse("timestamp", 200, {"status": 12005, "error_msg": "timestamp error"})
        expected = hmac.new(creds["appKey"].encode(), (creds["appId"] + "&&" + timestamp).encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, body["sign"]):
            return self.refuse("bad_signature", 200, {"status": 12109, "error_msg": "sign error", "result": "get phone failed"})
        record, why = self.state.consume(body["token"])
        if record is not None and record["process_id"] != body["process_id"]:
            return self.refuse("process_id", 200, {"status": 12100, "error_msg": "process_id not found"})
        if why:
            self.state.reject(why)
            code = {"unknown": 12100, "expired": 12100, "used": 12101}[why]
            return self.send_json(200, {"status": code, "error_msg": "token " + why, "result": "get phone failed"})
        if self.behave(record):
            return self.garbage()
        phone = record["phone"].encode()
        result = record["phone"]
        if body.get("is_phone_encode") is True:
            key = b"0" * 32 if record["behaviour"] == "wrongkey" else creds["appKey"].encode()
            result = aes_encrypt(key, phone, iv=b"0" * 16).hex()
        self.send_json(200, {"status": 200, "result": result, "charge": True})

    # -- Aliyun Dypnsapi GetMobile: RPC v1 signature --

    def aliyun(self):
        creds = CREDENTIALS["aliyun"]
        params = self.form()
        if params.get("Action") != "GetMobile" or params.get("Version") != "2017-05-25":
            return self.refuse("action", 400, {"Code": "InvalidAction.NotFound", "Message": "unknown action"})
        if params.get("AccessKeyId") != creds["accessKeyId"]:
            return self.refuse("access_key", 404, {"Code": "InvalidAccessKeyId.NotFound", "Message": "Specified access key is not found."})
        pe = lambda text: urllib.parse.quote(text, safe="~")  # noqa: E731
        canonical = "&".join(pe(k) + "=" + pe(v) for k, v in sorted(params.items()) if k != "Signature")
        string_to_sign = "POST&%2F&" + pe(canonical)
        expected = base64.b64encode(hmac.new((creds["accessKeySecret"] + "&").encode(), string_to_sign.encode(), hashlib.sha1).digest()).decode()
        if not hmac.compare_digest(expected, params.get("Signature", "")):
            return self.refuse("bad_signature", 400, {"Code": "SignatureDoesNotMatch", "Message": "Specified signature is not matched."})
        record, why = self.state.consume(params.get("AccessToken"))
        if why:
            self.state.reject(why)
            return self.send_json(200, {"Code": "isv.TOKEN_INVALID", "Message": "token invalid", "RequestId": "R-1"})
        if self.behave(record):
            return self.garbage()
        self.send_json(200, {"Code": "OK", "Message": "请求成功", "RequestId": "8906582E-6722",
                             "GetMobileResultDTO": {"Mobile": record["phone"]}})

    # -- Shanyan: sign = hex(HMAC-SHA256(appKey, concat of sorted name+value)) --

    def shanyan(self):
        creds = CREDENTIALS["shanyan"]
        params = self.form()
        if params.get("appId") != creds["appId"]:
            return self.refuse("appid", 200, {"code": "403000", "message": "appId error"})
        message = "".join(k + v for k, v in sorted(params.items()) if k != "sign")
        expected = hmac.new(creds["appKey"].encode(), message.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, params.get("sign", "").lower()):
            return self.refuse("bad_signature", 200, {"code": "403101", "message": "sign error"})
        record, why = self.state.consume(params.get("token"))
        if why:
            self.state.reject(why)
            return self.send_json(200, {"code": "400001", "message": "token " + why})
        if self.behave(record):
            return self.garbage()
        digest = hashlib.md5(creds["appKey"].encode()).hexdigest().encode()
        mobile = aes_encrypt(digest[:16], record["phone"].encode(), iv=digest[16:32]).hex()
        self.send_json(200, {"code": "200000", "message": "success", "chargeStatus": 1,
                             "data": {"mobileName": mobile, "tradeNo": secrets.token_hex(8)}})

    # -- JVerification: HTTP Basic appKey:masterSecret, phone RSA-encrypted with the registered key --

    def jverification(self):
        creds = CREDENTIALS["jverification"]
        expected = "Basic " + base64.b64encode((creds["appKey"] + ":" + creds["masterSecret"]).encode()).decode()
        if not hmac.compare_digest(expected, self.headers.get("Authorization", "")):
            return self.refuse("bad_signature", 401, {"code": 9011, "content": "auth failed"})
        body = self.json_body()
        if body is None or not isinstance(body.get("loginToken"), str):
            return self.refuse("parameters", 400, {"code": 9012, "content": "parameter invalid"})
        record, why = self.state.consume(body["loginToken"])
        if why:
            self.state.reject(why)
            return self.send_json(200, {"code": 9003, "content": "token is expired or not exist"})
        if self.behave(record):
            return self.garbage()
        phone = base64.b64encode(rsa_encrypt(record["phone"].encode())).decode()
        # The id exceeds 2^53, as JVerification's do: it must survive as raw, never as a phone.
        self.send(200, ('{"id":117270465679982592,"code":8000,"content":"get phone success","exID":%s,"phone":"%s"}'
                        % (json.dumps(body.get("exID")), phone)).encode(), "application/json")

    # -- MobTech: sign = md5(sorted k=v joined by & + appSecret), res = base64(DES-CBC(JSON)) --

    def mobtech(self):
        creds = CREDENTIALS["mobtech"]
        body = self.json_body()
        if body is None:
            return self.refuse("not_json", 200, {"status": 4119301, "res": None, "error": "数据校验失败"})
        if body.get("appkey") != creds["appKey"]:
            return self.refuse("appkey", 200, {"status": 4119330, "res": None, "error": "App没有初始化"})
        if not isinstance(body.get("timestamp"), int):
            return self.refuse("timestamp", 200, {"status": 4119343, "res": None, "error": "timestamp错误"})
        message = "&".join("%s=%s" % (k, v) for k, v in sorted(body.items()) if k != "sign") + creds["appSecret"]
        if not hmac.compare_digest(hashlib.md5(message.encode()).hexdigest(), str(body.get("sign", ""))):
            return self.refuse("bad_signature", 200, {"status": 4119342, "res": None, "error": "签名错误"})
        record, why = self.state.consume(body.get("token"))
        if record is not None and record["op_token"] != body.get("opToken"):
            return self.refuse("op_token", 200, {"status": 4119311, "res": None, "error": "token非法"})
        if why:
            self.state.reject(why)
            return self.send_json(200, {"status": 4119310, "res": None, "error": "token未找到"})
        if self.behave(record):
            return self.garbage()
        inner = json_bytes({"isValid": 1, "phone": record["phone"], "valid": True})
        res = base64.b64encode(des_cbc_encrypt(creds["appSecret"][:8].encode(), b"00000000", inner)).decode()
        self.send_json(200, {"error": None, "res": res, "seqid": "456484936150429696", "status": 200})

    # -- China Mobile: sign = UPPER(md5(appid+version+msgid+systemtime+strictcheck+token+appkey)) --

    def cmcc(self):
        creds = CREDENTIALS["cmcc"]
        body = self.json_body()
        if body is None or not all(isinstance(v, str) for v in body.values()):
            return self.refuse("parameters", 200, {"resultCode": "103102", "msisdn": ""})
        if body.get("appid") != creds["appId"] or body.get("version") != "2.0":
            return self.refuse("appid", 200, {"resultCode": "103103", "inresponseto": body.get("msgid", "")})
        systemtime = body.get("systemtime", "")
        if len(systemtime) != 17 or not systemtime.isdigit():
            return self.refuse("systemtime", 200, {"resultCode": "103102", "inresponseto": body.get("msgid", "")})
        fields = "".join(body.get(k, "") for k in ("appid", "version", "msgid", "systemtime", "strictcheck", "token"))
        expected = hashlib.md5((fields + creds["appKey"]).encode()).hexdigest().upper()
        if not hmac.compare_digest(expected, body.get("sign", "")):
            return self.refuse("bad_signature", 200, {"resultCode": "103101", "inresponseto": body.get("msgid", "")})
        record, why = self.state.consume(body.get("token"))
        if why:
            self.state.reject(why)
            return self.send_json(200, {"resultCode": "105312", "inresponseto": body.get("msgid", "")})
        if self.behave(record):
            return self.garbage()
        self.send_json(200, {"inresponseto": body.get("msgid", ""), "systemtime": systemtime, "resultCode": "103000",
                             "msisdn": record["phone"]})

    # -- Tencent: sig = hex(SHA256("appkey=..&random=..&time=..")), sdkappid and random in the URL --

    def tencent(self):
        creds = CREDENTIALS["tencent"]
        query = dict(self.query)
        body = self.json_body()
        if body is None:
            return self.refuse("not_json", 200, {"result": 1001, "errmsg": "json error"})
        if query.get("sdkappid") != creds["sdkAppId"]:
            return self.refuse("sdkappid", 200, {"result": 1002, "errmsg": "sdkappid error"})
        random = query.get("random", "")
        timestamp = body.get("time")
        if not isinstance(timestamp, (int, str)) or abs(int(timestamp) - time.time()) > 600:
            return self.refuse("time", 200, {"result": 1003, "errmsg": "time expired"})
        expected = hashlib.sha256(("appkey=%s&random=%s&time=%s" % (creds["appKey"], random, timestamp)).encode()).hexdigest()
        if not hmac.compare_digest(expected, str(body.get("sig", ""))):
            return self.refuse("bad_signature", 200, {"result": 1004, "errmsg": "sig verify failed"})
        record, why = self.state.consume(body.get("token"))
        if why:
            self.state.reject(why)
            return self.send_json(200, {"result": 1016, "errmsg": "token invalid"})
        if self.behave(record):
            return self.garbage()
        self.send_json(200, {"result": 0, "errmsg": "OK", "mobile": record["phone"]})

    # -- NetEase Yidun: signature = md5(concat of sorted name+value + secretKey) --

    def yidun(self):
        creds = CREDENTIALS["yidun"]
        params = self.form()
        if params.get("secretId") != creds["secretId"] or params.get("businessId") != creds["businessId"]:
            return self.refuse("secret_id", 200, {"code": 401, "msg": "secretId or businessId error"})
        message = "".join(k + v for k, v in sorted(params.items()) if k != "signature") + creds["secretKey"]
        if not hmac.compare_digest(hashlib.md5(message.encode()).hexdigest(), params.get("signature", "")):
            return self.refuse("bad_signature", 200, {"code": 413, "msg": "signature verify failed"})
        record, why = self.state.consume(params.get("token"))
        if record is not None and record["access_token"] != params.get("accessToken"):
            return self.refuse("access_token", 200, {"code": 200, "msg": "ok", "data": {"phone": None, "resultCode": "1"}})
        if why:
            self.state.reject(why)
            return self.send_json(200, {"code": 200, "msg": "ok", "data": {"phone": None, "resultCode": "2"}})
        if self.behave(record):
            return self.garbage()
        self.send_json(200, {"code": 200, "msg": "ok", "data": {"phone": record["phone"], "resultCode": "0"}})


def make_server(host, port, verbose):
    return make_mock_server(host, port, CarrierHandler, CarrierState(host), verbose)


# --- Self-test: the known answers of carrier.md section 12 against this file's primitives --


def selftest():
    assert aes_decrypt(b"gywzffojtnzl0vd6kcut8fcgyud5wg49", bytes.fromhex("be28dea08ee543320b1ef9e1bceb51e4"), b"0" * 16) == b"13333333333"
    assert aes_encrypt(b"32139f31fc733647b1e865ebaab277c2", b"13800138000", b"0" * 16).hex() == "805ab3dc30278060baaf4b84dfaf7827"
    assert aes_encrypt(b"ABCDEFGH12345678", b'{"mobile":"13800138000"}').hex() == \
        "3d6952c7ef4bf352a8b9f0b848f4c7f6f7d18e519a36d9f7dd54a8536c086571"
    digest = hashlib.md5(b"xnFiQUGP").hexdigest().encode()
    assert aes_encrypt(digest[:16], b"13800138000", digest[16:]).hex() == "8fb6537501b9b9d72b964351923ccdc4"
    assert base64.b64encode(des_cbc_encrypt(b"9ea05374", b"00000000", b'{"isValid":1,"phone":"13800138000","valid":true}')).decode() \
        == "zTxM7bo9fdIVBIJpT7oxWYJPfru8NCi+kR13fjAEOSJLvpNUtLE9lJ/5zJVzsPS3PiE56RGxCBw="
    assert hmac.new(b"gywzffojtnzl0vd6kcut8fcgyud5wg49", b"zoekwui1hnmg49x5fwzf5la0ml5dziwn&&1542355862990",
                    hashlib.sha256).hexdigest() == "6ef12cd35800607896a0e82b2a53955d679f97ff63e2a17954ddfbd3f7647501"
    # The wrong-key answer must fail to decrypt deterministically (padding), never yield a number.
    wrapped = aes_encrypt(WRONG_KEY_16, gzip.compress(json_bytes({"mobile": "13800138000"}), mtime=0))
    try:
        aes_decrypt(emay_key(CREDENTIALS["emay"]["secretKey"]), wrapped)
        raise AssertionError("the wrong-key envelope opened")
    except ValueError:
        pass
    print("selftest ok")
    return 0


def main(argv):
    args = parse_arguments(argv, "Mock of carrier one-click login vendors for tests.")
    if args.selftest:
        return selftest()
    return serve(lambda: make_server(args.host, args.port, args.verbose), args.exit_on_stdin_eof)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
