package io.redlockd.client;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where and how to connect: the address, the bearer token and TLS, from what was given or else the
 * environment, read as redlockctl reads it (REDLOCKD_ADDR, REDLOCKD_TOKEN, REDLOCKD_CA,
 * REDLOCKD_CERT with REDLOCKD_KEY).
 */
final class Settings {
  /** The sidecar on loopback. */
  static final String DEFAULT_ADDR = "127.0.0.1:7420";

  final String target;
  final String token;
  final Tls tls;

  private Settings(String target, String token, Tls tls) {
    this.target = target;
    this.token = token;
    this.tls = tls;
  }

  /**
   * What was given (null: not given), else what {@code env} says. {@code addr} is host:port,
   * http://host:port or https://host:port (TLS with the system's roots unless tls or REDLOCKD_CA
   * says otherwise).
   */
  static Settings resolve(String addr, String token, Tls tls, Map<String, String> env) {
    if (addr == null) {
      addr = nonEmpty(env.get("REDLOCKD_ADDR"));
    }
    if (addr == null) {
      addr = DEFAULT_ADDR;
    }
    if (token == null) {
      token = nonEmpty(env.get("REDLOCKD_TOKEN"));
    }
    String ca = nonEmpty(env.get("REDLOCKD_CA"));
    String cert = nonEmpty(env.get("REDLOCKD_CERT"));
    String key = nonEmpty(env.get("REDLOCKD_KEY"));
    if (tls == null && (ca != null || cert != null || key != null)) {
      if ((cert == null) != (key == null)) {
        throw new InvalidArgumentException("REDLOCKD_CERT and REDLOCKD_KEY must be set together");
      }
      tls = Tls.fromFiles(path(ca), path(cert), path(key));
    }
    if (addr.startsWith("https://")) {
      addr = addr.substring("https://".length());
      if (tls == null) {
        tls = Tls.systemRoots();
      }
    } else if (addr.startsWith("http://")) {
      if (tls != null) {
        throw new InvalidArgumentException(
            "TLS settings need an https:// address (or host:port), not " + addr);
      }
      addr = addr.substring("http://".length());
    }
    while (addr.endsWith("/")) {
      addr = addr.substring(0, addr.length() - 1);
    }
    if (addr.isEmpty()) {
      throw new InvalidArgumentException("invalid address: empty; it must be host:port");
    }
    if (token != null && (token.isEmpty() || !token.chars().allMatch(c -> c >= 0x20 && c < 0x7f))) {
      throw new InvalidArgumentException(
          "invalid token: must be non-empty printable ASCII (it is sent as a header)");
    }
    return new Settings(addr, token, tls);
  }

  ChannelCredentials credentials() {
    if (tls == null) {
      return InsecureChannelCredentials.create();
    }
    TlsChannelCredentials.Builder builder = TlsChannelCredentials.newBuilder();
    try {
      if (tls.ca != null) {
        builder.trustManager(new ByteArrayInputStream(tls.ca));
      }
      if (tls.cert != null) {
        builder.keyManager(new ByteArrayInputStream(tls.cert), new ByteArrayInputStream(tls.key));
      }
    } catch (IOException | IllegalArgumentException e) {
      throw new InvalidArgumentException("invalid tls: " + e.getMessage(), e);
    }
    return builder.build();
  }

  private static String nonEmpty(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  private static Path path(String s) {
    return s == null ? null : Path.of(s);
  }
}
