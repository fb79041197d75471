// The JOSE module: JWS, JWK and JWT verification.
